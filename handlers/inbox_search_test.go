package handlers

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

// TestInboxSearchFindsWhatPeopleType: the one search box finds waiting runs by the start of
// the run id, the configuration (identifier or name), a tool, the subject, and who started
// the run (a person or a service account, which the row names); text that matches nothing is
// an empty list with every filter kept, never an error page.
func TestInboxSearchFindsWhatPeopleType(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	mail := app.pause(runtime.RoleReviewer, "mail")
	refund := app.pause(runtime.RoleAdmin, "refund")
	ask := app.pause(runtime.RoleAdmin, "ask")
	wipe := app.pauseAs(runtime.Actor{Name: "nightly-ci", Role: runtime.RoleService, Scopes: []string{runtime.ScopeRun}}, "wipe")
	for i, uuid := range []string{mail, refund, ask, wipe} {
		app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-int64(300-i), uuid)
	}
	c := app.login(runtime.RoleSupport)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{ask[:8], []string{ask}},
		{strings.ToUpper(refund[:13]), []string{refund}},
		{"Refund assistant", []string{refund}},
		{"city", []string{ask}},
		{"refund", []string{refund}},
		{"issue_ref", []string{refund}},
		{"SEND_MAIL", []string{mail}},
		{testUsers[runtime.RoleReviewer], []string{mail}},
		{strings.ToUpper(testUsers[runtime.RoleAdmin]), []string{refund, ask}},
		{"  ask_city  ", []string{ask}},
		{"ModelGuess", []string{ask}},
		{"scope=ALL", []string{wipe}},
		{"nightly", []string{wipe}},
	} {
		path := "/runs?q=" + url.QueryEscape(tc.q)
		if got := c.rowsOf(path); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("search %q: runs %v, want %v", tc.q, got, tc.want)
		}
	}
	row := c.get("/runs?q=nightly").doc(t).Find(`[data-testid="inbox-row"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="inbox-row-started-by"]`).Text()); got != "service account nightly-ci" {
		t.Errorf("the service account's run is started by %q, want it named", got)
	}
	if got := strings.TrimSpace(row.Find(`[data-testid="inbox-row-subject"]`).Text()); got != "scope=all" {
		t.Errorf("the wipe run's subject is %q", got)
	}
	if got := strings.TrimSpace(c.get("/runs/" + wipe).doc(t).Find(`[data-testid="summary-owner"]`).Text()); got != "service account nightly-ci" {
		t.Errorf("the run page says the service account's run was started by %q", got)
	}
	escaped := c.get("/runs?q=" + url.QueryEscape(deskSecret))
	if got := escaped.doc(t).Find(`[data-testid="inbox-row-subject"]`).Text(); !strings.Contains(got, deskXSS) ||
		strings.Contains(escaped.body, "<script>alert(1)") || strings.Contains(escaped.body, "<img src=x") {
		t.Errorf("the mail run's subject %q is not shown as escaped text", got)
	}
	for _, q := range []string{"xyz", "no such run", "%", "a_b", "<blink>", strings.Repeat("z", 2000), "ffffffff-0000"} {
		path := "/runs?kind=approval&tool=send_mail&older=5m&q=" + url.QueryEscape(q)
		res := c.get(path)
		if res.status != http.StatusOK {
			t.Errorf("search %.20q: %d, want 200", q, res.status)
			continue
		}
		doc := res.doc(t)
		if doc.Find(`[data-testid="inbox-empty"]`).Length() != 1 || len(c.rowsOf(path)) != 0 {
			t.Errorf("search %.20q: want the empty-list note and no runs", q)
		}
		if got := doc.Find(`[data-testid="filter-q"]`).AttrOr("value", ""); got != q {
			t.Errorf("search %.20q: the box keeps %.20q", q, got)
		}
		for id, want := range map[string]string{"filter-tool": "send_mail", "filter-older": "5m"} {
			if got := doc.Find(`#`+id+` option[selected]`).AttrOr("value", ""); got != want {
				t.Errorf("search %.20q: %s keeps %q, want %q", q, id, got, want)
			}
		}
		if got := doc.Find(`[data-testid="inbox-filters"] input[name="kind"]`).AttrOr("value", ""); got != "approval" {
			t.Errorf("search %.20q: the kind is not kept (%q)", q, got)
		}
	}
	if res := c.get("/runs?q=%FF"); res.status != http.StatusBadRequest {
		t.Errorf("invalid UTF-8 in the search: %d, want 400", res.status)
	}
}
