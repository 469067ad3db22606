package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestAssignmentOnThePages: rita takes a waiting run from its page (303 with a flash, the box
// names her); ada sees "Take it over" and an assign form, sam (support) sees who holds it and
// no form; the inbox's Mine tab lists it for rita and not for ada, Unassigned lists it for
// nobody, the assignee column and ?assignee= show it; a take of a run someone holds by a
// reviewer is refused with a flash; ada reassigns it with force.
func TestAssignmentOnThePages(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "mail")
	other := app.pause(runtime.RoleAdmin, "mail")
	rita, ada, sam := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin), app.login(runtime.RoleSupport)

	page := rita.get(views.RunPath(run)).doc(t)
	if page.Find(`[data-testid="assignee"]`).Text() != "Nobody has taken this run." || page.Find(`[data-testid="take"]`).Text() != "Take it" {
		t.Fatalf("rita's box: %q, take %q", page.Find(`[data-testid="assignee"]`).Text(), page.Find(`[data-testid="take"]`).Text())
	}
	if page.Find(`[data-testid="assign-form"]`).Length() != 0 {
		t.Error("a reviewer is offered to assign to others without reviewers_may_assign")
	}
	res := rita.postForm(views.AssignmentPath(run), url.Values{"_csrf": {rita.token()}, "assignee": {"rita"}})
	wantSeeOtherToRun(t, "take", res, run)
	wantFlash(t, rita, msgAssigned)
	if got := rita.get(views.RunPath(run)).doc(t).Find(`[data-testid="assignee"]`).Text(); !strings.Contains(got, "Assigned to rita") {
		t.Errorf("after the take the box says %q", got)
	}
	adaPage := ada.get(views.RunPath(run)).doc(t)
	if adaPage.Find(`[data-testid="take"]`).Text() != "Take it over" || adaPage.Find(`[data-testid="assign-form"] option`).Length() < 2 ||
		adaPage.Find(`[data-testid="take-form"] input[name="force"]`).Length() != 1 {
		t.Errorf("ada's box: take %q, %d people", adaPage.Find(`[data-testid="take"]`).Text(), adaPage.Find(`[data-testid="assign-form"] option`).Length())
	}
	samPage := sam.get(views.RunPath(run)).doc(t)
	if !strings.Contains(samPage.Find(`[data-testid="assignee"]`).Text(), "rita") || samPage.Find(`[data-testid="run-assignment"] form`).Length() != 0 {
		t.Error("support does not see who holds the run, or is offered a form")
	}

	rows := func(c *client, query string) []string {
		t.Helper()
		res := c.get("/runs" + query)
		if res.status != http.StatusOK {
			t.Fatalf("GET /runs%s: %d", query, res.status)
		}
		var out []string
		for _, s := range res.doc(t).Find(`[data-testid="inbox-row-link"]`).EachIter() {
			out = append(out, strings.TrimPrefix(s.AttrOr("href", ""), "/runs/"))
		}
		return out
	}
	if got := rows(rita, "?assigned=me"); len(got) != 1 || got[0] != run {
		t.Errorf("rita's Mine tab: %v, want %s", got, run)
	}
	if got := rows(ada, "?assigned=me"); len(got) != 0 {
		t.Errorf("ada's Mine tab: %v, want none", got)
	}
	if got := rows(ada, "?assigned=none"); len(got) != 1 || got[0] != other {
		t.Errorf("Unassigned tab: %v, want %s", got, other)
	}
	if got := rows(ada, "?assignee=rita"); len(got) != 1 || got[0] != run {
		t.Errorf("?assignee=rita: %v, want %s", got, run)
	}
	inbox := ada.get("/runs").doc(t)
	if inbox.Find(`[data-testid="tab-mine"]`).Length() != 1 || inbox.Find(`[data-testid="tab-everyone"]`).AttrOr("aria-current", "") != "page" ||
		strings.TrimSpace(inbox.Find(`[data-testid="tab-everyone"]`).Text()) != "All" {
		t.Error("the inbox lacks the whose tabs, or does not mark All current")
	}
	if got := strings.TrimSpace(inbox.Find(`[data-testid="inbox-row-assignee"]`).Text()); got != "rita" {
		t.Errorf("assignee column %q, want rita", got)
	}
	if res := ada.get("/runs?assignee=nobody-here"); res.status != http.StatusBadRequest {
		t.Errorf("?assignee= of no person: %d, want 400", res.status)
	}
	if res := ada.get("/runs?assigned=someone"); res.status != http.StatusBadRequest {
		t.Errorf("?assigned=someone: %d, want 400", res.status)
	}

	reviewer2 := app.login(runtime.RoleReviewer)
	res = reviewer2.postForm(views.AssignmentPath(run), url.Values{"_csrf": {reviewer2.token()}, "assignee": {"rita"}})
	wantSeeOtherToRun(t, "a second take by rita", res, run)
	res = ada.postForm(views.AssignmentPath(run), url.Values{"_csrf": {ada.token()}, "assignee": {"ada"}})
	wantSeeOtherToRun(t, "ada takes without force", res, run)
	wantFlash(t, ada, "Someone else took this run first")
	res = ada.postForm(views.AssignmentPath(run), url.Values{"_csrf": {ada.token()}, "assignee": {"ada"}, "force": {"1"}})
	wantSeeOtherToRun(t, "ada takes over", res, run)
	if r := app.row(run); r.Assignee == 0 || r.AssigneeName != "ada" {
		t.Errorf("after the take-over the run is assigned to %q", r.AssigneeName)
	}
	res = rita.postForm(views.AssignmentPath(run), url.Values{"_csrf": {rita.token()}, "assignee": {""}})
	wantSeeOtherToRun(t, "rita releases ada's run", res, run)
	wantFlash(t, rita, "Someone else took this run first")
}
