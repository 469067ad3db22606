package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/handlers/admission"
	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// TestEvery503CarriesRetryAfter provokes each 503 of the router, pages and API: a request
// that waited past its deadline for an admission slot, /readyz not ready, a store failure of
// the accounts (web) and of the tokens (API), and a session store failure.
func TestEvery503CarriesRetryAfter(t *testing.T) {
	t.Parallel()
	want := func(what string, status int, header http.Header) {
		t.Helper()
		if status != http.StatusServiceUnavailable {
			t.Errorf("%s: %d, want 503", what, status)
			return
		}
		if n, err := strconv.Atoi(header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("%s: Retry-After %q, want whole seconds", what, header.Get("Retry-After"))
		}
	}

	gate := admission.New(1)
	busy := newTestApp(t, appOptions{gate: gate})
	c := busy.login(runtime.RoleAdmin)
	release, err := gate.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	page := serveWithDeadline(t, c, "/runs")
	want("a page past its deadline in the admission queue", page.Code, page.Header())
	apiRes := serveWithDeadline(t, c, "/api/v1/runs/00000000-0000-4000-8000-000000000000")
	want("an API request past its deadline in the admission queue", apiRes.Code, apiRes.Header())
	release()

	app := newTestApp(t, appOptions{})
	person := app.login(runtime.RoleAdmin)
	token, err := app.tokens.CreateToken(t.Context(), "ci", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(query string) {
		t.Helper()
		if _, err := app.pool.Exec(query); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DELETE FROM schema_migrations ORDER BY version DESC LIMIT 1`)
	res := person.get("/readyz")
	want("/readyz with a migration pending", res.status, res.header)
	exec(`DROP TABLE tx_runsdesk_service_account`)
	res = person.request(http.MethodGet, "/api/v1/runs/00000000-0000-4000-8000-000000000000", nil,
		http.Header{"Authorization": {"Bearer " + token}})
	want("the API with the token store gone", res.status, res.header)
	exec(`DROP TABLE be_users`)
	res = person.get("/runs")
	want("a page with the account store gone", res.status, res.header)
	exec(`DROP TABLE sessions`)
	res = person.get("/runs")
	want("a page with the session store gone", res.status, res.header)
}

// runTables are the app's tables except those of sign-in and sessions: with them locked,
// people and tokens still authenticate, and every store call of a run, its catalog,
// notifications or drafts waits on the database.
func runTables(t *testing.T, a *testApp) []string {
	t.Helper()
	rows, err := a.pool.Query(`SELECT table_name FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name NOT IN
		('be_users', 'sessions', 'schema_migrations', 'tx_runsdesk_service_account', 'tx_runsdesk_login_failure', 'tx_runsdesk_audit')`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// lockTables takes a write lock on tables from a connection of its own and returns its
// release (also run when the test ends): every other statement on them waits.
func lockTables(t *testing.T, a *testApp, tables ...string) (release func()) {
	t.Helper()
	ctx := context.Background()
	locks := make([]string, len(tables))
	for i, name := range tables {
		locks[i] = "`" + name + "` WRITE"
	}
	conn, err := a.pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "LOCK TABLES "+strings.Join(locks, ", ")); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, _ = conn.ExecContext(ctx, "UNLOCK TABLES")
			_ = conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// TestStoreTimeoutIsUnavailable: a store call that runs into the request's deadline is "store
// unavailable", 503 with Retry-After, on every page and API route that reads or writes a run,
// whichever of its store calls waits: with every run table locked, and with only the run
// page's side reads (notifications, drafts) locked after the run itself was read (before: the
// run page's 500, "db: notifications of run 1: context deadline exceeded").
func TestStoreTimeoutIsUnavailable(t *testing.T) {
	t.Parallel()
	rec := &recordingTool{name: "ask_details", schema: detailsSchema}
	a := newTestApp(t, appOptions{tools: []tool.Tool{rec}, configurations: []runtime.Configuration{inputConfiguration("details", "ask_details", modelArgs)}})
	v := a.startRun(runtime.RoleAdmin, "details")
	c := a.login(runtime.RoleAdmin)
	token, err := a.tokens.CreateToken(t.Context(), "ci", []string{runtime.ScopeRead, runtime.ScopeRun, runtime.ScopeApprove, runtime.ScopeCancel})
	if err != nil {
		t.Fatal(err)
	}
	csrf := c.token()
	run := "/runs/" + v.Run.UUID
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	bearer := http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}}
	routes := []struct {
		method, path, body string
		header             http.Header
	}{
		{http.MethodGet, "/runs", "", nil},
		{http.MethodGet, "/runs?status=waiting_for_input", "", nil},
		{http.MethodGet, "/runs/recent", "", nil},
		{http.MethodGet, run, "", nil},
		{http.MethodGet, run + "/edit?call=c1", "", nil},
		{http.MethodGet, run + "/cancel", "", nil},
		{http.MethodGet, "/runs/bulk?run=" + v.Run.UUID, "", nil},
		{http.MethodPost, "/runs", url.Values{"_csrf": {csrf}, "configuration": {"details"}, "prompt": {"hi"}}.Encode(), form},
		{http.MethodPost, run + "/approval", url.Values{"_csrf": {csrf}, views.FieldDecision: {views.DecisionApprove}}.Encode(), form},
		{http.MethodPost, run + "/input", url.Values{"_csrf": {csrf}, "input/amount": {"1"}}.Encode(), form},
		{http.MethodPost, run + "/draft", url.Values{"_csrf": {csrf}, "input/amount": {"1"}}.Encode(), form},
		{http.MethodPost, run + "/cancel", url.Values{"_csrf": {csrf}}.Encode(), form},
		{http.MethodGet, "/api/v1" + run, "", bearer},
		{http.MethodGet, "/api/v1" + run + "/events", "", bearer},
		{http.MethodPost, "/api/v1/runs", `{"configuration":"details","prompt":"hi"}`, bearer},
		{http.MethodPost, "/api/v1" + run + "/approval", `{"approved":true}`, bearer},
		{http.MethodPost, "/api/v1" + run + "/cancel", ``, bearer},
	}
	want := func(what string, res *httptest.ResponseRecorder, api bool) {
		t.Helper()
		if res.Code != http.StatusServiceUnavailable {
			t.Errorf("%s: %d, want 503; body %.200s", what, res.Code, res.Body.String())
			return
		}
		if n, err := strconv.Atoi(res.Header().Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("%s: Retry-After %q, want whole seconds", what, res.Header().Get("Retry-After"))
		}
		if api && !strings.Contains(res.Body.String(), `"code":"unavailable"`) {
			t.Errorf("%s: body %.200s, want the code unavailable", what, res.Body.String())
		}
	}
	const deadline = 300 * time.Millisecond

	release := lockTables(t, a, "tx_runsdesk_outbox", "tx_runsdesk_draft")
	want("the run page with its notifications and drafts blocked", serveWithin(t, c, deadline, http.MethodGet, run, nil, nil), false)
	release()

	lockTables(t, a, runTables(t, a)...)
	for _, r := range routes {
		res := serveWithin(t, c, deadline, r.method, r.path, strings.NewReader(r.body), r.header)
		want(r.method+" "+r.path+" with the store blocked past the deadline", res, strings.HasPrefix(r.path, "/api/"))
	}
}
