package handlers

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/views"
)

// addTwoOfN stores configuration "twoofn": the desk's mail turn under approvals_required: 2.
func (a *testApp) addTwoOfN() {
	a.t.Helper()
	cfg := deskConfiguration("twoofn", "Two-person mail", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", deskArgs)}})
	cfg.Quorum = quorum.Policy{Required: 2}
	if _, err := a.store.UpsertConfiguration(context.Background(), cfg); err != nil {
		a.t.Fatal(err)
	}
}

// TestBulkApproveOfATwoOfNRunIsAVote: in a bulk approval, a run whose turn needs two approvals
// is reported as a vote recorded with the approvals it still needs, not as approved, beside a
// one-approval run of the same group that is approved; the summary says so, the run still
// waits, a repeated batch replays the vote, a new batch of the same voter is "already voted",
// and a second person's batch approves it.
func TestBulkApproveOfATwoOfNRunIsAVote(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	app.addTwoOfN()
	mail, twoOfN := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "twoofn")
	rita := app.login(runtime.RoleReviewer)
	form := withCSRF(rita, rita.bulkFormOf(views.DecisionApprove, 2, mail, twoOfN))
	res := rita.postForm(views.BulkPath, form)
	vote := "vote recorded: 1 of 2 approvals, waiting for 1 more"
	if got, want := outcomes(t, res), map[string]string{mail: "approved", twoOfN: vote}; !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	summary := strings.Join(strings.Fields(res.doc(t).Find(`[data-testid="bulk-summary"]`).Text()), " ")
	if want := "1 of 2 approved. 1 approval was recorded as a vote; its run waits for more approvals."; summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	app.rt.Wait()
	if s := app.row(twoOfN).Status; s != runtime.StatusWaitingApproval {
		t.Fatalf("after one of two approvals the run is %s, want still waiting for approval", s)
	}
	if got := outcomes(t, rita.postForm(views.BulkPath, form)); got[twoOfN] != vote {
		t.Errorf("a repeated batch: %v, want the vote replayed", got)
	}
	again := withCSRF(rita, rita.bulkFormOf(views.DecisionApprove, 1, twoOfN))
	if got := outcomes(t, rita.postForm(views.BulkPath, again)); got[twoOfN] != "already voted: waiting for more approvals" {
		t.Errorf("a new batch of the same voter: %v, want already voted", got)
	}

	ada := app.login(runtime.RoleAdmin)
	got := outcomes(t, ada.postForm(views.BulkPath, withCSRF(ada, ada.bulkFormOf(views.DecisionApprove, 1, twoOfN))))
	if got[twoOfN] != "approved" {
		t.Errorf("the second person's batch: %v, want approved", got)
	}
	app.rt.Wait()
	if s := app.row(twoOfN).Status; s != runtime.StatusCompleted {
		t.Errorf("after two approvals the run is %s, want completed", s)
	}
}
