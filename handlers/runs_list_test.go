package handlers

import (
	"cmp"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/views"
)

func TestInboxListsWaitingRunsLongestWaitingFirst(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	input := app.pause(runtime.RoleAdmin, "ask")
	mail := app.pause(runtime.RoleAdmin, "mail")
	refund := app.pause(runtime.RoleAdmin, "refund")
	done := app.pause(runtime.RoleAdmin, "plain")
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-3*3600, refund)
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-600, input)
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-60, mail)

	c := app.login(runtime.RoleReviewer)
	res := c.get("/runs")
	if res.status != http.StatusOK {
		t.Fatalf("GET /runs: %d", res.status)
	}
	doc := res.doc(t)
	if got, want := c.rowsOf("/runs"), []string{refund, input, mail}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v (longest waiting first; the finished run %s not listed)", got, want, done)
	}
	for _, tc := range []struct{ testid, want string }{
		{"count-all", "3"}, {"count-approval", "2"}, {"count-input", "1"},
	} {
		if got := strings.TrimSpace(doc.Find(`[data-testid="` + tc.testid + `"]`).Text()); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.testid, got, tc.want)
		}
	}
	rows := doc.Find(`[data-testid="inbox-list"] [data-testid="inbox-row"]`)
	first := rows.First()
	for sel, want := range map[string]string{
		`[data-testid="inbox-row-subject"]`:       "order=A1",
		`[data-testid="inbox-row-configuration"]`: "Refund assistant",
		`[data-testid="inbox-row-tool"]`:          "lookup, issue_refund",
		`.badge__label`:                           "Waiting for approval",
		`[data-testid="inbox-row-started-by"]`:    testUsers[runtime.RoleAdmin],
	} {
		if got := strings.TrimSpace(first.Find(sel).Text()); got != want {
			t.Errorf("first row %s = %q, want %q", sel, got, want)
		}
	}
	if got := rows.Eq(1).Find(`.badge__label`).Text(); got != "Waiting for input" {
		t.Errorf("input row says %q", got)
	}
	since := first.Find(`[data-testid="inbox-row-since"] time`)
	if since.Text() != "3 hours ago" || !strings.HasSuffix(since.AttrOr("title", ""), "UTC") {
		t.Errorf("since: %q (title %q), want relative text with the absolute time", since.Text(), since.AttrOr("title", ""))
	}
	link := first.Find(`a[data-testid="inbox-row-link"]`)
	if link.AttrOr("href", "") != "/runs/"+refund || !strings.Contains(link.Text(), "open run "+refund) {
		t.Errorf("row link %q to %q, want the run page named by the run id", link.Text(), link.AttrOr("href", ""))
	}
	var heads []string
	doc.Find(`[data-testid="inbox-list"] thead th`).Each(func(_ int, th *goquery.Selection) {
		if th.AttrOr("scope", "") == "col" {
			heads = append(heads, th.Text())
		}
	})
	if want := []string{"Waiting since", "Subject", "Configuration", "Tool", "Waiting for", "Started by", "Assignee", "Run"}; !reflect.DeepEqual(heads, want) {
		t.Errorf("column headers %q, want %q, each scope=col", heads, want)
	}
	if n := doc.Find(`main form:not([data-testid="inbox-filters"]):not([data-testid="bulk-group"]):not([data-testid="bulk-select-all-form"]), [data-testid="run-card"]`).Length(); n != 0 {
		t.Errorf("the inbox carries %d cards or decision forms, want none (they are on the run page; bulk groups only select)", n)
	}

	card := c.get("/runs/" + refund).doc(t).Find(`[data-testid="run-card"]`)
	if got := card.Find(`[data-testid="call-tool"]`).Map(textOf); !reflect.DeepEqual(got, []string{"lookup", "issue_refund"}) {
		t.Errorf("refund card calls %v, want the whole turn", got)
	}
	badges := strings.Join(card.Find(`[data-testid="call-badge"]`).Map(textOf), "|")
	for _, want := range []string{"Writes (not repeatable)", "Admin only"} {
		if !strings.Contains(badges, want) {
			t.Errorf("refund card badges %q lack %q", badges, want)
		}
	}
	calls := card.Find(`[data-testid="pending-call"]`)
	if calls.Eq(0).Find(`[data-testid="call-preview"]`).Length() != 0 ||
		!strings.Contains(calls.Eq(1).Find(`[data-testid="call-preview"]`).Text(), "No preview — you are deciding without one") {
		t.Error("want the no-preview warning on the write that needs approval and no preview section on the read-only lookup")
	}
}

func textOf(_ int, s *goquery.Selection) string { return strings.TrimSpace(s.Text()) }

func TestInboxKeysetPages(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	var want []string
	for i := range 5 {
		uuid := app.pause(runtime.RoleAdmin, "mail")
		app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-int64(100-i), uuid)
		want = append(want, uuid)
	}
	c := app.login(runtime.RoleSupport)
	var got []string
	path := "/runs?per=2"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than rows")
		}
		res := c.get(path)
		doc := res.doc(t)
		got = append(got, c.rowsOf(path)...)
		if first := doc.Find(`[data-testid="pager-first"]`).AttrOr("href", ""); (pages > 0) != (first == "/runs?per=2") {
			t.Errorf("page %d: first-page link %q", pages, first)
		}
		path = doc.Find(`[data-testid="pager-next"]`).AttrOr("href", "")
		if path != "" && !strings.Contains(path, "per=2") {
			t.Errorf("next link %q lost the page size", path)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pages walked %v, want %v", got, want)
	}
	for _, bad := range []string{"?after=1", "?after=x-1", "?after=0-0", "?after=-5-3", "?per=0", "?per=1000"} {
		if res := c.get("/runs" + bad); res.status != http.StatusBadRequest {
			t.Errorf("GET /runs%s: %d, want 400", bad, res.status)
		}
	}
}

func TestInboxFilters(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	mail := app.pause(runtime.RoleAdmin, "mail")
	refund := app.pause(runtime.RoleAdmin, "refund")
	ask := app.pause(runtime.RoleAdmin, "ask")
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-3*86400, mail)
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-2*3600, refund)
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-60, ask)
	c := app.login(runtime.RoleReviewer)
	cases := []struct {
		query           string
		want            []string
		approval, input string
	}{
		{"", []string{mail, refund, ask}, "2", "1"},
		{"kind=approval", []string{mail, refund}, "2", "1"},
		{"kind=input", []string{ask}, "2", "1"},
		{"configuration=refund", []string{refund}, "1", "0"},
		{"tool=issue_refund", []string{refund}, "1", "0"},
		{"tool=lookup", []string{refund}, "1", "0"},
		{"tool=ask_city&kind=approval", nil, "0", "1"},
		{"older=1h", []string{mail, refund}, "2", "0"},
		{"older=1d", []string{mail}, "1", "0"},
		{"older=5m&kind=input", nil, "2", "0"},
		{"q=" + refund[:6], []string{refund}, "1", "0"},
		{"q=" + strings.ToUpper(ask[:8]), []string{ask}, "0", "1"},
		{"q=" + ask, []string{ask}, "0", "1"},
	}
	for _, tc := range cases {
		path := "/runs?" + tc.query
		if got := c.rowsOf(path); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: cards %v, want %v", path, got, tc.want)
		}
		doc := c.get(path).doc(t)
		approval := strings.TrimSpace(doc.Find(`[data-testid="count-approval"]`).Text())
		input := strings.TrimSpace(doc.Find(`[data-testid="count-input"]`).Text())
		if approval != tc.approval || input != tc.input {
			t.Errorf("%s: counts approval %s input %s, want %s and %s", path, approval, input, tc.approval, tc.input)
		}
		if len(tc.want) == 0 && doc.Find(`[data-testid="inbox-empty"]`).Length() != 1 {
			t.Errorf("%s: no empty-list note", path)
		}
	}
	doc := c.get("/runs?configuration=refund&tool=issue_refund&older=1h").doc(t)
	for id, want := range map[string]string{"filter-configuration": "refund", "filter-tool": "issue_refund", "filter-older": "1h"} {
		if got := doc.Find(`#`+id+` option[selected]`).AttrOr("value", ""); got != want {
			t.Errorf("%s keeps %q, want %q", id, got, want)
		}
	}
	if href := doc.Find(`[data-testid="tab-input"]`).AttrOr("href", ""); href != "/runs?configuration=refund&kind=input&older=1h&tool=issue_refund" {
		t.Errorf("input tab link %q does not keep the filters", href)
	}
	for _, bad := range []string{"kind=other", "configuration=nope", "tool=a%20b", "older=5", "older=0m", "older=1w", "q=%00"} {
		res := c.get("/runs?" + bad)
		if res.status != http.StatusBadRequest || res.doc(t).Find(`[data-testid="error-text"]`).Text() == "" {
			t.Errorf("GET /runs?%s: %d, want 400 with a reason", bad, res.status)
		}
	}
}

func TestInboxStoreFailureIsAnErrorPageNotAnEmptyInbox(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	app.pause(runtime.RoleAdmin, "mail")
	c := app.login(runtime.RoleReviewer)
	app.exec(`RENAME TABLE tx_nrllm_agentrun TO tx_nrllm_agentrun_away`)
	t.Cleanup(func() { app.exec(`RENAME TABLE tx_nrllm_agentrun_away TO tx_nrllm_agentrun`) })
	res := c.get("/runs")
	doc := res.doc(t)
	if res.status != http.StatusServiceUnavailable || doc.Find(`[data-testid="error-page"]`).Length() != 1 {
		t.Errorf("inbox on a failing store: %d, want 503 and the error page", res.status)
	}
	if doc.Find(`[data-testid="inbox-empty"]`).Length() != 0 || strings.Contains(res.body, "No runs are waiting") {
		t.Error("a store failure showed as an empty inbox")
	}
	if strings.Contains(res.body, "tx_nrllm") {
		t.Error("the error page shows SQL details")
	}
	for _, path := range []string{"/runs/recent", "/runs/0a6e2b58-1234-4abc-9def-000000000000"} {
		if res := c.get(path); res.status < 500 {
			t.Errorf("GET %s on a failing store: %d, want 5xx", path, res.status)
		}
	}
}

func TestRunPagesAnswer503WhenTheCatalogFails(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	c := app.login(runtime.RoleAdmin)
	app.exec(`RENAME TABLE tx_nrllm_configuration TO tx_nrllm_configuration_away`)
	t.Cleanup(func() { app.exec(`RENAME TABLE tx_nrllm_configuration_away TO tx_nrllm_configuration`) })
	for _, path := range []string{"/runs", "/runs/new", "/runs/recent", "/runs/" + uuid, "/runs/" + uuid + "/cancel"} {
		res := c.get(path)
		if res.status != http.StatusServiceUnavailable || res.doc(t).Find(`[data-testid="error-page"]`).Length() != 1 {
			t.Errorf("GET %s with the catalog down: %d, want the 503 page", path, res.status)
		}
	}
}

// TestInboxFormsFollowTheRole: support sees no control that decides, submits or cancels (the
// comment form, which support may use, aside).
func TestInboxFormsFollowTheRole(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail := app.pause(runtime.RoleAdmin, "mail")
	refund := app.pause(runtime.RoleAdmin, "refund")
	ask := app.pause(runtime.RoleAdmin, "ask")
	card := func(c *client, uuid string) *goquery.Selection {
		return c.get("/runs/" + uuid).doc(t).Find(`[data-testid="run-card"][data-run="` + uuid + `"]`)
	}

	support := app.login(runtime.RoleSupport)
	doc := support.get("/runs").doc(t)
	if n := doc.Find(`[data-testid="inbox-row"]`).Length(); n != 3 {
		t.Fatalf("support sees %d rows, want 3", n)
	}
	actionable := `main form:not([data-testid="comment-form"]) input[name="_csrf"], ` +
		`main button[type="submit"]:not([data-testid="filter-apply"]):not([data-testid="comment-submit"]), ` +
		`main textarea:not(fieldset[disabled] textarea):not([data-testid="comment-text"]), [data-testid="approval-form"]`
	for _, path := range []string{"/runs", "/runs/" + mail, "/runs/" + refund, "/runs/" + ask} {
		if n := support.get(path).doc(t).Find(actionable).Length(); n != 0 {
			t.Errorf("support sees %d form controls that act on %s, want none", n, path)
		}
	}
	if doc.Find(`[data-testid="inbox-readonly"]`).Length() != 1 {
		t.Error("support is not told the inbox is read-only")
	}
	if support.get("/runs/"+ask).doc(t).Find(`[data-testid="input-readonly"]`).Length() != 1 {
		t.Error("support's input form on the run page is not read-only")
	}

	rita := app.login(runtime.RoleReviewer)
	if m := card(rita, mail); m.Find(`[data-testid="approve"]`).Length() != 1 || m.Find(`[data-testid="deny"]`).Length() != 1 {
		t.Error("reviewer cannot approve or deny the mail run")
	}
	r := card(rita, refund)
	if r.Find(`[data-testid="approve"]`).Length() != 0 || r.Find(`[data-testid="deny"]`).Length() != 1 {
		t.Error("reviewer: want Deny but no Approve on an admin-only write")
	}
	if note := r.Find(`[data-testid="run-card-note"]`).Text(); !strings.Contains(note, "Only an admin may approve") || !strings.Contains(note, "issue_refund") {
		t.Errorf("reviewer's note on the refund card: %q", note)
	}
	if rita.get("/runs/"+ask).doc(t).Find(`[data-testid="input-submit"]`).Length() != 1 {
		t.Error("reviewer cannot submit input on the run page")
	}

	ada := app.login(runtime.RoleAdmin)
	if card(ada, refund).Find(`[data-testid="approve"]`).Length() != 1 {
		t.Error("admin cannot approve the admin-only write")
	}
	form := card(ada, mail).Find(`[data-testid="approval-form"]`)
	for _, name := range []string{"_csrf", "turn_digest", "idempotency_key"} {
		if v := form.Find(`input[name="`+name+`"]`).AttrOr("value", ""); v == "" {
			t.Errorf("approval form has no %s", name)
		}
	}
	k1 := form.Find(`input[name="idempotency_key"]`).AttrOr("value", "")
	k2 := card(ada, mail).Find(`input[name="idempotency_key"]`).AttrOr("value", "")
	if k1 == k2 {
		t.Error("two renderings of the form share an idempotency key")
	}
}

func TestRunCardShowsPreviewsAndEscapesArguments(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail := app.pause(runtime.RoleAdmin, "mail")
	wipe := app.pause(runtime.RoleAdmin, "wipe")
	long := app.pause(runtime.RoleAdmin, "long")
	c := app.login(runtime.RoleReviewer)
	res := c.get("/runs/" + mail)
	doc := res.doc(t)
	m := doc.Find(`[data-run="` + mail + `"]`)
	preview := m.Find(`[data-testid="call-preview"]`).Text()
	for _, want := range []string{"What this call would do", "Would send one mail to the operations team.", "Captured when the run paused — the target may have changed since."} {
		if !strings.Contains(preview, want) {
			t.Errorf("mail preview %q lacks %q", preview, want)
		}
	}
	args := m.Find(`[data-testid="call-arguments"]`).Text()
	if !strings.Contains(args, deskSecret) || !strings.Contains(args, "<script>alert(1)</script>") || !strings.Contains(args, "\n  \"to\"") {
		t.Errorf("arguments not shown as indented text: %q", args)
	}
	if n := doc.Find(`main script, main img, [onerror]`).Length(); n != 0 {
		t.Errorf("tool arguments created %d script/img elements", n)
	}
	if strings.Contains(res.body, "<img src=x") || strings.Contains(res.body, "<script>alert") {
		t.Error("markup from tool arguments reached the page unescaped")
	}
	if got := c.get("/runs/" + wipe).doc(t).Find(`[data-run="` + wipe + `"] [data-testid="call-preview"]`).Text(); !strings.Contains(got, "No preview — you are deciding without one") {
		t.Errorf("wipe card preview %q, want the no-preview warning", got)
	}
	if m.Find(`details`).Length() != 0 {
		t.Error("short arguments are collapsed")
	}
	if d := c.get("/runs/" + long).doc(t).Find(`[data-run="` + long + `"] details.call__args`); d.Length() != 1 || d.AttrOr("open", "none") != "none" {
		t.Error("long arguments are not collapsed behind <details>")
	}
}

func TestInboxListsAnUnreadableRunWithoutHidingOthers(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	broken := app.pause(runtime.RoleAdmin, "mail")
	fine := app.pause(runtime.RoleAdmin, "wipe")
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_state = '{"pendingCalls": "nope"' WHERE uuid = ?`, broken)
	c := app.login(runtime.RoleAdmin)
	doc := c.get("/runs").doc(t)
	if doc.Find(`[data-run="`+broken+`"] [data-testid="inbox-row-unreadable"]`).Length() != 1 {
		t.Error("the unreadable run's row does not say so")
	}
	if got := c.rowsOf("/runs"); !reflect.DeepEqual(got, []string{broken, fine}) {
		t.Errorf("rows %v, want both runs", got)
	}
	page := c.get("/runs/" + broken).doc(t)
	if got := page.Find(`[data-testid="run-card-unreadable"]`).Text(); !strings.Contains(got, "This run's state could not be read; no action is available.") {
		t.Errorf("unreadable card says %q", got)
	}
	if page.Find(`[data-testid="run-card"] form`).Length() != 0 {
		t.Error("the unreadable card offers a form")
	}
	if c.get("/runs/"+fine).doc(t).Find(`[data-run="`+fine+`"] [data-testid="approval-form"]`).Length() != 1 {
		t.Error("the readable run lost its form")
	}
}

func TestInboxRowLeadsToTheRunPageForm(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ask := app.pause(runtime.RoleAdmin, "ask")
	c := app.login(runtime.RoleReviewer)
	res := c.get("/runs")
	row := res.doc(t).Find(`[data-testid="inbox-row"][data-run="` + ask + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="inbox-row-tool"]`).Text()); got != "ask_city" {
		t.Errorf("input row tool %q, want the input tool", got)
	}
	if row.AttrOr("data-kind", "") != "input" {
		t.Errorf("input row kind %q", row.AttrOr("data-kind", ""))
	}
	if strings.Contains(res.body, views.FieldID(ask, "/city")) {
		t.Error("the inbox carries the input form's fields")
	}
	href := row.Find(`a[data-testid="inbox-row-link"]`).AttrOr("href", "")
	page := c.get(href).doc(t)
	form := page.Find(`form#` + views.InputFormID(ask))
	if form.Length() != 1 || form.Find(`[id="`+views.FieldID(ask, "/city")+`"]`).Length() != 1 || form.Find(`input[name="turn_digest"]`).AttrOr("value", "") == "" {
		t.Error("the row does not lead to the run page's input form with its fields and digest")
	}
	if !strings.Contains(page.Find(`[data-testid="call-badge"]`).Text(), "Needs your input") {
		t.Error("the run page's input card lost its badge")
	}
}

// TestInboxCountsMatchEveryFilterList: under every filter, alone and with others, each tab's
// count is the number of rows its list shows (the expiry filters once counted every waiting
// run above an empty list).
func TestInboxCountsMatchEveryFilterList(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	mail := app.pause(runtime.RoleAdmin, "mail")
	wipe := app.pause(runtime.RoleAdmin, "wipe")
	refund := app.pause(runtime.RoleReviewer, "refund")
	ask := app.pause(runtime.RoleAdmin, "ask")
	askLater := app.pause(runtime.RoleReviewer, "ask")
	app.pause(runtime.RoleAdmin, "plain")
	for uuid, at := range map[string][2]int64{
		mail: {now - 3*86400, now + 600}, wipe: {now - 2*3600, 0}, refund: {now - 600, now + 5*3600},
		ask: {now - 120, now + 1200}, askLater: {now - 60, 0},
	} {
		app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ?, expires_at = ? WHERE uuid = ?`, at[0], at[1], uuid)
	}
	app.exec(`UPDATE tx_nrllm_agentrun SET escalated = 1 WHERE uuid IN (?, ?)`, refund, askLater)
	c := app.login(runtime.RoleReviewer)
	filters := []string{"", "configuration=ask", "tool=send_mail", "older=1h", "q=" + refund[:6], "q=city",
		"q=" + testUsers[runtime.RoleReviewer]}
	for _, deadline := range []string{"", "deadline=soon", "deadline=expiring", "deadline=escalated"} {
		for _, f := range filters {
			query := strings.Trim(f+"&"+deadline, "&")
			counted := map[string]int{}
			for _, kind := range []string{"", "approval", "input"} {
				path := "/runs?" + strings.Trim(query+"&per=100", "&")
				if kind != "" {
					path += "&kind=" + kind
				}
				rows := len(c.rowsOf(path))
				doc := c.get(path).doc(t)
				for _, tab := range []string{"all", "approval", "input"} {
					n := strings.TrimSpace(doc.Find(`[data-testid="count-` + tab + `"]`).Text())
					if prev, ok := counted[tab]; ok && strconv.Itoa(prev) != n {
						t.Errorf("%s: count-%s %s, but %d on another tab", path, tab, n, prev)
					}
					counted[tab], _ = strconv.Atoi(n)
				}
				if tab := cmp.Or(kind, "all"); counted[tab] != rows {
					t.Errorf("%s: tab %s counts %d, the list shows %d rows", path, tab, counted[tab], rows)
				}
			}
		}
	}
	if got, want := c.rowsOf("/runs?deadline=expiring"), []string{mail, ask, refund}; !reflect.DeepEqual(got, want) {
		t.Errorf("deadline=expiring lists %v, want %v (soonest expiry first, no run without one)", got, want)
	}
}
