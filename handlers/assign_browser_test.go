package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestBrowserTakeAndSeeItTaken: in two browsers, rita takes a waiting run with "Take it"; ada,
// on the same run page, sees it assigned to rita after a reload, with "Take it over", and
// rita's open page, without a reload, comes to show that ada has it open too (its heartbeat,
// within 30 s); rita's inbox lists the run under Mine.
func TestBrowserTakeAndSeeItTaken(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "mail")
	rita, ada := newTab(t, app), newTab(t, app)
	rita.signIn(runtime.RoleReviewer)
	ada.signIn(runtime.RoleAdmin)
	ada.open(views.RunPath(run))
	if got := ada.text(`[data-testid="assignee"]`); got != "Nobody has taken this run." {
		t.Fatalf("ada sees %q before the take", got)
	}
	rita.open(views.RunPath(run))
	rita.do("take it", chromedp.Click(chromedp.CSS(`[data-testid="take"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if got := rita.text(`[data-testid="assignee"]`); !strings.Contains(got, "Assigned to rita") {
		t.Fatalf("rita sees %q after her take", got)
	}
	ada.waitFor("ada sees the run taken", views.RunPath(run), func() bool {
		return strings.Contains(ada.text(`[data-testid="assignee"]`), "rita")
	})
	if got := ada.text(`[data-testid="take"]`); got != "Take it over" {
		t.Errorf("ada's button %q, want Take it over", got)
	}
	second := app.pause(runtime.RoleAdmin, "mail")
	rita.open(views.RunPath(second))
	if got := rita.text(`[data-testid="presence"]`); got != "Nobody else has this page open." {
		t.Fatalf("rita alone on the second run sees %q", got)
	}
	ada.open(views.RunPath(second))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(rita.text(`[data-testid="presence"]`), "ada") {
		if time.Now().After(deadline) {
			t.Fatalf("rita's page still says %q 30 s after ada opened the run", rita.text(`[data-testid="presence"]`))
		}
		time.Sleep(500 * time.Millisecond)
	}
	rita.open("/runs?assigned=me")
	if n := rita.count(`[data-testid="inbox-row-link"]`); n != 1 {
		t.Errorf("rita's Mine tab lists %d runs, want 1", n)
	}
}
