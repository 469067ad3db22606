package engine_test

import (
	"slices"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
)

// TestChangedAfterEachCommittedTransition: Config.Changed is called after each transition
// that moves the run's status or pause, the transition committed by then (its status read
// from another connection), and not for a transition its guard refused.
func TestChangedAfterEachCommittedTransition(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{"to":"x"}`))}, func(e *env, c *engine.Config) {
		c.Changed = func() {
			var status string
			if err := e.sql.QueryRow(`SELECT status FROM tx_nrllm_agentrun ORDER BY uid DESC LIMIT 1`).Scan(&status); err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, status)
		}
	})
	run := e.startAndRun(reviewer)
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if _, err := e.rt.Cancel(e.ctx, admin, run.UUID); err == nil {
		t.Fatal("cancelling a completed run succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"queued", "running", "waiting_for_approval", "running", "completed"}
	if !slices.Equal(seen, want) {
		t.Errorf("Changed saw the run %v, want %v", seen, want)
	}
}
