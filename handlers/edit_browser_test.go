package handlers

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestBrowserEditDiffApprove: in Chromium, a reviewer reads the model's words (collapsed
// beyond a few lines), opens "Edit and approve", changes the amount, reviews the before →
// after table and approves; the tool runs with the edited amount and the run page shows
// the proposed, approved and effective arguments.
func TestBrowserEditDiffApprove(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	uuid := app.pause(runtime.RoleAdmin, "edit")
	b := newTab(t, app.testApp)
	b.signIn(runtime.RoleReviewer)
	b.open(views.RunPath(uuid))
	b.do("find the card", chromedp.WaitVisible(chromedp.CSS(card(uuid, `[data-testid="edit-call"]`))))
	if got := b.text(card(uuid, `[data-testid="model-words-head"]`)); !strings.Contains(got, "<b>now</b>") || strings.Contains(got, "Line five") {
		t.Errorf("the model's words show %q", got)
	}
	if open := evalIn[bool](b, `document.querySelector('[data-testid="model-words-more"]').open`); open {
		t.Errorf("the rest of the model's words is not collapsed")
	}
	b.screenshot("edit-card")
	b.do("open Edit and approve",
		chromedp.Click(chromedp.CSS(card(uuid, `[data-testid="edit-call"]`))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="edit-form"] `+inputField(uuid, "/amount"))),
	)
	if got := b.value(inputField(uuid, "/amount")); got != "100" {
		t.Fatalf("the form shows amount %q, want the model's 100", got)
	}
	b.setValue(inputField(uuid, "/amount"), "40")
	b.do("review the changes",
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="change-table"]`)),
	)
	b.screenshot("edit-review")
	if got := strings.Join(strings.Fields(b.text(`[data-testid="change-row"]`)), " "); got != "/amount changed 100 40" {
		t.Errorf("change row %q", got)
	}
	if n := len(app.ran()); n != 0 {
		t.Fatalf("the tool ran before the approval")
	}
	b.do("approve with the changes",
		chromedp.Click(chromedp.CSS(`[data-testid="edit-approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-summary"]`)),
	)
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Approval recorded") {
		t.Errorf("flash %q", got)
	}
	b.waitFor("the run completes", views.RunPath(uuid), func() bool { return b.statusIs("completed") })
	b.screenshot("edit-run-page")
	if got := b.text(`[data-testid="call-approved"]`); !strings.Contains(got, `"amount": 40`) {
		t.Errorf("approved arguments %q", got)
	}
	if got := b.text(`[data-testid="call-proposed"]`); !strings.Contains(got, `"amount": 100`) {
		t.Errorf("proposed arguments %q", got)
	}
	if got := app.ran(); len(got) != 1 || got[0] != `{"amount":40,"order_id":"A1"}` {
		t.Errorf("the tool ran with %q", got)
	}
}
