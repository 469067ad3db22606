package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
)

func TestCancelAsksThenCancels(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleReviewer, "mail")
	rita := app.login(runtime.RoleReviewer)

	confirm := rita.get("/runs/" + uuid + "/cancel")
	doc := confirm.doc(t)
	if confirm.status != http.StatusOK || strings.TrimSpace(doc.Find("h1").Text()) != "Cancel this run?" {
		t.Fatalf("confirmation page: %d %q", confirm.status, doc.Find("h1").Text())
	}
	form := doc.Find(`[data-testid="cancel-form"]`)
	if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/runs/"+uuid+"/cancel" ||
		form.Find(`input[name="_csrf"]`).AttrOr("value", "") == "" {
		t.Fatal("the confirmation has no POST form with a CSRF token")
	}
	if app.row(uuid).Status != runtime.StatusWaitingApproval {
		t.Fatal("showing the confirmation changed the run")
	}
	res := rita.postForm("/runs/"+uuid+"/cancel", url.Values{"_csrf": {rita.token()}})
	wantSeeOther(t, "cancel", res, "/runs/"+uuid)
	if got := rita.flashTexts(); got != "The run was cancelled." {
		t.Errorf("flash %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusCancelled {
		t.Errorf("status %s, want cancelled", run.Status)
	}
	if cards := rita.rowsOf("/runs"); len(cards) != 0 {
		t.Errorf("the cancelled run is still in the inbox: %v", cards)
	}
	again := rita.postForm("/runs/"+uuid+"/cancel", url.Values{"_csrf": {rita.token()}})
	wantSeeOther(t, "cancel again", again, "/runs/"+uuid)
	if got := rita.flashTexts(); got != "This run had already finished; nothing was cancelled." {
		t.Errorf("second cancel flash %q", got)
	}
	wantSeeOther(t, "confirmation of a finished run", rita.get("/runs/"+uuid+"/cancel"), "/runs/"+uuid)
	if acts := app.auditActions(); !slices.Contains(acts, "run_cancel/success") || !slices.Contains(acts, "run_cancel/run_not_cancellable") {
		t.Errorf("audit %v lacks the cancellations", acts)
	}
}

func TestCancelIsForOwnersAndAdmins(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita, sam := app.login(runtime.RoleReviewer), app.login(runtime.RoleSupport)
	if doc := rita.get("/runs/" + uuid).doc(t); doc.Find(`[data-testid="cancel-link"]`).Length() != 0 {
		t.Error("a reviewer is offered Cancel on someone else's run")
	}
	if res := rita.get("/runs/" + uuid + "/cancel"); res.status != http.StatusForbidden {
		t.Errorf("reviewer's confirmation page for another's run: %d, want 403", res.status)
	}
	if res := rita.postForm("/runs/"+uuid+"/cancel", url.Values{"_csrf": {rita.token()}}); res.status != http.StatusForbidden {
		t.Errorf("reviewer cancelling another's run: %d, want 403", res.status)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		res := sam.call(method, "/runs/"+uuid+"/cancel")
		if res.status != http.StatusForbidden {
			t.Errorf("support %s cancel: %d, want 403", method, res.status)
		}
	}
	if res := rita.postForm("/runs/0a6e2b58-1234-4abc-9def-000000000000/cancel", url.Values{"_csrf": {rita.token()}}); res.status != http.StatusNotFound {
		t.Errorf("cancel of an unknown run: %d, want 404", res.status)
	}
	if app.row(uuid).Status != runtime.StatusWaitingApproval {
		t.Error("a refused cancel changed the run")
	}
	ada := app.login(runtime.RoleAdmin)
	wantSeeOther(t, "admin cancels", ada.postForm("/runs/"+uuid+"/cancel", url.Values{"_csrf": {ada.token()}}), "/runs/"+uuid)
}
