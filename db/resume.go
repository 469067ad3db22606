package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"runsdesk/runtime"
)

const sqlClaimForResume = updateRunByUID + `
	SET status = 'running', claimed_by = ?, lease_expires = ?, queued_request = ?,
	    suspended_at = 0, pending_tools = '', tstamp = ?
	WHERE uid = ? AND status = ? AND suspended_at = ? AND SHA2(suspended_state, 256) = ?`

// sqlClaimForResumeWithoutDrafts is sqlClaimForResume of a pause read without drafts
// (has_drafts = 0), so the claim need not remove any: a draft saved since makes it miss.
const sqlClaimForResumeWithoutDrafts = sqlClaimForResume + ` AND has_drafts = 0`

// errStaleSequence marks a claim whose event hit the unique sequence at the sequence read
// with the run: the claim is retried with MAX(sequence).
var errStaleSequence = errors.New("stale event sequence")

func isStaleSequence(err error) bool { return errors.Is(err, errStaleSequence) }

const (
	sqlInsertDecisions = `INSERT INTO tx_runsdesk_decision
	(run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate, arguments, reason) VALUES `
	sqlDecisionRow    = `(?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertDecision = sqlInsertDecisions + sqlDecisionRow
)

// ClaimForResume claims a pause with its decision and event, in one transaction on this run's rows:
//
//  1. guarded UPDATE of the pause c.Read: status=c.Read.Status ∧ suspended_at and
//     suspended_state (compared by SHA-256) still as read → running, claimed_by/lease_expires
//     from c.Lease, queued_request=c.Continuation, suspended_at=0, pending_tools emptied
//     (suspended_state kept); no row ⇒ runtime.ErrGuard (claimed by someone else, finished,
//     or paused again since it was read);
//     and the configuration's `decided` notifications (enqueueNotifications; to the rules of
//     c.Configuration when set, else to those read in the transaction);
//  2. INSERT of c.Decision (Run set to c.Read.UID; Crdate defaults to c.Lease.Now); a
//     decision already stored under the same (run, idempotency key) ⇒ an error matching both
//     ErrDuplicateDecision and runtime.ErrGuard;
//  3. c.Event appended at MAX(sequence)+1 (Run set to c.Read.UID; Now defaults to
//     c.Lease.Now), taken from FindByUUID's read of the run when this Store made it (a
//     sequence gone stale meanwhile hits the unique sequence and the whole claim is retried
//     with MAX); an event that cannot be written (or whose payload is not JSON) ⇒ an error
//     wrapping runtime.ErrEventNotRecorded; before it, one use of each standing approval of
//     c.RuleUses is counted by a guarded UPDATE (in force at c.Lease.Now, uses below
//     max_uses), a rule that no longer counts ⇒ an error wrapping runtime.ErrRuleNotInForce,
//     and the pause's `waiting` notifications no dispatcher has claimed removed (a turn a
//     standing approval approves at once told nobody it waits: Suspension.WaitingDue);
//  4. for an input pause, every draft of the run removed (deleteRunDrafts): in the batch, only
//     when the read brought has_drafts = 1, else the batch's claim is guarded by
//     has_drafts = 0, so a draft saved since the read makes it fall back to these steps;
//  5. when c.Audit is set, its audit row (time c.Lease.Now, run c.Read.UUID; fields cleaned
//     and cut as Audit.Record does).
//
// Any failure rolls everything back, so the run stays as it was (still waiting, no decision,
// no event). On success this Store remembers the run's next event sequence for the
// continuation's appends (sequenceHints), and it returns the post-claim run (c.Read with the claim's columns, which
// is the stored row: the guard proves nothing else changed) and the stored event. A
// c.Read.Status that is not a pause is refused before any write.
func (s *Store) ClaimForResume(ctx context.Context, c runtime.ResumeClaim) (runtime.Run, runtime.Event, error) {
	read := c.Read
	if !read.Status.Waiting() {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: status %q is not a pause", read.UID, read.Status)
	}
	payload, err := eventPayload(c.Event.Payload)
	if err != nil {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w: %w", read.UID, runtime.ErrEventNotRecorded, err)
	}
	d := c.Decision
	if d.Crdate == 0 {
		d.Crdate = c.Lease.Now
	}
	e := c.Event
	e.Run = read.UID
	if e.Now == 0 {
		e.Now = c.Lease.Now
	}
	continuation, err := s.sealFor(ctx, s.db, read.UID, read.UUID, sealedQueuedRequest, c.Continuation)
	if err != nil {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w", read.UID, err)
	}
	stamp := stateStamp(read)
	arguments, reason, err := s.sealDecision(d, read.UUID)
	if err != nil {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w", read.UID, err)
	}

	var known *notifySubject
	if c.Configuration != nil {
		sub := subjectOf(read.UUID, c.Configuration)
		known = &sub
	}
	hint := s.paused.take(read.UID)
	next := hint.next
	told := notice{Event: claimNotifies(d), Status: runtime.StatusRunning, Pause: read.Status, Tool: firstTool(read.PendingTools),
		WaitingSince: read.SuspendedAt, ExpiresAt: read.ExpiresAt, Now: c.Lease.Now, Subject: read.Subject}
	guardArgs := []any{c.Lease.Owner, c.Lease.Expires, continuation, c.Lease.Now, read.UID, string(read.Status), read.SuspendedAt, stamp}
	decisionArgs := []any{read.UID, d.IdempotencyKey, d.Kind, d.Approved, d.DecidedBy,
		auditField(d.DecidedByService, decidedByServiceLen), d.Crdate, arguments, reason}
	var ev runtime.Event
	claimed := false
	if s.batches != nil && len(c.RuleUses) == 0 && known != nil && next >= 0 {
		b := &batch{guard: sqlClaimForResume, guardArgs: guardArgs}
		drafts := read.Status == runtime.StatusWaitingInput && hint.drafts
		if !drafts {
			b.guard = sqlClaimForResumeWithoutDrafts
		}
		rows, args, err := notificationRows(ctx, s.db, read.UID, told, known)
		if err != nil {
			return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w", read.UID, err)
		}
		if rows != nil {
			b.insertValues(sqlInsertOutbox, rows, args...)
		}
		b.insertValues(sqlInsertDecisions, []string{sqlDecisionRow}, decisionArgs...)
		at := eventsInBatch(b, read.UID, next, oneStep(e, payload))
		if drafts {
			b.write(sqlDeleteRunDrafts, read.UID)
		}
		if a := c.Audit; a != nil {
			b.insertValues(sqlInsertAudit, []string{sqlAuditRow}, auditArgs(c.Lease.Now, a.Actor, a.IP, a.Action, read.UUID, a.Outcome, s.auditReason(a.Reason))...)
		}
		res, err := s.runBatch(ctx, b)
		if err != nil && !errors.Is(err, errBatchDeclined) {
			return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w", read.UID, err)
		}
		if claimed = err == nil && res.held(); claimed {
			ev = runtime.Event{UID: res.insertID(at), Run: read.UID, Sequence: next, Kind: e.Kind, Round: e.Round,
				DurationMS: e.DurationMS, Payload: payload, Crdate: e.Now}
		}
	}
	retry := func(err error) bool { return isStaleSequence(err) || errors.Is(err, errResealed) }
	if !claimed {
		err = s.inTx(ctx, retry, func(tx *sql.Tx) error {
			seq := next
			next = -1
			q := s.prep.on(tx)
			guardArgs[len(guardArgs)-1] = stamp
			res, err := q.ExecContext(ctx, sqlClaimForResume, guardArgs...)
			if err != nil {
				return fmt.Errorf("claim: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("claim: %w", err)
			} else if n != 1 {
				if resealed, ok := s.resealedOnly(ctx, q, read, stamp); ok {
					stamp = resealed
					return errResealed
				}
				return runtime.ErrGuard
			}
			if err := enqueueNotifications(ctx, q, read.UID, told, known); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, sqlInsertDecision, decisionArgs...); err != nil {
				if isDuplicateKey(err) {
					return fmt.Errorf("decision %q: %w: %w", d.IdempotencyKey, ErrDuplicateDecision, runtime.ErrGuard)
				}
				return fmt.Errorf("decision: %w", err)
			}
			if err := useRules(ctx, q, c.RuleUses, c.Lease.Now); err != nil {
				return err
			}
			if len(c.RuleUses) > 0 {
				if _, err := q.ExecContext(ctx, sqlDropHeldWaiting, read.UID, read.SuspendedAt); err != nil {
					return fmt.Errorf("drop held waiting notifications: %w", err)
				}
			}
			if ev, err = appendEventTx(ctx, q, seq, oneStep(e, payload)); err != nil {
				if seq >= 0 && isDuplicateKey(err) {
					return fmt.Errorf("%w: %w", errStaleSequence, err)
				}
				return fmt.Errorf("%w: %w", runtime.ErrEventNotRecorded, err)
			}
			if read.Status == runtime.StatusWaitingInput {
				if err := deleteRunDrafts(ctx, q, read.UID); err != nil {
					return err
				}
			}
			if a := c.Audit; a != nil {
				return insertAudit(ctx, q, c.Lease.Now, a.Actor, a.IP, a.Action, read.UUID, a.Outcome, s.auditReason(a.Reason))
			}
			return nil
		})
	}
	if err != nil {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w", read.UID, err)
	}
	s.seqs.put(read.UID, ev.Sequence+1)
	run := read
	run.Status, run.ClaimedBy, run.LeaseExpires, run.QueuedRequest = runtime.StatusRunning, c.Lease.Owner, c.Lease.Expires, c.Continuation
	run.SuspendedAt, run.PendingTools, run.Tstamp = 0, "", c.Lease.Now
	return run, ev, nil
}

// claimNotifies is the notify event of a claim: an expiry that denies or answers is the run's
// expiry; any other decision is a decision.
func claimNotifies(d runtime.Decision) runtime.NotifyEvent {
	if d.Kind == runtime.DecisionExpiry {
		return runtime.NotifyExpired
	}
	return runtime.NotifyDecided
}
