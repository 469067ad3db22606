package handlers

import (
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestTimelineNamesTheServiceAccount: a run started and approved by a service account shows
// the account's name in the run page's timeline, not "a service account".
func TestTimelineNamesTheServiceAccount(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ctx := t.Context()
	svc := runtime.Actor{Name: "ci-bot", Role: runtime.RoleService, Scopes: []string{runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove}}
	run, err := app.rt.Start(ctx, svc, "mail", "please help")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.rt.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	v := wantStatus(t, app, run.UUID, runtime.StatusWaitingApproval)
	if _, err := app.rt.Approve(ctx, svc, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: v.Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, app, run.UUID, runtime.StatusCompleted)
	got := app.login(runtime.RoleAdmin).get("/runs/" + run.UUID).doc(t).Find(`[data-testid="timeline"]`).Text()
	for _, want := range []string{"Started by service account ci-bot", "Approved by service account ci-bot"} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline %q does not say %q", got, want)
		}
	}
	if strings.Contains(got, "a service account") {
		t.Errorf("timeline %q leaves the service account unnamed", got)
	}
}
