package engine

import (
	"context"
	"errors"

	"runsdesk/runtime"
)

// Cancel moves a queued, running or waiting run to cancelled (Store.Cancel). A waiting run leaves the
// inbox at once; an executing segment stops at its next guarded write (a checkpoint, write
// fence, pause or settle, the lease renewal at a step boundary, which is skipped within a
// second of the segment's last guarded write, or the heartbeat of a model or tool call in
// flight, which abandons the call) and stores the totals of the model calls it made; a late
// settle is discarded. An external request is cancelled only while it waits
// (Store.CancelWaiting): once a decision claimed it, the decision stands and is delivered, so
// of a decision and a cancel exactly one wins. Unknown runs (or runs the actor may not see)
// are RunNotFound; a finished run, or a request already decided, is RunNotCancellable.
func (r *Runtime) Cancel(ctx context.Context, actor runtime.Actor, uuid string) (runtime.Run, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return runtime.Run{}, e
	}
	if !runtime.MayKnow(actor, runtime.ActionCancel, run) {
		return runtime.Run{}, newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	if !runtime.MayAct(actor, runtime.ActionCancel, run) {
		return runtime.Run{}, newError(runtime.CodeRunAccessDenied, uuid, "%s may not cancel this run", actorLabel(actor))
	}
	return r.cancelRun(ctx, run)
}

// WithdrawRequest withdraws external request id for the service account that created it
// (Withdraw in docs/state-machine.md): while it waits, the run is cancelled as Cancel
// cancels it, and its answer (status cancelled) returned. Another's request is RunNotFound
// (as in RequestAnswer); one decided already, or finished, is RunNotCancellable.
func (r *Runtime) WithdrawRequest(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error) {
	run, e := r.loadRun(ctx, id)
	if e != nil {
		return runtime.RequestAnswer{}, e
	}
	if err := r.ownRequest(ctx, actor, run); err != nil {
		return runtime.RequestAnswer{}, err
	}
	if _, err := r.cancelRun(ctx, run); err != nil {
		return runtime.RequestAnswer{}, err
	}
	return r.RequestAnswer(ctx, actor, id)
}

// cancelRun cancels run, as read, for a caller allowed to (Cancel).
func (r *Runtime) cancelRun(ctx context.Context, run runtime.Run) (runtime.Run, error) {
	if run.Status.Terminal() {
		return runtime.Run{}, newError(runtime.CodeRunNotCancellable, run.UUID, "the run is already %s", run.Status)
	}
	request, err := r.isRequest(ctx, run)
	if err != nil {
		return runtime.Run{}, err
	}
	cancel, late := r.store.Cancel, "the run finished before it could be cancelled"
	if request {
		cancel, late = r.store.CancelWaiting, "the request was decided before it could be cancelled"
	}
	err = cancel(ctx, run.UID, r.unix())
	if errors.Is(err, runtime.ErrGuard) {
		return runtime.Run{}, newError(runtime.CodeRunNotCancellable, run.UUID, "%s", late)
	}
	if err != nil {
		return runtime.Run{}, storeError(run.UUID, err)
	}
	after, err := r.store.FindByUID(ctx, run.UID)
	if err != nil {
		return runtime.Run{}, storeError(run.UUID, err)
	}
	return stripped(after), nil
}

// isRequest reports whether run is an external request: a run of a configuration of kind
// external (a configuration gone is none).
func (r *Runtime) isRequest(ctx context.Context, run runtime.Run) (bool, error) {
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return false, nil
	case err != nil:
		return false, storeError(run.UUID, err)
	}
	return cfg.IsExternal(), nil
}
