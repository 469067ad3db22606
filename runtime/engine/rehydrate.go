package engine

import (
	"encoding/json"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// rehydrate turns run's stored state into the pause it resumes as kind (contApproval or
// contInput): decoded whole and checked to be that pause, an input pause with a usable schema
// (pauseFits with schema.Usable). It is the one way a stored state becomes runnable:
// decisions, the run page and the API (Get) and a continuation a worker takes from the queue
// all go through it. A state it refuses is corrupt (CodeCorruptSuspendedState).
func rehydrate(run runtime.Run, kind string) (runtime.SuspendedState, *runtime.Error) {
	return rehydrateWith(run, kind, schema.Usable)
}

// rehydrateWith is rehydrate with usable checking an input pause's schema.
func rehydrateWith(run runtime.Run, kind string, usable func(json.RawMessage) bool) (runtime.SuspendedState, *runtime.Error) {
	st, err := runtime.DecodeState(run.SuspendedState)
	if err != nil {
		return st, unreadableState(run, err)
	}
	return st, pauseFits(st.PauseState, run, kind, usable)
}

// pauseFits checks that p is the pause run's status says (kind) and that an input pause's
// schema is usable, by usable.
func pauseFits(p runtime.PauseState, run runtime.Run, kind string, usable func(json.RawMessage) bool) *runtime.Error {
	if p.IsInputPause() != (kind == contInput) {
		return newError(runtime.CodeCorruptSuspendedState, run.UUID, "the stored state does not match the run's status")
	}
	if kind == contInput && !usable(p.InputSchema) {
		return unusableSchema(run.UUID)
	}
	return nil
}

func unusableSchema(uuid string) *runtime.Error {
	return newError(runtime.CodeCorruptSuspendedState, uuid, "the stored input schema is not usable")
}

// offeredSet is the configuration's allowed tools that are registered (live, re-resolved on
// every segment).
func offeredSet(cfg runtime.Configuration, reg *tool.Registry) map[string]bool {
	out := map[string]bool{}
	for _, n := range cfg.Tools {
		if _, ok := reg.Get(n); ok {
			out[n] = true
		}
	}
	return out
}

// unreadableState is the error of a run whose stored state does not decode.
func unreadableState(run runtime.Run, err error) *runtime.Error {
	if id, ok := runtime.MissingSealingKey(err); ok {
		return runtime.SealingKeyMissing(run.UUID, id)
	}
	return &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: run.UUID, Message: "the run's stored state could not be read", Err: err}
}
