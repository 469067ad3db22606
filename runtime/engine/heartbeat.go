package engine

import (
	"context"
	"errors"
	"time"

	"runsdesk/runtime"
)

// minHeartbeat bounds how often a call in flight renews its lease.
const minHeartbeat = 100 * time.Millisecond

// whileHeld runs call (a model or tool call) with the segment's lease renewed every third of
// the lease while it is in flight (renew lease: running ∧ claimed_by=me), so a call longer
// than the lease is not reaped. A renewal whose guard misses (the run was cancelled, or
// another owner took it) cancels call's context and discards its result: whileHeld returns
// errCancelled or errLeaseLost instead, so the segment records nothing of the call and starts
// nothing after it. A renewal that fails for another reason (the database is away) is tried
// again at the next beat while call goes on.
func whileHeld[T any](ctx context.Context, s *segment, call func(context.Context) (T, error)) (T, error) {
	callCtx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	finished := make(chan struct{})
	beat := make(chan heartbeat, 1)
	go func(lease runtime.Lease) { beat <- s.heartbeat(callCtx, lease, lose, finished) }(s.lease)
	res, err := call(callCtx)
	close(finished)
	hb := <-beat
	if hb.lost != nil {
		var zero T
		return zero, hb.lost
	}
	if !hb.renewed.IsZero() {
		s.wroteAt = hb.renewed
	}
	return res, err
}

// heartbeat is what the renewals during one call found: when the lease was last renewed, or
// why it was lost.
type heartbeat struct {
	renewed time.Time
	lost    error
}

// heartbeat renews lease every third of the lease period until finished is closed or ctx is
// done; on a guard miss it cancels the call with the reason (lose) and stops.
func (s *segment) heartbeat(ctx context.Context, lease runtime.Lease, lose context.CancelCauseFunc, finished <-chan struct{}) heartbeat {
	tick := time.NewTicker(max(s.r.lease/3, minHeartbeat))
	defer tick.Stop()
	var hb heartbeat
	for {
		select {
		case <-finished:
			return hb
		case <-ctx.Done():
			return hb
		case <-tick.C:
		}
		now := s.r.unix()
		lease.Now, lease.Expires = now, now+int64(s.r.lease/time.Second)
		err := s.r.store.RenewLease(ctx, s.run.UID, lease)
		switch {
		case err == nil:
			hb.renewed = s.r.now()
		case errors.Is(err, runtime.ErrGuard):
			hb.lost = s.whyGuardMissed(context.WithoutCancel(ctx))
			s.r.log.Warn("lease lost during a call; the call is abandoned", "run", s.run.UUID, "reason", hb.lost)
			lose(hb.lost)
			return hb
		case ctx.Err() == nil:
			s.r.log.Warn("lease renewal during a call failed; tried again at the next beat", "run", s.run.UUID, "err", err)
		}
	}
}

// interrupted reports whether err is the loss of the segment's run (cancelled, or the lease
// taken) rather than a failure of the call itself.
func interrupted(err error) bool {
	return errors.Is(err, errCancelled) || errors.Is(err, errLeaseLost)
}
