package engine_test

import (
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestRecoveredInputContinuationRefusesAnUnusableSchema: a continuation taken from the queue
// after recovery rehydrates its stored state as a decision does, so an input pause whose
// stored schema became unusable ({}) is corrupt state: the run fails with error class
// CorruptSuspendedState and the input tool never runs (it would run with the model's guess,
// the person's values dropped, since {} declares no key).
func TestRecoveredInputContinuationRefusesAnUnusableSchema(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{"city":"ModelGuess","note":"keep"}`)), {Content: "done"}})
	run := e.startAndRun(admin)
	e.hooks.arm(runtime.HookAfterClaim)
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusRunning)
	res, err := e.sql.ExecContext(e.ctx, `UPDATE tx_nrllm_agentrun SET suspended_state = REPLACE(suspended_state, ?, ?) WHERE uid = ?`,
		`"inputSchema":`+citySchema, `"inputSchema":{}`, run.UID)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("empty the stored input schema: %d rows, %v", n, err)
	}
	e.clock.Advance(2 * time.Minute)
	if rep, err := e.rt.Reap(e.ctx, 50); err != nil || rep.Requeued != 1 {
		t.Fatalf("reap = %+v, %v", rep, err)
	}
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	if got := e.wantStatus(run.UUID, runtime.StatusFailed); got.ErrorClass != "CorruptSuspendedState" {
		t.Fatalf("error class %q, want CorruptSuspendedState", got.ErrorClass)
	}
	if calls := e.rec.get("ask_city"); len(calls) != 0 {
		t.Fatalf("the input tool ran %d time(s) from an unusable schema: %s", len(calls), calls[0])
	}
}
