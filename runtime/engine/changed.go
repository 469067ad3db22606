package engine

import (
	"context"

	"runsdesk/runtime"
)

// changedStore is the runtime's store when Config.Changed is set: it calls changed after each
// transition it commits that moves a run's status or pause (what a waiter's stamp reads), and
// passes every other call through.
type changedStore struct {
	runtime.Store
	changed func()
}

// notifyChanges wraps store so that changed is told of its committed transitions; without
// changed it is store.
func notifyChanges(store runtime.Store, changed func()) runtime.Store {
	if changed == nil || store == nil {
		return store
	}
	return &changedStore{Store: store, changed: changed}
}

// after calls changed when the transition whose outcome is err committed.
func (s *changedStore) after(err error) error {
	if err == nil {
		s.changed()
	}
	return err
}

func (s *changedStore) CreateRun(ctx context.Context, in runtime.NewRun) (runtime.Run, error) {
	run, err := s.Store.CreateRun(ctx, in)
	return run, s.after(err)
}

func (s *changedStore) ClaimQueued(ctx context.Context, uid int64, lease runtime.Lease) error {
	return s.after(s.Store.ClaimQueued(ctx, uid, lease))
}

func (s *changedStore) Suspend(ctx context.Context, uid int64, owner string, sp runtime.Suspension, now int64, events ...runtime.NewEvent) error {
	return s.after(s.Store.Suspend(ctx, uid, owner, sp, now, events...))
}

func (s *changedStore) Commit(ctx context.Context, p runtime.CommitPlan) (runtime.Run, runtime.Event, error) {
	run, ev, err := s.Store.Commit(ctx, p)
	return run, ev, s.after(err)
}

func (s *changedStore) Requeue(ctx context.Context, uid int64, owner string, now, retryAt int64) error {
	return s.after(s.Store.Requeue(ctx, uid, owner, now, retryAt))
}

func (s *changedStore) RequeueStale(ctx context.Context, uid int64, now int64) error {
	return s.after(s.Store.RequeueStale(ctx, uid, now))
}

func (s *changedStore) DeadLetterStale(ctx context.Context, uid int64, reason string, now int64) error {
	return s.after(s.Store.DeadLetterStale(ctx, uid, reason, now))
}

func (s *changedStore) Finish(ctx context.Context, uid int64, owner string, st runtime.Settlement, now int64, events ...runtime.NewEvent) error {
	return s.after(s.Store.Finish(ctx, uid, owner, st, now, events...))
}

func (s *changedStore) Cancel(ctx context.Context, uid int64, now int64) error {
	return s.after(s.Store.Cancel(ctx, uid, now))
}

func (s *changedStore) CancelWaiting(ctx context.Context, uid int64, now int64) error {
	return s.after(s.Store.CancelWaiting(ctx, uid, now))
}

func (s *changedStore) EscalatePause(ctx context.Context, st runtime.PauseStep) error {
	return s.after(s.Store.EscalatePause(ctx, st))
}

func (s *changedStore) ExpirePause(ctx context.Context, st runtime.PauseStep) error {
	return s.after(s.Store.ExpirePause(ctx, st))
}
