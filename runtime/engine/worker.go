package engine

import (
	"context"
	"errors"
	"time"

	"runsdesk/runtime"
)

// Run is the worker pool, reaper and expirer of one process: it claims queued runs
// (ClaimQueued) and executes them on up to Config.Workers slots, reaps stale runs and ends held
// requests for input whose holder is gone (EndLapsedHolds) every ReapInterval, and takes the
// due deadline steps of waiting runs (Expire) every expire interval, until ctx is done. Then
// it interrupts running segments (their runs go back to the queue) and waits.
func (r *Runtime) Run(ctx context.Context) error {
	defer r.Close()
	poll := time.NewTicker(r.poll)
	defer poll.Stop()
	reap := time.NewTicker(r.reap)
	defer reap.Stop()
	expire := time.NewTicker(r.expire)
	defer expire.Stop()
	for {
		r.claimQueued(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		case <-r.wake:
		case <-reap.C:
			if _, err := r.Reap(ctx, 50); err != nil && ctx.Err() == nil {
				r.log.Error("reap failed", "err", err)
			}
			if _, err := r.EndLapsedHolds(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("ending lapsed holds failed", "err", err)
			}
		case <-expire.C:
			if _, err := r.Expire(ctx, expireBatch); err != nil && ctx.Err() == nil {
				r.log.Error("expire failed", "err", err)
			}
		}
	}
}

// Wake asks the pool to look for queued runs now.
func (r *Runtime) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// claimQueued claims as many queued runs as there are free slots.
func (r *Runtime) claimQueued(ctx context.Context) {
	free := cap(r.slots) - len(r.slots)
	if free <= 0 {
		return
	}
	uids, err := r.store.ListQueued(ctx, r.unix(), free)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("list queued runs failed", "err", err)
		}
		return
	}
	for _, uid := range uids {
		lease := r.newLease("worker")
		err := r.store.ClaimQueued(ctx, uid, lease)
		if errors.Is(err, runtime.ErrGuard) {
			continue
		}
		if err != nil {
			r.log.Error("claim failed", "run_uid", uid, "err", err)
			return
		}
		r.dispatch(uid, lease, nil)
	}
}

// RunOnce claims and executes at most one queued run in the caller's goroutine; it reports
// whether a run was executed. Meant for tests and the CLI.
func (r *Runtime) RunOnce(ctx context.Context) (bool, error) {
	uids, err := r.store.ListQueued(ctx, r.unix(), 5)
	if err != nil {
		return false, err
	}
	for _, uid := range uids {
		lease := r.newLease("worker")
		err := r.store.ClaimQueued(ctx, uid, lease)
		if errors.Is(err, runtime.ErrGuard) {
			continue
		}
		if err != nil {
			return false, err
		}
		r.execute(ctx, uid, lease, nil)
		return true, nil
	}
	return false, nil
}
