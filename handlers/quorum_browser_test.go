package handlers

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestBrowserTwoOfTwoApproval: in two browsers, rita approves a turn that needs two approvals
// (approvals_required: 2): her flash says it was counted, her card shows "1 of 2 approvals:
// rita, just now" and "You approved; waiting for 1 more" and offers no second Approve; ada's card shows
// the tally, and her approval resumes the run, which completes.
func TestBrowserTwoOfTwoApproval(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	app.addTwoOfN()
	run := app.pause(runtime.RoleAdmin, "twoofn")
	rita, ada := newTab(t, app), newTab(t, app)
	rita.signIn(runtime.RoleReviewer)
	ada.signIn(runtime.RoleAdmin)
	rita.open(views.RunPath(run))
	if got := rita.text(`[data-testid="votes-tally"]`); got != "0 of 2 approvals" {
		t.Fatalf("rita's tally before any vote: %q", got)
	}
	rita.do("approve", chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if got := rita.text(`[data-testid="flash"]`); !strings.Contains(got, "Your approval was counted") {
		t.Errorf("rita's flash %q", got)
	}
	if got := rita.text(`[data-testid="votes"]`); !strings.Contains(got, "1 of 2 approvals: rita, just now") {
		t.Errorf("rita's card says %q", got)
	}
	if got := rita.text(`[data-testid="votes-waiting"]`); got != "ℹ You approved; waiting for 1 more" && !strings.Contains(got, "You approved; waiting for 1 more") {
		t.Errorf("rita's note %q", got)
	}
	rita.emulate(1280, "light")
	rita.screenshot("quorum-voted")
	if n := rita.count(`[data-testid="approve"]`); n != 0 {
		t.Errorf("rita is offered Approve again (%d buttons)", n)
	}
	if row := app.row(run); row.Status != runtime.StatusWaitingApproval {
		t.Fatalf("after one of two approvals the run is %s", row.Status)
	}
	ada.open(views.RunPath(run))
	if got := ada.text(`[data-testid="votes-tally"]`); got != "1 of 2 approvals" {
		t.Errorf("ada's tally %q", got)
	}
	ada.do("approve", chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if got := ada.text(`[data-testid="flash"]`); !strings.Contains(got, "Approval recorded; the run continues.") {
		t.Errorf("ada's flash %q", got)
	}
	app.rt.Wait()
	if row := app.row(run); row.Status != runtime.StatusCompleted {
		t.Errorf("after two approvals the run is %s", row.Status)
	}
}
