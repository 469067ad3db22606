package engine_test

import (
	"errors"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestScopedTokenSeesWhatItMayActOn: a service account with only the approve (or cancel)
// scope may act on a run it cannot read; it is not told the run does not exist.
func TestScopedTokenSeesWhatItMayActOn(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	approver := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"approve"}}
	if _, err := e.rt.Get(e.ctx, approver, run.UUID); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Fatalf("get without read scope err = %v", err)
	}
	approve(t, e, approver, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	other := e.startAndRun(admin)
	canceller := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"cancel"}}
	if _, err := e.rt.Cancel(e.ctx, canceller, other.UUID); err != nil {
		t.Fatalf("cancel with cancel scope only: %v", err)
	}
}
