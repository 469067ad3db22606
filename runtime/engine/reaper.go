package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
)

// ReapReport counts what one reaper pass did.
type ReapReport struct {
	Requeued     int
	DeadLettered int
	Skipped      int
}

// String is the CLI summary line.
func (p ReapReport) String() string {
	return fmt.Sprintf("Reaped %d stale run(s): %d requeued, %d dead-lettered, %d skipped",
		p.Requeued+p.DeadLettered, p.Requeued, p.DeadLettered, p.Skipped)
}

// Reap handles up to limit running runs whose lease lapsed (docs/state-machine.md), oldest lease
// first: a non-idempotent write in flight or no stored request ⇒ dead-letter not_retryable;
// the requeue budget spent ⇒ dead-letter retries_exhausted; else back to the queue, where a
// worker resumes it from stored state. Waiting runs hold no lease and are never touched. A
// guard that no longer matches (the run moved on) counts as skipped.
func (r *Runtime) Reap(ctx context.Context, limit int) (ReapReport, error) {
	var rep ReapReport
	if limit < 1 {
		return rep, fmt.Errorf("reap limit must be at least 1, got %d", limit)
	}
	now := r.unix()
	stale, err := r.store.FindStale(ctx, now, limit)
	if err != nil {
		return rep, fmt.Errorf("find stale runs: %w", err)
	}
	for _, run := range stale {
		var err error
		requeue := false
		switch {
		case run.PendingEffect == "non_idempotent_write":
			err = r.store.DeadLetterStale(ctx, run.UID, runtime.ReasonNotRetryable, now)
		case run.QueuedRequest == "":
			err = r.store.DeadLetterStale(ctx, run.UID, runtime.ReasonNotRetryable, now)
		case budgetSpent(run):
			err = r.store.DeadLetterStale(ctx, run.UID, runtime.ReasonRetriesExhausted, now)
		default:
			requeue = true
			err = r.store.RequeueStale(ctx, run.UID, now)
		}
		switch {
		case errors.Is(err, runtime.ErrGuard):
			rep.Skipped++
		case err != nil:
			return rep, fmt.Errorf("reap run %s: %w", run.UUID, err)
		case requeue:
			rep.Requeued++
			r.log.Warn("stale run requeued: its lease lapsed", "run", run.UUID, "claimed_by", run.ClaimedBy, "lease_expires", run.LeaseExpires)
		default:
			rep.DeadLettered++
			r.log.Warn("stale run dead-lettered", "run", run.UUID, "pending_effect", run.PendingEffect)
		}
	}
	if rep.Requeued > 0 {
		r.Wake()
	}
	return rep, nil
}

// budgetSpent reports whether run has used up the shared requeue budget: MaxRequeues requeues
// of any kind (the reaper's, a hand-back after a store fault, a shutdown's, a retry after a
// provider failure). A run that has spent it is dead-lettered retries_exhausted instead.
func budgetSpent(run runtime.Run) bool { return run.RequeueCount >= MaxRequeues }

// The backoff after a retryable provider failure: retryBackoffBase·2ⁿ for a run requeued n
// times so far, at most retryBackoffMax (upstream's 30 s·2ⁿ capped at 600 s).
const (
	retryBackoffBase = 30 * time.Second
	retryBackoffMax  = 600 * time.Second
)

// retryBackoff is how long a run requeued n times waits before its next provider attempt.
func retryBackoff(n int) time.Duration {
	if n >= 5 {
		return retryBackoffMax
	}
	return min(retryBackoffBase<<max(n, 0), retryBackoffMax)
}
