package handlers

import (
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

// TestHomeCountsWhatWaits: the start page counts the runs waiting for an approval and for
// input and those expiring within the hour, each linking to that view of the inbox.
func TestHomeCountsWhatWaits(t *testing.T) {
	app := newDeskApp(t)
	app.pause(runtime.RoleAdmin, "mail")
	soon := app.pause(runtime.RoleAdmin, "wipe")
	app.pause(runtime.RoleAdmin, "ask")
	later := app.pause(runtime.RoleAdmin, "ask")
	app.setDeadline(soon, time.Now().Add(20*time.Minute), "deny", false)
	app.setDeadline(later, time.Now().Add(3*time.Hour), "deny", false)
	doc := app.login(runtime.RoleReviewer).get("/").doc(t)
	for id, want := range map[string]string{"home-approval": "2", "home-input": "2", "home-soon": "1"} {
		if got := strings.TrimSpace(doc.Find(`[data-testid="` + id + `-count"]`).Text()); got != want {
			t.Errorf("%s counts %q, want %s", id, got, want)
		}
	}
	for id, want := range map[string]string{"home-approval": "/runs?kind=approval", "home-input": "/runs?kind=input", "home-soon": "/runs?deadline=soon"} {
		if got, _ := doc.Find(`[data-testid="` + id + `"]`).Attr("href"); got != want {
			t.Errorf("%s links to %q, want %s", id, got, want)
		}
	}
}

// TestInboxIntroductionOnlyOnTheFirstVisit: the inbox's introduction shows on a session's first
// visit, not on later ones; the filters are behind a disclosure, open while a filter is set,
// whose summary counts them, and Clear filters sits beside the tabs, keeping the kind.
func TestInboxIntroductionOnlyOnTheFirstVisit(t *testing.T) {
	app := newDeskApp(t)
	app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	if n := rita.get("/runs").doc(t).Find(`[data-testid="inbox-info"]`).Length(); n != 1 {
		t.Errorf("the first visit shows %d introductions, want 1", n)
	}
	doc := rita.get("/runs").doc(t)
	if n := doc.Find(`[data-testid="inbox-info"]`).Length(); n != 0 {
		t.Errorf("the second visit shows %d introductions, want none", n)
	}
	panel := doc.Find(`details[data-testid="inbox-filters-panel"]`)
	if _, open := panel.Attr("open"); panel.Find(`form[data-testid="inbox-filters"]`).Length() != 1 || open {
		t.Errorf("without a filter the filters are not behind a closed disclosure")
	}
	if doc.Find(`[data-testid="filter-clear"]`).Length() != 0 {
		t.Error("Clear filters is offered without a filter")
	}
	doc = rita.get("/runs?kind=approval&tool=send_mail&older=5m").doc(t)
	panel = doc.Find(`details[data-testid="inbox-filters-panel"]`)
	if _, open := panel.Attr("open"); !open {
		t.Error("with filters set the disclosure is closed")
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="inbox-filters-summary"]`).Text()), " "); got != "Filters and search (2 set)" {
		t.Errorf("the summary reads %q", got)
	}
	if got, _ := doc.Find(`.inbox-bar [data-testid="filter-clear"]`).Attr("href"); got != "/runs?kind=approval" {
		t.Errorf("Clear filters beside the tabs leads to %q, want /runs?kind=approval", got)
	}
}
