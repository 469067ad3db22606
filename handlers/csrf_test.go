package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/handlers/mcpserver"
	"runsdesk/runtime"
)

// TestEveryPostRefusesForgedRequests sends each POST route of the web UI, as a signed-in admin,
// without a token, with another session's token, and with a valid token from another origin.
// The bearer-token routes (/api/v1/..., /mcp) read no session: TestRouteMatrix answers them 401.
func TestEveryPostRefusesForgedRequests(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	other := app.login(runtime.RoleSupport).token()
	var posts []string
	for _, r := range app.e.Routes() {
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Path, "/api/") && r.Path != mcpserver.Path {
			posts = append(posts, r.Path)
		}
	}
	if len(posts) < 3 {
		t.Fatalf("found POST routes %v, want at least /login, /logout, /account/password", posts)
	}
	for _, path := range posts {
		for _, tc := range []struct {
			name   string
			token  func(c *client) string
			header []string
		}{
			{"no token", func(*client) string { return "" }, nil},
			{"another session's token", func(*client) string { return other }, nil},
			{"a made-up token", func(*client) string { return strings.Repeat("A", 43) }, nil},
			{"cross-site fetch", (*client).token, []string{"Sec-Fetch-Site", "cross-site"}},
			{"same-site fetch", (*client).token, []string{"Sec-Fetch-Site", "same-site"}},
			{"foreign Origin", (*client).token, []string{"Origin", "https://evil.example"}},
		} {
			c := app.login(runtime.RoleAdmin)
			form := url.Values{"username": {"ada"}, "password": {testPassword}, "current": {testPassword},
				"new": {"another long passphrase here"}, "confirm": {"another long passphrase here"}}
			if tok := tc.token(c); tok != "" {
				form.Set("_csrf", tok)
			}
			res := c.postForm(path, form, tc.header...)
			if res.status != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d, want 403", path, tc.name, res.status)
			}
			if c.get("/").status != http.StatusOK {
				t.Errorf("POST %s with %s ended the session", path, tc.name)
			}
		}
	}
	if _, _, err := app.accounts.Authenticate(t.Context(), "ada", testPassword); err != nil {
		t.Errorf("a forged password change went through: %v", err)
	}
}

func TestLoginNeedsItsPreSessionToken(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	creds := url.Values{"username": {"ada"}, "password": {testPassword}}

	c := app.newClient()
	if res := c.postForm("/login", creds); res.status != http.StatusForbidden {
		t.Errorf("login without any session: %d, want 403", res.status)
	}
	c.csrfFrom("/login")
	if res := c.postForm("/login", creds); res.status != http.StatusForbidden {
		t.Errorf("login without the token: %d, want 403", res.status)
	}
	withToken := url.Values{"username": {"ada"}, "password": {testPassword}, "_csrf": {c.csrfFrom("/login")}}
	if res := c.postForm("/login", withToken, "Sec-Fetch-Site", "cross-site"); res.status != http.StatusForbidden {
		t.Errorf("cross-site login: %d, want 403", res.status)
	}
	if res := c.postForm("/login", withToken, "X-CSRF-Token", withToken.Get("_csrf")); res.status != http.StatusSeeOther {
		t.Errorf("login with the token: %d, want 303", res.status)
	}
	audit := strings.Join(app.auditActions(), ",")
	if !strings.Contains(audit, "csrf_rejected/denied") || !strings.Contains(audit, "cross_origin_rejected/denied") {
		t.Errorf("audit %s: want CSRF and cross-origin rejections", audit)
	}
}
