package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"runsdesk/handlers/admission"
	"runsdesk/runtime"
)

// TestAdmissionGate fills the gate and checks which routes wait for it: the pages and the API
// answer 503 when their deadline passes in the queue, the bare routes answer at once, and a
// freed slot serves the next request.
func TestAdmissionGate(t *testing.T) {
	t.Parallel()
	gate := admission.New(1)
	app := newTestApp(t, appOptions{gate: gate})
	c := app.login(runtime.RoleAdmin)
	asset, _ := app.newClient().get("/login").doc(t).Find(`link[rel="stylesheet"]`).Attr("href")
	release, err := gate.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/readyz", asset} {
		if res := c.get(path); res.status != http.StatusOK {
			t.Errorf("GET %s with every slot taken: %d, want 200 (bare routes are not gated)", path, res.status)
		}
	}
	page := serveWithDeadline(t, c, "/runs")
	if page.Code != http.StatusServiceUnavailable || !strings.Contains(page.Body.String(), "Temporarily unavailable") {
		t.Errorf("GET /runs past its deadline in the queue: %d, want the 503 page; body:\n%.300s", page.Code, page.Body.String())
	}
	if logs := app.logs.String(); !strings.Contains(logs, "no admission slot before the request's deadline") ||
		strings.Contains(logs, "store failure") || strings.Contains(page.Body.String(), "admission slot") {
		t.Errorf("the queue timeout must be logged as a wait for a slot (not a store failure) and not shown; logs:\n%s", logs)
	}
	apiRes := serveWithDeadline(t, c, "/api/v1/runs/00000000-0000-4000-8000-000000000000")
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	if apiRes.Code != http.StatusServiceUnavailable || json.Unmarshal(apiRes.Body.Bytes(), &body) != nil || body.Error.Code != "unavailable" {
		t.Errorf("API GET past its deadline in the queue: %d %s, want 503 code unavailable", apiRes.Code, apiRes.Body.String())
	}
	release()
	if res := c.get("/runs"); res.status != http.StatusOK {
		t.Errorf("GET /runs with a free slot: %d, want 200", res.status)
	}
}

// serveWithDeadline serves GET path, with c's cookies, the way cmd/web serves a request: its
// context ends at a deadline (here 50 ms after it arrives).
func serveWithDeadline(t *testing.T, c *client, path string) *httptest.ResponseRecorder {
	t.Helper()
	return serveWithin(t, c, 50*time.Millisecond, http.MethodGet, path, nil, nil)
}

// serveWithin serves a request of c's through the router under a deadline d, as app.New gives
// every request, with the body and headers given.
func serveWithin(t *testing.T, c *client, d time.Duration, method, path string, body io.Reader, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, c.app.srv.URL+path, body)
	for k, v := range header {
		req.Header[k] = v
	}
	for _, ck := range c.http.Jar.Cookies(req.URL) {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	c.app.e.ServeHTTP(rec, req)
	return rec
}
