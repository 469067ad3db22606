package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// withFailingRoutes adds signed-in test routes that panic or fail with a secret in the error.
func withFailingRoutes(h *Handlers, e *echo.Echo) {
	g := h.groups(e)
	g.signedIn.GET("/test/panic", func(echo.Context) error { panic("secret panic value s3cr3t") })
	g.signedIn.GET("/test/fail", func(echo.Context) error {
		return &runtime.Error{Code: runtime.CodeRunStateUnavailable, Message: "db password s3cr3t rejected"}
	})
	g.bare.GET("/test/bare-panic", func(echo.Context) error { panic("secret panic value s3cr3t") })
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{extra: withFailingRoutes})
	anon, admin := app.newClient(), app.login(runtime.RoleAdmin)
	for _, tc := range []struct {
		name   string
		c      *client
		path   string
		status int
	}{
		{"login page", anon, "/login", 200},
		{"start page", admin, "/", 200},
		{"unknown path", anon, "/no/such/page", 404},
		{"unknown path signed in", admin, "/no/such/page", 404},
		{"panic", admin, "/test/panic", 500},
		{"panic outside the session", anon, "/test/bare-panic", 500},
		{"store failure", admin, "/test/fail", 503},
		{"api", anon, "/api/v1/runs/x", 401},
		{"health", anon, "/healthz", 200},
	} {
		res := tc.c.get(tc.path)
		if res.status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, res.status, tc.status)
		}
		for header, want := range map[string]string{
			"Content-Security-Policy": "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "same-origin",
			"X-Frame-Options":         "DENY",
			"Cache-Control":           "no-store",
		} {
			if got := res.header.Get(header); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.name, header, got, want)
			}
		}
		if ct := res.header.Get("Content-Type"); !strings.Contains(strings.ToLower(ct), "charset=utf-8") && !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q has no charset", tc.name, ct)
		}
		if res.header.Get("X-Request-ID") == "" {
			t.Errorf("%s: no X-Request-ID", tc.name)
		}
		if res.header.Get("Strict-Transport-Security") != "" {
			t.Errorf("%s: HSTS over plain HTTP", tc.name)
		}
	}
}

func TestErrorPagesRevealNothing(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{extra: withFailingRoutes})
	admin := app.login(runtime.RoleAdmin)
	for _, path := range []string{"/test/panic", "/test/fail", "/test/bare-panic"} {
		res := admin.get(path)
		for _, leak := range []string{"goroutine", ".go:", "s3cr3t", "panic", "runtime.Error", "run_state_unavailable"} {
			if strings.Contains(res.body, leak) {
				t.Errorf("%s: error page contains %q", path, leak)
			}
		}
		doc := res.doc(t)
		if id := doc.Find(`[data-testid="request-id"]`).Text(); id == "" || id != res.header.Get("X-Request-ID") {
			t.Errorf("%s: page request id %q, header %q", path, id, res.header.Get("X-Request-ID"))
		}
	}
	if !strings.Contains(app.logs.String(), "secret panic value") || !strings.Contains(app.logs.String(), "goroutine") {
		t.Error("the panic and its stack did not reach the log")
	}
	if res := admin.get("/test/panic"); res.doc(t).Find(`[data-testid="signed-in-user"]`).Text() != "ada" {
		t.Error("an error page inside the session lost the layout's user")
	}
}

func TestAPIErrorsAreJSON(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.newClient()
	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		status             int
		code               string
	}{
		{"no token", "GET", "/api/v1/runs/x", nil, 401, "unauthorized"},
		{"unknown api path", "GET", "/api/v1/nothing", nil, 401, "unauthorized"},
		{"cross-site POST", "POST", "/api/v1/runs", http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403, "cross_origin"},
		{"trace", "TRACE", "/api/v1/runs", nil, 405, "method_not_allowed"},
	} {
		res := c.request(tc.method, tc.path, nil, tc.header)
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(res.body), &body); err != nil || res.status != tc.status || body.Error.Code != tc.code || body.Error.Message == "" {
			t.Errorf("%s: %d %q (%v), want %d with code %q", tc.name, res.status, res.body, err, tc.status, tc.code)
		}
	}
}

func TestRequestLimits(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.newClient()
	token := c.csrfFrom("/login")
	big := url.Values{"_csrf": {token}, "username": {strings.Repeat("x", 2<<20)}}.Encode()

	res := c.request(http.MethodPost, "/login", strings.NewReader(big), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
	if res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MB POST: %d, want 413", res.status)
	}
	chunked := struct{ *bytes.Reader }{bytes.NewReader([]byte(big))}
	res = c.request(http.MethodPost, "/login", chunked, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
	if res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MB chunked POST: %d, want 413", res.status)
	}
	if res := c.request(http.MethodTrace, "/login", nil, nil); res.status != http.StatusMethodNotAllowed || strings.Contains(res.body, "Cookie") {
		t.Errorf("TRACE: %d, want 405 without an echo", res.status)
	}
	if res := c.request(http.MethodDelete, "/login", nil, nil); res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") == "" {
		t.Errorf("DELETE /login: %d Allow %q, want 405 with Allow", res.status, res.header.Get("Allow"))
	}
}

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.newClient()
	doc := c.get("/login").doc(t)
	css, _ := doc.Find(`link[rel="stylesheet"]`).Attr("href")
	js, _ := doc.Find(`script[src]`).Attr("src")
	for _, tc := range []struct{ path, contentType string }{{css, "text/css"}, {js, "text/javascript"}} {
		if !strings.HasPrefix(tc.path, "/static/app.") || len(tc.path) < len("/static/app.0123456789ab.js") {
			t.Errorf("asset path %q is not content-hashed", tc.path)
		}
		res := c.get(tc.path)
		if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), tc.contentType) ||
			res.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || res.body == "" {
			t.Errorf("GET %s: %d %q %q", tc.path, res.status, res.header.Get("Content-Type"), res.header.Get("Cache-Control"))
		}
	}
	for _, path := range []string{"/static/", "/static/app.css", "/static/app.js", "/static/../go.mod", "/static/%2e%2e/go.mod", "/static/x/app.css"} {
		if res := c.get(path); res.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.status)
		}
	}
	if doc.Find("script:not([src])").Length() != 0 || doc.Find("[style]").Length() != 0 || doc.Find("style").Length() != 0 {
		t.Error("the login page has inline script or style")
	}
}

func TestFavicon(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.newClient()
	icon, ok := c.get("/login").doc(t).Find(`link[rel="icon"]`).Attr("href")
	if !ok || !strings.HasPrefix(icon, "/static/favicon.") || !strings.HasSuffix(icon, ".svg") {
		t.Fatalf("the layout links no content-hashed SVG icon: %q", icon)
	}
	for _, path := range []string{icon, "/favicon.ico"} {
		res := c.get(path)
		if res.status != http.StatusOK || res.header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(res.body, "<svg") {
			t.Errorf("GET %s: %d %q, want 200 with the SVG icon", path, res.status, res.header.Get("Content-Type"))
		}
	}
	if res := c.get("/favicon.ico"); res.header.Get("Set-Cookie") != "" {
		t.Error("/favicon.ico starts a session")
	}
}

func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleAdmin)
	token := c.token()
	c.postForm("/account/password", url.Values{"_csrf": {token}, "current": {"wrong current secret"}, "new": {"x"}, "confirm": {"x"}})
	logs := app.logs.String()
	for _, secret := range []string{testPassword, "wrong current secret", token, c.cookie()} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains %.20q…", secret)
		}
	}
	var line map[string]any
	first := strings.SplitN(logs, "\n", 2)[0]
	if err := json.Unmarshal([]byte(first), &line); err != nil || line["request_id"] == nil || line["route"] == nil {
		t.Errorf("log line %q is not a JSON request line (%v)", first, err)
	}
}

// TestPagesCarryTheirLength: a rendered page is sent with its Content-Length (one write,
// not chunked), signed in or not.
func TestPagesCarryTheirLength(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	for _, tc := range []struct {
		name string
		c    *client
		path string
	}{{"sign-in page", app.newClient(), "/login"}, {"inbox", app.login(runtime.RoleReviewer), "/runs"}} {
		res := tc.c.get(tc.path)
		if res.status != http.StatusOK || res.header.Get("Content-Length") != strconv.Itoa(len(res.body)) {
			t.Errorf("%s: %d, Content-Length %q for %d bytes", tc.name, res.status, res.header.Get("Content-Length"), len(res.body))
		}
	}
}
