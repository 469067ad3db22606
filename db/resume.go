package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/runtime"
)

const sqlClaimForResume = `UPDATE tx_nrllm_agentrun
	SET status = 'running', claimed_by = ?, lease_expires = ?, queued_request = ?,
	    suspended_at = 0, pending_tools = '', tstamp = ?
	WHERE uid = ? AND status = ?`

const sqlRunByUIDLocked = sqlRunByUID + ` FOR UPDATE`

const sqlInsertDecision = `INSERT INTO tx_runsdesk_decision
	(run, idempotency_key, kind, approved, decided_by, crdate) VALUES (?, ?, ?, ?, ?, ?)`

// ClaimForResume is T6/T7 with its decision and event, in one transaction on this run's rows:
//
//  1. guarded UPDATE status=c.From → running, claimed_by/lease_expires from c.Lease,
//     queued_request=c.Continuation, suspended_at=0, pending_tools emptied (suspended_state kept);
//     no row ⇒ runtime.ErrGuard;
//  2. re-read of the locked row and c.Check on it (nil Check = no check); its error is
//     returned unchanged;
//  3. INSERT of c.Decision (Run set to c.RunUID; Crdate defaults to c.Lease.Now); a decision
//     already stored under the same (run, idempotency key) ⇒ an error matching both
//     ErrDuplicateDecision and runtime.ErrGuard;
//  4. c.Event appended at MAX(sequence)+1 (Run set to c.RunUID; Now defaults to c.Lease.Now);
//     an event that cannot be written (or whose payload is not JSON) ⇒ an error wrapping
//     runtime.ErrEventNotRecorded.
//
// Any failure rolls everything back, so the run stays as it was (still waiting, no decision,
// no event). On success it returns the post-claim run and the stored event. A c.From that is
// not a pause is refused before any write.
func (s *Store) ClaimForResume(ctx context.Context, c runtime.ResumeClaim) (runtime.Run, runtime.Event, error) {
	if !c.From.Waiting() {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: status %q is not a pause", c.RunUID, c.From)
	}
	payload, err := eventPayload(c.Event.Payload)
	if err != nil {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w: %w", c.RunUID, runtime.ErrEventNotRecorded, err)
	}
	d := c.Decision
	if d.Crdate == 0 {
		d.Crdate = c.Lease.Now
	}
	e := c.Event
	e.Run = c.RunUID
	if e.Now == 0 {
		e.Now = c.Lease.Now
	}

	var run runtime.Run
	var ev runtime.Event
	var checkErr error
	err = s.inTx(ctx, nil, func(tx *sql.Tx) error {
		checkErr = nil
		res, err := tx.ExecContext(ctx, sqlClaimForResume, c.Lease.Owner, c.Lease.Expires,
			c.Continuation, c.Lease.Now, c.RunUID, string(c.From))
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("claim: %w", err)
		} else if n != 1 {
			return runtime.ErrGuard
		}
		if run, err = scanRun(tx.QueryRowContext(ctx, sqlRunByUIDLocked, c.RunUID)); err != nil {
			return fmt.Errorf("re-read: %w", err)
		}
		if c.Check != nil {
			if checkErr = c.Check(run); checkErr != nil {
				return checkErr
			}
		}
		if _, err := tx.ExecContext(ctx, sqlInsertDecision, c.RunUID, d.IdempotencyKey, d.Kind,
			d.Approved, d.DecidedBy, d.Crdate); err != nil {
			if isDuplicateKey(err) {
				return fmt.Errorf("decision %q: %w: %w", d.IdempotencyKey, ErrDuplicateDecision, runtime.ErrGuard)
			}
			return fmt.Errorf("decision: %w", err)
		}
		if ev, err = appendEventTx(ctx, tx, e, payload); err != nil {
			return fmt.Errorf("%w: %w", runtime.ErrEventNotRecorded, err)
		}
		return nil
	})
	if err != nil && checkErr != nil {
		return runtime.Run{}, runtime.Event{}, checkErr
	}
	if err != nil {
		return runtime.Run{}, runtime.Event{}, fmt.Errorf("db: claim for resume run %d: %w", c.RunUID, err)
	}
	return run, ev, nil
}
