package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"runsdesk/runtime"
)

// sqlPauseAsRead is the guard of every plan: the pause still as it was read (status,
// suspended_at, suspended_state compared by SHA-256).
const sqlPauseAsRead = ` WHERE uid = ? AND status = ? AND suspended_at = ? AND SHA2(suspended_state, 256) = ?`

// sqlClaimForResume is the guard of a plan that resumes: the pause as read → running under
// the plan's lease, its continuation in queued_request, the pause ended (suspended_state kept).
const sqlClaimForResume = updateRunByUID + `
	SET status = 'running', claimed_by = ?, lease_expires = ?, queued_request = ?,
	    suspended_at = 0, pending_tools = '', tstamp = ?` + sqlPauseAsRead

// sqlClaimForResumeWithoutDrafts is sqlClaimForResume of a pause read without drafts
// (has_drafts = 0), so the claim need not remove any: a draft saved since makes it miss.
const sqlClaimForResumeWithoutDrafts = sqlClaimForResume + ` AND has_drafts = 0`

// sqlRecordOnPause is the guard of a plan that only records: the pause as read keeps waiting,
// its next event sequence moved past the plan's event (so the row always changes).
const sqlRecordOnPause = updateRunByUID + `
	SET pause_sequence = ?, tstamp = ?` + sqlPauseAsRead

// sqlAssignOnPause is sqlRecordOnPause of a plan that assigns: the assignee changes only
// while it is still the one read (its last placeholder).
const sqlAssignOnPause = updateRunByUID + `
	SET pause_sequence = ?, tstamp = ?, assignee = ?, assignee_name = ?, assigned_at = ?` + sqlPauseAsRead + andAssigneeAsRead

// andAssigneeAsRead guards a plan that assigns by the assignee as read.
const andAssigneeAsRead = ` AND assignee = ?`

// sqlPauseMatched counts the run while its pause is as read (a record-only guard's WHERE, to
// which the plan's own conditions are appended): planSQL.matched.
const sqlPauseMatched = `SELECT COUNT(*) FROM tx_nrllm_agentrun` + sqlPauseAsRead

// sqlVoteOnPause is sqlRecordOnPause of a plan that records a vote: the pause's vote count
// moves on only from the count as read (andVotesAsRead), so of concurrent votes one counts.
const sqlVoteOnPause = updateRunByUID + `
	SET pause_sequence = ?, tstamp = ?, approvals = approvals + 1` + sqlPauseAsRead + andVotesAsRead

// sqlEditOnPause is sqlVoteOnPause of an edit-and-approve on a turn that needs several
// approvals: the pending turn rewritten (suspended_state, subject) and the count restarted at
// the editor's vote, the earlier votes being voided in the same transaction.
const sqlEditOnPause = updateRunByUID + `
	SET pause_sequence = ?, tstamp = ?, suspended_state = ?, subject = ?, approvals = 1` + sqlPauseAsRead + andVotesAsRead

// andVotesAsRead guards a plan with a vote by the pause's vote count as read.
const andVotesAsRead = ` AND approvals = ?`

// errStaleSequence marks a plan whose event hit the unique sequence at the sequence read
// with the run: the plan is retried with MAX(sequence).
var errStaleSequence = errors.New("stale event sequence")

func isStaleSequence(err error) bool { return errors.Is(err, errStaleSequence) }

const (
	sqlInsertDecisions = `INSERT INTO tx_runsdesk_decision
	(run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate, arguments, reason,
	 paused_at, configuration_identifier, pending_tools) VALUES `
	sqlDecisionRow    = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertDecision = sqlInsertDecisions + sqlDecisionRow
)

// decisionArgs are the arguments of sqlDecisionRow: decision d on the pause read, stored at
// crdate with its sealed arguments and reason, and what the queue's health groups and times
// it by (the pause's start, configuration and tools, as read: 0047_queue_health.sql).
func decisionArgs(read runtime.Run, d runtime.Decision, crdate int64, arguments, reason string) []any {
	return []any{read.UID, d.IdempotencyKey, d.Kind, d.Approved, d.DecidedBy,
		auditField(d.DecidedByService, decidedByServiceLen), crdate, arguments, reason,
		read.SuspendedAt, read.ConfigurationIdentifier, read.PendingTools}
}

// planWrite is one write of a commit plan: an INSERT of rows (head "INSERT INTO t (cols)
// VALUES ", rows its parenthesised rows) or, with head empty, the one statement in rows[0];
// with its arguments. Run statement by statement, refused maps the server's refusal of it
// (nil: wrapped, named by what), notOne, when set, is the error of a write that did not change
// exactly one row, and id receives its first insert id.
type planWrite struct {
	what    string
	head    string
	rows    []string
	args    []any
	refused func(error) error
	notOne  error
	id      *int64
}

// text is the write as one statement.
func (w planWrite) text() string { return w.head + strings.Join(w.rows, ", ") }

// planSQL is a commit plan as the statements it sends: the guarded UPDATE and the writes after
// it, in order. matched, when set, counts the run as the guard matches it (with matchedArgs):
// a record-only guard that matched the run but changed nothing (a concurrent plan took the
// event sequence it sets) is retried as a stale sequence, not refused.
type planSQL struct {
	guard       string
	guardArgs   []any
	writes      []planWrite
	matched     string
	matchedArgs []any
}

// sqlPlan is a commit plan ready to run (runPlan). build makes its statements on q: batched
// (one round trip, so nothing may be read on a transaction) or statement by statement inside
// the plan's transaction; batchable says whether a batch can run it at all (no write whose
// count must be looked at, nothing to read in the transaction); missed tells, statement by
// statement, why the guard changed no row (runtime.ErrGuard, or an error to retry on).
type sqlPlan struct {
	build     func(ctx context.Context, q execer, batched bool) (planSQL, error)
	batchable bool
	missed    func(ctx context.Context, q execer) error
	retry     func(error) bool
}

// runPlan runs p: as one batch when the Store has a batch pool and p is batchable; statement
// by statement, in one transaction, otherwise and whenever the batch's guard did not hold or
// the batch was declined (by the server, or unsent because its first write is not an INSERT:
// runBatch) (those steps tell a guard from a refusal). Both run the writes p builds, in the
// same order.
func (s *Store) runPlan(ctx context.Context, p sqlPlan) error {
	if s.batches != nil && p.batchable {
		ps, err := p.build(ctx, s.db, true)
		if err != nil {
			return err
		}
		if held, err := s.batchHeld(ctx, ps); err != nil || held {
			return err
		}
	}
	return s.inTx(ctx, p.retry, func(tx *sql.Tx) error {
		q := s.prep.on(tx)
		ps, err := p.build(ctx, q, false)
		if err != nil {
			return err
		}
		if n, err := execCount(ctx, q, ps.guard, ps.guardArgs); err != nil {
			return fmt.Errorf("guard: %w", err)
		} else if n != 1 {
			if ps.matched != "" {
				var m int
				if err := q.QueryRowContext(ctx, ps.matched, ps.matchedArgs...).Scan(&m); err != nil {
					return fmt.Errorf("guard: %w", err)
				} else if m == 1 {
					return errStaleSequence
				}
			}
			return p.missed(ctx, q)
		}
		if err := s.faultAfter("guard"); err != nil {
			return err
		}
		for _, w := range ps.writes {
			res, err := q.ExecContext(ctx, w.text(), w.args...)
			if err != nil {
				if w.refused != nil {
					return w.refused(err)
				}
				return fmt.Errorf("%s: %w", w.what, err)
			}
			if w.notOne != nil {
				if n, err := res.RowsAffected(); err != nil {
					return fmt.Errorf("%s: %w", w.what, err)
				} else if n != 1 {
					return w.notOne
				}
			}
			if w.id != nil {
				if *w.id, err = res.LastInsertId(); err != nil {
					return fmt.Errorf("%s: %w", w.what, err)
				}
			}
			if err := s.faultAfter(w.what); err != nil {
				return err
			}
		}
		return nil
	})
}

// batchHeld runs ps as one batch and reports whether its guard held (its writes applied).
// Not held, with no error, nothing was written: the guard missed, or the batch was declined
// (ps whose first write is the DELETE voiding a pause's votes is never sent, runBatch).
func (s *Store) batchHeld(ctx context.Context, ps planSQL) (bool, error) {
	b := &batch{guard: ps.guard, guardArgs: ps.guardArgs}
	at := make([]int, len(ps.writes))
	for i, w := range ps.writes {
		if w.head != "" {
			at[i] = b.insertValues(w.head, w.rows, w.args...)
		} else {
			b.write(w.rows[0], w.args...)
		}
	}
	res, err := s.runBatch(ctx, b)
	if err != nil && !errors.Is(err, errBatchDeclined) {
		return false, err
	}
	if err != nil || !res.held() {
		return false, nil
	}
	for i, w := range ps.writes {
		if w.id != nil {
			*w.id = res.insertID(at[i])
		}
	}
	return true, nil
}

// faultAfter is the test seam afterWrite after the write named what (nil without one).
func (s *Store) faultAfter(what string) error {
	if s.afterWrite == nil {
		return nil
	}
	return s.afterWrite(what)
}

// execCount runs stmt on q and returns how many rows it changed.
func execCount(ctx context.Context, q execer, stmt string, args []any) (int64, error) {
	res, err := q.ExecContext(ctx, stmt, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Commit commits a decision by its plan p (runtime.CommitPlan), in one transaction on this
// run's rows, batched in one round trip where it can be:
//
//  1. the guard: the pause p.Read still as read (status, suspended_at, suspended_state by
//     SHA-256); a plan that resumes claims it (→ running, claimed_by/lease_expires from
//     p.Resume.Lease, queued_request = p.Resume.Continuation, suspended_at = 0, pending_tools
//     emptied), a plan that records moves its next event sequence past the plan's event, and
//     one that assigns (p.Assign) also sets the assignee, guarded by the assignee as read. No
//     row ⇒ runtime.ErrGuard (claimed by someone else, finished, or paused again since read);
//  2. p.Notify's notifications (to the rules of p.Configuration when set, else to those read
//     in the transaction);
//  3. INSERT of p.Decision (none when its Kind is empty: an assignment) (Run set to
//     p.Read.UID; Crdate defaults to p.Now); a decision
//     already stored under the same (run, idempotency key) ⇒ an error matching both
//     ErrDuplicateDecision and runtime.ErrGuard;
//  4. one use of each standing approval of p.RuleUses, by a guarded UPDATE (in force at
//     p.Now, uses below max_uses; else an error wrapping runtime.ErrRuleNotInForce), and the
//     pause's `waiting` notifications no dispatcher has claimed removed (a turn a standing
//     approval approves at once told nobody it waits: Suspension.WaitingDue);
//  5. p.Event at the run's next sequence (Run set to p.Read.UID; Now defaults to p.Now), as
//     FindByUUID read it when this Store made the read, else MAX(sequence)+1 (a sequence gone
//     stale meanwhile hits the unique sequence and the whole plan is retried with MAX); an
//     event that cannot be written (or whose payload is not JSON) ⇒ an error wrapping
//     runtime.ErrEventNotRecorded; its Content, when set, sealed beside it;
//  6. for an input pause that resumes, every draft of the run removed: batched, only when the
//     read brought has_drafts = 1, else the claim is guarded by has_drafts = 0, so a draft
//     saved since the read makes it run statement by statement;
//  7. p.Vote's row first of the writes, under a guard that also holds the pause's vote count
//     as read and moves it on (a voter who voted on the pause ⇒ runtime.ErrAlreadyVoted);
//     p.DropVotes removes the pause's votes before it; p.Replace (an edit's vote, with Vote
//     and DropVotes on a plan that records) also rewrites the pause's suspended_state, sealed
//     as Suspend seals it, and subject in the guard, the count restarting at 1;
//  8. p.Comment's row, at the event's sequence, its body sealed (a key already used on the
//     run ⇒ runtime.ErrDuplicateComment); its UID is set once stored;
//  9. when p.Audit is set, its audit row (time p.Now, run p.Read.UUID; fields cleaned and cut
//     as Audit.Record does).
//
// Any failure rolls everything back (the run as it was: no decision, no event). It returns
// the run as committed (p.Read with the guard's columns: the guard proves nothing else changed)
// and the stored event; after a claim this Store remembers the run's next event sequence for
// the continuation's appends. A p.Read.Status that is not a pause is refused before any write.
func (s *Store) Commit(ctx context.Context, p runtime.CommitPlan) (runtime.Run, runtime.Event, error) {
	read := p.Read
	fail := func(err error) (runtime.Run, runtime.Event, error) {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: commit %s of run %d: %w", p.Decision.Kind, read.UID, err)
	}
	if !read.Status.Waiting() {
		return fail(fmt.Errorf("status %q is not a pause", read.Status))
	}
	if p.Replace != nil && (p.Vote == nil || !p.DropVotes || p.Resume != nil) {
		return fail(errors.New("a pause is replaced only by an edit's vote that voids the others and records"))
	}
	payload, err := eventPayload(p.Event.Payload)
	if err != nil {
		return fail(fmt.Errorf("%w: %w", runtime.ErrEventNotRecorded, err))
	}
	d := p.Decision
	if d.Crdate == 0 {
		d.Crdate = p.Now
	}
	e := p.Event
	e.Run = read.UID
	if e.Now == 0 {
		e.Now = p.Now
	}
	var continuation string
	if p.Resume != nil {
		if continuation, err = s.sealFor(ctx, s.db, read.UID, read.UUID, sealedQueuedRequest, p.Resume.Continuation); err != nil {
			return fail(err)
		}
	}
	var replaced, subject string
	if p.Replace != nil {
		if replaced, err = s.sealFor(ctx, s.db, read.UID, read.UUID, sealedSuspendedState, p.Replace.State); err != nil {
			return fail(err)
		}
		subject = p.Replace.Subject.Stored(s.keys != nil)
	}
	contents, err := s.sealContents(ctx, s.db, read.UID, []runtime.NewEvent{e})
	if err != nil {
		return fail(err)
	}
	arguments, reason, err := s.sealDecision(d, read.UUID)
	if err != nil {
		return fail(err)
	}
	var commentBody string
	if c := p.Comment; c != nil {
		if commentBody, err = s.keys.Seal(c.Body, sealedCommentBody.place(read.UUID, 0)); err != nil {
			return fail(err)
		}
	}
	var known *notifySubject
	if p.Configuration != nil {
		sub := subjectOf(read.UUID, p.Configuration)
		known = &sub
	}
	hint := s.paused.take(read.UID)
	status := read.Status
	if p.Resume != nil {
		status = runtime.StatusRunning
	}
	told := notice{Event: p.Notify, Status: status, Pause: read.Status, Tool: firstTool(read.PendingTools),
		WaitingSince: read.SuspendedAt, ExpiresAt: read.ExpiresAt, Now: p.Now, Subject: read.Subject, People: p.NotifyPeople}
	stamp := stateStamp(read)
	next := hint.next
	var eventUID int64
	seq := -1
	build := func(ctx context.Context, q execer, batched bool) (planSQL, error) {
		seq = next
		next = -1
		if seq < 0 {
			if err := q.QueryRowContext(ctx, sqlNextSequence, read.UID).Scan(&seq); err != nil {
				return planSQL{}, fmt.Errorf("next sequence: %w", err)
			}
		}
		pause := []any{read.UID, string(read.Status), read.SuspendedAt, stamp}
		var ps planSQL
		drafts := p.Resume != nil && read.Status == runtime.StatusWaitingInput && (!batched || hint.drafts)
		switch {
		case p.Assign != nil:
			a := p.Assign
			ps.guard, ps.guardArgs = sqlAssignOnPause, append(append([]any{seq + 1, p.Now, a.To, a.ToName, p.Now}, pause...), a.From)
			ps.matched, ps.matchedArgs = sqlPauseMatched+andAssigneeAsRead, append(slices.Clip(pause), a.From)
		case p.Replace != nil:
			ps.guard, ps.guardArgs = sqlEditOnPause, append(append([]any{seq + 1, p.Now, replaced, subject}, pause...), read.Approvals)
			ps.matched, ps.matchedArgs = sqlPauseMatched+andVotesAsRead, append(slices.Clip(pause), read.Approvals)
		case p.Resume == nil && p.Vote != nil:
			ps.guard, ps.guardArgs = sqlVoteOnPause, append(append([]any{seq + 1, p.Now}, pause...), read.Approvals)
			ps.matched, ps.matchedArgs = sqlPauseMatched+andVotesAsRead, append(slices.Clip(pause), read.Approvals)
		case p.Resume == nil:
			ps.guard, ps.guardArgs = sqlRecordOnPause, append([]any{seq + 1, p.Now}, pause...)
			ps.matched, ps.matchedArgs = sqlPauseMatched, pause
		case batched && !drafts:
			ps.guard = sqlClaimForResumeWithoutDrafts
		default:
			ps.guard = sqlClaimForResume
		}
		if p.Resume != nil {
			ps.guardArgs = append([]any{p.Resume.Lease.Owner, p.Resume.Lease.Expires, continuation, p.Now}, pause...)
			if p.Vote != nil {
				ps.guard += andVotesAsRead
				ps.guardArgs = append(ps.guardArgs, read.Approvals)
			}
		}
		if p.DropVotes {
			ps.writes = append(ps.writes, planWrite{what: "drop votes", rows: []string{sqlDropPauseVotes}, args: []any{read.UID, read.PauseNumber}})
		}
		if p.Vote != nil {
			ps.writes = append(ps.writes, voteWrite(read, *p.Vote, p.Now))
		}
		if p.Notify != "" {
			rows, args, err := notificationRows(ctx, q, read.UID, told, known)
			if err != nil {
				return planSQL{}, err
			}
			if rows != nil {
				ps.writes = append(ps.writes, planWrite{what: "notifications", head: sqlInsertOutbox, rows: rows, args: args})
			}
		}
		if d.Kind != "" {
			ps.writes = append(ps.writes, planWrite{what: "decision", head: sqlInsertDecisions, rows: []string{sqlDecisionRow},
				args: decisionArgs(read, d, d.Crdate, arguments, reason),
				refused: func(err error) error {
					if isDuplicateKey(err) {
						return fmt.Errorf("decision %q: %w: %w", d.IdempotencyKey, ErrDuplicateDecision, runtime.ErrGuard)
					}
					return fmt.Errorf("decision: %w", err)
				}})
		}
		for _, name := range p.RuleUses {
			ps.writes = append(ps.writes, planWrite{what: fmt.Sprintf("count use of standing approval %q", name),
				rows: []string{sqlUseRule}, args: []any{p.Now, name, p.Now},
				notOne: fmt.Errorf("standing approval %q: %w", name, runtime.ErrRuleNotInForce)})
		}
		if len(p.RuleUses) > 0 && p.Resume != nil {
			ps.writes = append(ps.writes, planWrite{what: "drop held waiting notifications", rows: []string{sqlDropHeldWaiting},
				args: []any{read.UID, read.SuspendedAt}})
		}
		rows, args := eventRows(read.UID, seq, []runtime.NewEvent{e}, [][]byte{payload})
		ps.writes = append(ps.writes, planWrite{what: "event", head: sqlInsertEvents, rows: rows, args: args, id: &eventUID,
			refused: func(err error) error {
				if isDuplicateKey(err) {
					return fmt.Errorf("%w: %w", errStaleSequence, err)
				}
				return fmt.Errorf("%w: %w", runtime.ErrEventNotRecorded, err)
			}})
		for _, args := range contentWrites(read.UID, seq, []runtime.NewEvent{e}, contents) {
			ps.writes = append(ps.writes, planWrite{what: "event content", rows: []string{sqlInsertContent}, args: args})
		}
		if p.Comment != nil {
			ps.writes = append(ps.writes, commentWrite(read, p.Comment, seq, commentBody, p.Now))
		}
		if drafts {
			ps.writes = append(ps.writes, planWrite{what: "delete drafts", rows: []string{sqlDeleteRunDrafts}, args: []any{read.UID}})
		}
		if a := p.Audit; a != nil {
			ps.writes = append(ps.writes, planWrite{what: "audit " + a.Action, head: sqlInsertAudit, rows: []string{sqlAuditRow},
				args: auditArgs(p.Now, a.Actor, a.IP, a.Action, read.UUID, a.Outcome, s.auditReason(a.Reason))})
		}
		return ps, nil
	}
	err = s.runPlan(ctx, sqlPlan{
		build:     build,
		batchable: len(p.RuleUses) == 0 && (known != nil || p.Notify == "") && hint.next >= 0,
		missed: func(ctx context.Context, q execer) error {
			if resealed, ok := s.resealedOnly(ctx, q, read, stamp); ok {
				stamp = resealed
				return errResealed
			}
			return runtime.ErrGuard
		},
		retry: func(err error) bool { return isStaleSequence(err) || errors.Is(err, errResealed) },
	})
	if err != nil {
		return fail(err)
	}
	ev := runtime.Event{UID: eventUID, Run: read.UID, Sequence: seq, Kind: e.Kind, Round: e.Round,
		DurationMS: e.DurationMS, Payload: payload, Crdate: e.Now}
	run := read
	run.Tstamp = p.Now
	if a := p.Assign; a != nil {
		run.Assignee, run.AssigneeName, run.AssignedAt = a.To, a.ToName, p.Now
	}
	switch {
	case p.Replace != nil:
		run.SuspendedState, run.Subject, run.Approvals, run.StateStamp = p.Replace.State, subject, 1, ""
		if replaced != p.Replace.State {
			run.StateStamp = sha256Hex(replaced) + "/" + sha256Hex(p.Replace.State)
		}
	case p.Vote != nil:
		run.Approvals++
	}
	if p.Resume == nil {
		return run, ev, nil
	}
	s.seqs.put(read.UID, seq+1)
	run.Status, run.ClaimedBy, run.LeaseExpires, run.QueuedRequest = runtime.StatusRunning, p.Resume.Lease.Owner, p.Resume.Lease.Expires, p.Resume.Continuation
	run.SuspendedAt, run.PendingTools = 0, ""
	return run, ev, nil
}
