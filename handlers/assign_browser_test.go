package handlers

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestBrowserTakeAndSeeItTaken: in two browsers, rita takes a waiting run with "Take it"; ada,
// on the same run page, sees it assigned to rita after a reload, with "Take it over"; rita's
// inbox lists it under Mine.
func TestBrowserTakeAndSeeItTaken(t *testing.T) {
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
	rita.open("/runs?assigned=me")
	if n := rita.count(`[data-testid="inbox-row-link"]`); n != 1 {
		t.Errorf("rita's Mine tab lists %d runs, want 1", n)
	}
}
