package engine

import (
	"context"
	"fmt"

	"runsdesk/runtime"
)

// Calls returns the calls run uuid executed, in the order they were answered, each with the
// model's (proposed), the approved and the effective arguments (what the tool was sent), as
// recorded when the call ran. A run actor may not read is RunNotFound; a record that does not
// read is CorruptSuspendedState.
func (r *Runtime) Calls(ctx context.Context, actor runtime.Actor, uuid string) ([]runtime.ExecutedCall, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return nil, e
	}
	if !runtime.MayAct(actor, runtime.ActionRead, run) {
		return nil, newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	return r.executedCalls(ctx, run)
}

// executedCalls reads run's executed calls; one whose arguments do not read (a value that did
// not open, say) is a corrupt state, never guessed at.
func (r *Runtime) executedCalls(ctx context.Context, run runtime.Run) ([]runtime.ExecutedCall, error) {
	calls, err := r.store.ExecutedCalls(ctx, run.UID)
	if err != nil {
		return nil, storeError(run.UUID, err)
	}
	for _, c := range calls {
		if !c.Readable() {
			if id := runtime.UnopenedKey(string(c.Proposed), string(c.Approved), string(c.Effective)); id != "" {
				return nil, runtime.SealingKeyMissing(run.UUID, id)
			}
			return nil, &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: run.UUID,
				Message: fmt.Sprintf("the arguments of call %q could not be read", c.CallID)}
		}
	}
	return calls, nil
}
