package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestInputFormRefusesBytesThatAreNotText: an input field holding invalid UTF-8 or a NUL is
// 422 with that field's error, the other values kept, the bad value not echoed, nothing run.
func TestInputFormRefusesBytesThatAreNotText(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	c := w.app.login(runtime.RoleReviewer)
	form := submission(c, v, "key-text-1", url.Values{
		"input/amount": {"12"},
		"input/method": {"card"},
		"input/note":   {"caf\xe9 au lait"},
		"input/tags":   {"first\nsec\x00ond"},
	})
	res := c.postForm(inputPath(v), form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422; body %.500s", res.status, res.body)
	}
	if !utf8.ValidString(res.body) || strings.ContainsRune(res.body, 0) {
		t.Error("the page echoes bytes that are not text")
	}
	doc := res.doc(t)
	for _, ptr := range []string{"/note", "/tags"} {
		got := strings.TrimSpace(doc.Find(`[id="` + views.FieldID(v.Run.UUID, ptr) + `-error"]`).Text())
		if !strings.Contains(got, "not text") {
			t.Errorf("error under %s: %q, want one about bytes that are not text", ptr, got)
		}
	}
	if got := doc.Find(`[id="` + views.FieldID(v.Run.UUID, "/amount") + `-error"]`).Length(); got != 0 {
		t.Errorf("amount has an error")
	}
	if got := doc.Find(`input[name="input/amount"]`).AttrOr("value", ""); got != "12" {
		t.Errorf("amount kept as %q, want 12", got)
	}
	if got := doc.Find(`select[name="input/method"] option[selected]`).AttrOr("value", ""); got != "card" {
		t.Errorf("method kept as %q, want card", got)
	}
	if n := len(w.tool.received()); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
	if run := w.app.row(v.Run.UUID); run.Status != runtime.StatusWaitingInput {
		t.Errorf("run %s, want still waiting for input", run.Status)
	}
}

// TestFormsRefuseBytesThatAreNotText: every other form (sign-in, new run, approval, password)
// answers 400 naming the field when a value holds invalid UTF-8 or a NUL, and changes nothing.
func TestFormsRefuseBytesThatAreNotText(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	anon := app.newClient()
	approval := rita.approvalFormOf(uuid, "approve")
	approval.Set("reason", "fine\x00")
	cases := []struct {
		name  string
		c     *client
		path  string
		form  url.Values
		field string
	}{
		{"sign-in", anon, "/login", url.Values{"username": {"rit\xe4"}, "password": {testPassword}, "_csrf": {anon.csrfFrom("/login")}}, "username"},
		{"new run", rita, "/runs", url.Values{"_csrf": {rita.token()}, "configuration": {"plain"}, "prompt": {"say \xff hello"}}, "prompt"},
		{"approval note", rita, "/runs/" + uuid + "/approval", approval, "reason"},
		{"a field name", rita, "/runs", url.Values{"_csrf": {rita.token()}, "configuration": {"plain"}, "prompt": {"hi"}, "x\xff": {"1"}}, ""},
		{"password", rita, "/account/password", url.Values{"_csrf": {rita.token()}, "current": {testPassword}, "new": {"n\x00w-password-long-enough"}, "confirm": {"another-password-long-enough"}}, "new"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.t = t
			before := app.row(uuid)
			runs := app.runCount()
			res := tc.c.postForm(tc.path, tc.form)
			if res.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %.300s", res.status, res.body)
			}
			msg := res.doc(t).Find("main").Text()
			if !strings.Contains(msg, "not valid text") || (tc.field != "" && !strings.Contains(msg, `"`+tc.field+`"`)) {
				t.Errorf("message %q does not name field %q", strings.TrimSpace(msg), tc.field)
			}
			if !utf8.ValidString(res.body) || strings.ContainsRune(res.body, 0) {
				t.Error("the page echoes bytes that are not text")
			}
			if after := app.row(uuid); after.Status != before.Status || app.runCount() != runs {
				t.Errorf("state changed: run %s -> %s, runs %d -> %d", before.Status, after.Status, runs, app.runCount())
			}
		})
	}
	if res := rita.postForm("/runs", url.Values{"_csrf": {rita.token()}, "configuration": {"plain"}, "prompt": {"café, s'il vous plaît ☕"}}); res.status != http.StatusSeeOther {
		t.Errorf("valid UTF-8 text refused: %d", res.status)
	}
}

// runCount is the number of stored runs.
func (a *testApp) runCount() int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM tx_nrllm_agentrun`).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// TestInputFormRefusesAKeyThatIsNotText: the idempotency key of the input form is not a
// schema field; one that is not text is 400, the run still waits, nothing is stored.
func TestInputFormRefusesAKeyThatIsNotText(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	c := w.app.login(runtime.RoleReviewer)
	form := submission(c, v, "key-\xff", url.Values{"input/amount": {"12"}, "input/method": {"card"}})
	if res := c.postForm(inputPath(v), form); res.status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400; body %.300s", res.status, res.body)
	}
	if n := len(w.tool.received()); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
	if run := w.app.row(v.Run.UUID); run.Status != runtime.StatusWaitingInput {
		t.Errorf("run %s, want still waiting for input", run.Status)
	}
}
