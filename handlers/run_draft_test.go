package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// draftSecret is a value typed into a draft: it must never reach events, audit rows or logs.
const draftSecret = "DRAFT-SECRET-5e1d"

// inputFormOf returns the hidden fields of the input form c's run page shows for uuid, and
// the page.
func (c *client) inputFormOf(uuid string) (url.Values, *goquery.Document) {
	c.t.Helper()
	res := c.get(views.RunPath(uuid))
	doc := res.doc(c.t)
	form := doc.Find(`#` + views.InputFormID(uuid))
	if res.status != http.StatusOK || form.Length() != 1 {
		c.t.Fatalf("run page of %s: status %d, %d input forms", uuid, res.status, form.Length())
	}
	v := url.Values{}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		v.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	return v, doc
}

// cityShown is the value the city field of uuid's input form shows to c.
func (c *client) cityShown(uuid string) string {
	c.t.Helper()
	_, doc := c.inputFormOf(uuid)
	return doc.Find(`input[name="input/city"]`).AttrOr("value", "")
}

func (a *testApp) draftRows(uuid string) int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRowContext(a.t.Context(), `SELECT COUNT(*) FROM tx_runsdesk_draft WHERE run = ?`, a.row(uuid).UID).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// saveDraft posts city as c's draft of uuid's input form; extra adds header pairs.
func (c *client) saveDraft(uuid, city string, extra ...string) response {
	c.t.Helper()
	form, _ := c.inputFormOf(uuid)
	form.Set("input/city", city)
	return c.postForm(views.RunPath(uuid)+"/draft", form, extra...)
}

func TestDraftRestoredForItsPersonOnAnyDevice(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "ask")
	rita := app.login(runtime.RoleReviewer)
	_, doc := rita.inputFormOf(run)
	if doc.Find(`[data-testid="input-save-draft"]`).AttrOr("formaction", "") != views.RunPath(run)+"/draft" {
		t.Fatalf("the input form has no Save draft button posting to the draft route")
	}
	typed := "x " + draftSecret
	wantSeeOther(t, "save draft", rita.saveDraft(run, typed), views.RunPath(run))
	if got := rita.flashTexts(); !strings.Contains(got, "Draft saved") {
		t.Errorf("flash %q, want the draft's", got)
	}
	if got := rita.cityShown(run); got != typed {
		t.Errorf("rita's form shows %q, want her draft as typed %q", got, typed)
	}
	if got := app.login(runtime.RoleReviewer).cityShown(run); got != typed {
		t.Errorf("rita on another device sees %q, want her draft", got)
	}
	if got := app.login(runtime.RoleAdmin).cityShown(run); got == typed {
		t.Errorf("ada sees rita's draft %q", got)
	}
	if n := app.draftRows(run); n != 1 {
		t.Errorf("%d draft rows, want 1", n)
	}
	for _, ev := range app.storedEvents(run) {
		if strings.Contains(string(ev.Payload), draftSecret) {
			t.Errorf("event %s carries the draft", ev.Kind)
		}
	}
	rows, err := app.audit.RecentAudit(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if strings.Contains(r.Reason+r.Outcome+r.Action, draftSecret) {
			t.Errorf("audit row %+v carries the draft", r)
		}
	}
	if strings.Contains(app.logs.String(), draftSecret) {
		t.Errorf("the server log carries the draft")
	}
}

func TestDraftAutosaveAnswersWithoutRedirect(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "ask")
	rita := app.login(runtime.RoleReviewer)
	if res := rita.saveDraft(run, "Ber", autosaveHeader, "1"); res.status != http.StatusNoContent {
		t.Fatalf("autosave: %d, want 204", res.status)
	}
	if got := rita.cityShown(run); got != "Ber" {
		t.Errorf("after the autosave the form shows %q", got)
	}
	stale := url.Values{"_csrf": {rita.token()}, views.FormFieldDigest: {"0000"}, "input/city": {"x"}}
	if res := rita.postForm(views.RunPath(run)+"/draft", stale, autosaveHeader, "1"); res.status != http.StatusConflict {
		t.Errorf("autosave of a stale form: %d, want 409", res.status)
	}
	wantSeeOther(t, "a stale draft", rita.postForm(views.RunPath(run)+"/draft", stale), views.RunPath(run))
	if got := rita.flashTexts(); !strings.Contains(got, "The form changed") {
		t.Errorf("stale draft flash %q", got)
	}
	if res := app.login(runtime.RoleSupport).postForm(views.RunPath(run)+"/draft", stale); res.status != http.StatusForbidden {
		t.Errorf("support saves a draft: %d, want 403", res.status)
	}
}

func TestDraftRemovedOnSubmitAndCancel(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	submitted, cancelled := app.pause(runtime.RoleAdmin, "ask"), app.pause(runtime.RoleAdmin, "ask")
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	for _, run := range []string{submitted, cancelled} {
		wantSeeOther(t, "rita's draft", rita.saveDraft(run, "x"), views.RunPath(run))
		wantSeeOther(t, "ada's draft", ada.saveDraft(run, "y"), views.RunPath(run))
	}
	form, _ := rita.inputFormOf(submitted)
	form.Set("input/city", "Bern")
	wantSeeOther(t, "submit", rita.postForm(views.RunPath(submitted)+"/input", form), views.RunPath(submitted))
	cancel := url.Values{"_csrf": {ada.token()}}
	wantSeeOther(t, "cancel", ada.postForm(views.RunPath(cancelled)+"/cancel", cancel), views.RunPath(cancelled))
	for name, run := range map[string]string{"submit": submitted, "cancel": cancelled} {
		if n := app.draftRows(run); n != 0 {
			t.Errorf("after %s: %d drafts left, want none", name, n)
		}
	}
}

func TestDraftUnreadableOrOverriddenIsNotShownAsRestored(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "ask")
	rita := app.login(runtime.RoleReviewer)
	wantSeeOther(t, "save", rita.saveDraft(run, "x"), views.RunPath(run))

	form, _ := rita.inputFormOf(run)
	form.Set("input/city", "y")
	res := rita.postForm(views.RunPath(run)+"/input", form)
	doc := res.doc(t)
	if res.status != http.StatusUnprocessableEntity || doc.Find(`input[name="input/city"]`).AttrOr("value", "") != "y" {
		t.Fatalf("an invalid submission: %d, city %q; want 422 with the value as posted", res.status, doc.Find(`input[name="input/city"]`).AttrOr("value", ""))
	}
	if got := doc.Find(`[data-testid="input-draft-status"]`).Text(); strings.Contains(got, "restored") {
		t.Errorf("a rejected submission's form says %q", got)
	}
	if n := app.draftRows(run); n != 1 {
		t.Errorf("a rejected submission left %d drafts, want the draft kept", n)
	}

	app.exec(`UPDATE tx_runsdesk_draft SET form_values = '%zz' WHERE be_user = ?`, app.uids[runtime.RoleReviewer])
	_, doc = rita.inputFormOf(run)
	if got := doc.Find(`input[name="input/city"]`).AttrOr("value", ""); got != "" {
		t.Errorf("a corrupt draft shows %q, want the form afresh", got)
	}
	if got := doc.Find(`[data-testid="input-draft-status"]`).Text(); !strings.Contains(got, "could not be read") {
		t.Errorf("a corrupt draft's status %q, want it said", got)
	}

	app.exec(`UPDATE tx_runsdesk_draft SET form_values = 'rdseal1:k9:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' WHERE be_user = ?`, app.uids[runtime.RoleReviewer])
	_, doc = rita.inputFormOf(run)
	if got := doc.Find(`[data-testid="input-draft-status"]`).Text(); !strings.Contains(got, `sealed with key "k9", which is missing from this desk's key set`) {
		t.Errorf("a draft sealed under a missing key: status %q, want the key named", got)
	}
}

func TestDraftRefusedToWhoMayNotSubmit(t *testing.T) {
	t.Parallel()
	ask := &recordingTool{name: "ask_admin", schema: `{"type":"object","properties":{"city":{"type":"string"}}}`, adminOnly: true}
	app := newTestApp(t, appOptions{tools: []tool.Tool{ask},
		configurations: []runtime.Configuration{inputConfiguration("admin-ask", "ask_admin", `{}`)}})
	run := app.startRun(runtime.RoleAdmin, "admin-ask").Run.UUID
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	if n := rita.get(views.RunPath(run)).doc(t).Find(`[data-testid="input-save-draft"]`).Length(); n != 0 {
		t.Errorf("a reviewer is offered Save draft on an admin-only tool's form")
	}
	form, _ := ada.inputFormOf(run)
	form.Set("_csrf", rita.token())
	form.Set("input/city", "x")
	wantSeeOther(t, "a reviewer's draft", rita.postForm(views.RunPath(run)+"/draft", form), views.RunPath(run))
	if got := rita.flashTexts(); !strings.Contains(got, "You may not submit input") {
		t.Errorf("flash %q, want the submitter refusal", got)
	}
	if n := app.draftRows(run); n != 0 {
		t.Errorf("%d drafts stored for someone who may not submit", n)
	}
}
