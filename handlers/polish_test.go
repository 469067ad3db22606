package handlers

import (
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestHomeCountsWhatWaits: the start page counts the runs waiting for an approval and for
// input and those expiring within the hour, each linking to that view of the inbox.
func TestHomeCountsWhatWaits(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestBulkNamesWhoMayNotBeApproved: in a four-eyes batch holding a run the reviewer started,
// the confirmation says before the decision that that run may be denied but not approved and
// why, lists each run compactly (subject, tool, arguments on one line), and offers to approve
// only the others; approving decides those and names the reason for the one left waiting.
func TestBulkNamesWhoMayNotBeApproved(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	own, other := app.pause(runtime.RoleReviewer, "foureyes"), app.pause(runtime.RoleAdmin, "foureyes")
	rita := app.login(runtime.RoleReviewer)
	doc := rita.get(bulkPath(own, other)).doc(t)
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="bulk-approve"]`).Text()), " "); got != "✓ Approve the 1 you may approve" {
		t.Errorf("the Approve button reads %q", got)
	}
	if got := doc.Find(`[data-testid="bulk-deny-only-run"]`); got.Length() != 1 || got.AttrOr("data-run", "") != own ||
		!strings.Contains(got.Text(), "(four-eyes: you started this run)") {
		t.Errorf("the runs that may not be approved: %d, %q", got.Length(), got.Text())
	}
	item := doc.Find(`[data-testid="bulk-item"][data-run="` + other + `"]`)
	if got := item.Find(`[data-testid="call-arguments"]`).Text(); strings.Contains(got, "\n") || !strings.HasPrefix(got, `{"to":"ops@example.com",`) {
		t.Errorf("the item's arguments read %q, want one line of JSON", got)
	}
	if got := item.Find(`[data-testid="bulk-item-tool"]`).Text(); got != "send_mail" {
		t.Errorf("the item's tool reads %q", got)
	}
	if item.Find(`[data-testid="bulk-item-subject"]`).Text() == "" || doc.Find(`[data-testid="run-card"]`).Length() != 0 {
		t.Error("the items are not listed compactly with their subject")
	}
	form := rita.bulkFormOf(views.DecisionApprove, 2, own, other)
	form.Set("_csrf", rita.token())
	res := rita.postForm(views.BulkPath, form)
	got := outcomes(t, res)
	if got[other] != "approved" || got[own] != "four-eyes: you started this run" {
		t.Errorf("outcomes %v", got)
	}
	if s := app.row(own).Status; s != runtime.StatusWaitingApproval {
		t.Errorf("the reviewer's own run is %s, want still waiting", s)
	}
	if got := strings.TrimSpace(res.doc(t).Find(`[data-testid="bulk-summary"]`).Text()); got != "1 of 2 approved." {
		t.Errorf("summary %q", got)
	}
}

// TestInboxSelectAllWithoutJavaScript: "Select all on this page" is a GET form carrying the
// page's query; its answer is the same page with every bulk checkbox ticked, and a link back
// without the selection.
func TestInboxSelectAllWithoutJavaScript(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail1, mail2, wipe := app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "wipe")
	app.pause(runtime.RoleAdmin, "ask")
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = suspended_at - 600`)
	rita := app.login(runtime.RoleReviewer)
	doc := rita.get("/runs?kind=approval&older=1m").doc(t)
	form := doc.Find(`form[data-testid="bulk-select-all-form"]`)
	if form.AttrOr("method", "") != "get" || form.AttrOr("action", "") != "/runs" || form.Find(`button[type="submit"][name="select"][value="all"]`).Length() != 1 {
		t.Fatal("no Select all button submitting the page again")
	}
	fields := formValues(form)
	if fields.Get("kind") != "approval" || fields.Get("older") != "1m" {
		t.Errorf("the Select all form carries %v, want the page's query", fields)
	}
	if n := doc.Find(`[data-testid="bulk-select"][checked]`).Length(); n != 0 {
		t.Errorf("%d boxes ticked before selecting all", n)
	}
	fields.Set("select", "all")
	doc = rita.get("/runs?" + fields.Encode()).doc(t)
	for _, r := range []string{mail1, mail2, wipe} {
		if doc.Find(`[data-testid="inbox-row"][data-run="`+r+`"] [data-testid="bulk-select"][checked]`).Length() != 1 {
			t.Errorf("%s is not ticked after Select all", r)
		}
	}
	if got, _ := doc.Find(`[data-testid="bulk-select-none"]`).Attr("href"); got != "/runs?kind=approval&older=1m" {
		t.Errorf("Clear the selection leads to %q", got)
	}
}
