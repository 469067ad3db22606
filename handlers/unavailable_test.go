package handlers

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"runsdesk/handlers/admission"
	"runsdesk/runtime"
)

// TestEvery503CarriesRetryAfter provokes each 503 of the router, pages and API: a request
// that waited past its deadline for an admission slot, /readyz not ready, a store failure of
// the accounts (web) and of the tokens (API), and a session store failure.
func TestEvery503CarriesRetryAfter(t *testing.T) {
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
