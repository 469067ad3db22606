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
// settle is discarded. Unknown runs (or runs the actor may not see) are RunNotFound; a
// finished run is RunNotCancellable.
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
	if run.Status.Terminal() {
		return runtime.Run{}, newError(runtime.CodeRunNotCancellable, uuid, "the run is already %s", run.Status)
	}
	err := r.store.Cancel(ctx, run.UID, r.unix())
	if errors.Is(err, runtime.ErrGuard) {
		return runtime.Run{}, newError(runtime.CodeRunNotCancellable, uuid, "the run finished before it could be cancelled")
	}
	if err != nil {
		return runtime.Run{}, storeError(uuid, err)
	}
	after, err := r.store.FindByUID(ctx, run.UID)
	if err != nil {
		return runtime.Run{}, storeError(uuid, err)
	}
	return stripped(after), nil
}
