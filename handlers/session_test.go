package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

func TestIdleTimeoutEndsTheSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{idle: 1500 * time.Millisecond})
	c := app.login(runtime.RoleSupport)
	for range 3 {
		time.Sleep(700 * time.Millisecond)
		if res := c.get("/"); res.status != http.StatusOK {
			t.Fatalf("active within the idle timeout: %d, want 200", res.status)
		}
	}
	time.Sleep(2 * time.Second)
	wantRedirectToLogin(t, "after the idle timeout", c.get("/"))
}

func TestAbsoluteLifetimeEndsTheSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{lifetime: 2 * time.Second})
	c := app.login(runtime.RoleSupport)
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(400 * time.Millisecond)
		c.get("/")
	}
	wantRedirectToLogin(t, "after the absolute lifetime, though active", c.get("/"))
}

func TestAccountChangesEndSessions(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		role   runtime.Role
		change func(uid int64) error
		reason string
	}{
		{"disabled", runtime.RoleSupport, func(uid int64) error { return app.accounts.DisableUser(ctx, uid, nil) }, "user disabled or removed"},
		{"role changed", runtime.RoleReviewer, func(uid int64) error { return app.accounts.SetRole(ctx, uid, runtime.RoleSupport, nil) }, "session epoch changed"},
		{"sessions ended", runtime.RoleAdmin, func(uid int64) error { return app.accounts.EndSessions(ctx, uid, nil) }, "session epoch changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := app.login(tc.role), app.login(tc.role)
			cookie := a.cookie()
			if err := tc.change(app.uids[tc.role]); err != nil {
				t.Fatal(err)
			}
			wantRedirectToLogin(t, "first session", a.get("/"))
			wantRedirectToLogin(t, "second session", b.get("/"))
			wantRedirectToLogin(t, "first session's cookie replayed", app.withCookie(cookie).get("/"))
			rows, err := app.audit.RecentAudit(ctx, 5)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range rows {
				found = found || (r.Action == actionSessionEnded && r.ActorUID == app.uids[tc.role] && r.Reason == tc.reason)
			}
			if !found {
				t.Errorf("no session_ended audit row with reason %q in %+v", tc.reason, rows)
			}
		})
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secure      bool
		name, login string
	}{{false, "runsdesk_session", "runsdesk_login"}, {true, "__Host-runsdesk", "__Host-runsdesk_login"}} {
		app := newTestApp(t, appOptions{secure: tc.secure})
		c := app.newClient()
		form := c.get("/login")
		res := c.postForm("/login", url.Values{"username": {"ada"}, "password": {testPassword}, "_csrf": {c.csrfFrom("/login")}})
		cookie := setCookieLine(res, tc.name)
		if cookie == "" {
			t.Fatalf("secure=%v: sign-in set no %s cookie in %q", tc.secure, tc.name, res.header.Values("Set-Cookie"))
		}
		for _, want := range []string{"Path=/", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("secure=%v: cookie %q lacks %s", tc.secure, cookie, want)
			}
		}
		for _, banned := range []string{"Domain=", "Max-Age=", "Expires="} {
			if strings.Contains(cookie, banned) {
				t.Errorf("secure=%v: cookie %q has %s", tc.secure, cookie, banned)
			}
		}
		if got := strings.Contains(cookie, "Secure"); got != tc.secure {
			t.Errorf("secure=%v: cookie %q Secure=%v", tc.secure, cookie, got)
		}
		if value := strings.TrimPrefix(strings.Split(cookie, ";")[0], tc.name+"="); len(value) < 43 {
			t.Errorf("session token %q: want 32 random bytes (43 base64 characters)", value)
		}
		pre := setCookieLine(form, tc.login)
		for _, want := range []string{"Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=3600"} {
			if !strings.Contains(pre, want) {
				t.Errorf("secure=%v: sign-in form cookie %q lacks %s", tc.secure, pre, want)
			}
		}
		if got := strings.Contains(pre, "Secure"); got != tc.secure || strings.Contains(pre, "Domain=") {
			t.Errorf("secure=%v: sign-in form cookie %q", tc.secure, pre)
		}
		if gone := setCookieLine(res, tc.login); !strings.Contains(gone, "Max-Age=0") {
			t.Errorf("secure=%v: sign-in did not drop the sign-in form cookie (%q)", tc.secure, gone)
		}
		if hsts := res.header.Get("Strict-Transport-Security"); (hsts != "") != tc.secure {
			t.Errorf("secure=%v: HSTS %q", tc.secure, hsts)
		}
		if tc.secure {
			if res := app.login(runtime.RoleAdmin).get("/"); res.status != http.StatusOK {
				t.Errorf("sign-in over TLS with the __Host- cookie: GET / = %d", res.status)
			}
		}
	}
}

// setCookieLine returns the Set-Cookie line of res for cookie name, or "".
func setCookieLine(res response, name string) string {
	for _, v := range res.header.Values("Set-Cookie") {
		if strings.HasPrefix(v, name+"=") {
			return v
		}
	}
	return ""
}

func TestSessionsAreStoredHashed(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleSupport)
	var n int
	if err := app.pool.QueryRow(`SELECT COUNT(*) FROM sessions WHERE token = ?`, c.cookie()).Scan(&n); err != nil || n != 0 {
		t.Errorf("the cookie's token is stored as is (%d rows, %v)", n, err)
	}
	if strings.Contains(app.logs.String(), c.cookie()) {
		t.Error("the session token reached the log")
	}
}

func TestSessionStoreFailureFailsClosed(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleAdmin)
	if _, err := app.pool.Exec(`DROP TABLE sessions`); err != nil {
		t.Fatal(err)
	}
	res := c.get("/")
	if res.status != http.StatusServiceUnavailable {
		t.Errorf("with the session store gone: %d, want 503", res.status)
	}
	if strings.Contains(res.body, "sessions") || strings.Contains(res.body, "Error 1146") {
		t.Errorf("503 page shows the store error: %.300s", res.body)
	}
}

// TestPageViewsDoNotRewriteTheSession: reading pages with an unchanged session leaves its row
// as it is (the idle timeout would otherwise make every GET a durable write).
func TestPageViewsDoNotRewriteTheSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleSupport)
	c.get("/")
	row := func() (data []byte, expiry time.Time) {
		t.Helper()
		if err := app.pool.QueryRow(`SELECT data, expiry FROM sessions`).Scan(&data, &expiry); err != nil {
			t.Fatal(err)
		}
		return data, expiry
	}
	data, expiry := row()
	for _, path := range []string{"/", "/runs", "/runs/recent", "/"} {
		time.Sleep(20 * time.Millisecond)
		if res := c.get(path); res.status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.status)
		}
		if d, e := row(); string(d) != string(data) || !e.Equal(expiry) {
			t.Fatalf("GET %s rewrote the session row (expiry %v → %v)", path, expiry, e)
		}
	}
}

// TestAnonymousVisitorsStoreNoSession: the sign-in form keeps its CSRF defence without a
// session row (a token bound to a short-lived pre-session cookie), so visitors who do not
// sign in cost the sessions table nothing.
func TestAnonymousVisitorsStoreNoSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	sessions := func() int {
		t.Helper()
		var n int
		if err := app.pool.QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 30 {
		app.newClient().get("/login")
	}
	c := app.newClient()
	for _, path := range []string{"/login", "/login", "/", "/runs", "/no-such-page", "/login?next=/runs"} {
		c.get(path)
	}
	if n := sessions(); n != 0 {
		t.Fatalf("anonymous GETs stored %d session rows, want 0", n)
	}

	creds := func(token string) url.Values {
		return url.Values{"username": {"ada"}, "password": {testPassword}, "_csrf": {token}}
	}
	token := c.csrfFrom("/login")
	other := app.newClient()
	otherToken := other.csrfFrom("/login")
	for name, res := range map[string]response{
		"no token":                 c.postForm("/login", creds("")),
		"a made-up token":          c.postForm("/login", creds(strings.Repeat("A", 43))),
		"another visitor's token":  c.postForm("/login", creds(otherToken)),
		"the token without cookie": app.newClient().postForm("/login", creds(token)),
	} {
		if res.status != http.StatusForbidden {
			t.Errorf("login with %s: %d, want 403", name, res.status)
		}
	}
	if n := sessions(); n != 0 {
		t.Fatalf("refused sign-ins stored %d session rows, want 0", n)
	}

	u, _ := url.Parse(app.srv.URL)
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: cookieInsecure, Value: "planted-by-an-attacker", Path: "/"}})
	if res := c.postForm("/login", creds(token)); res.status != http.StatusSeeOther {
		t.Fatalf("login with the form's token: %d, want 303", res.status)
	}
	if got := c.cookie(); got == "" || got == "planted-by-an-attacker" {
		t.Errorf("session cookie after sign-in %q, want a new token", got)
	}
	if n := sessions(); n != 1 {
		t.Errorf("after one sign-in: %d session rows, want 1", n)
	}
	if c.get("/").status != http.StatusOK {
		t.Error("the signed-in session does not work")
	}
	if res := c.postForm("/login", creds(token)); res.status != http.StatusForbidden {
		t.Errorf("the sign-in form's token used again after sign-in: %d, want 403 (the pre-session cookie is gone)", res.status)
	}
}

// TestSessionCommitFailureAnswersOneCleanPage: when the session's commit fails after a page
// was rendered (its Content-Length already set), the answer is the 503 page alone, whole and
// with its own length, never the page's length over the error page's bytes (a connection
// closed short: the client's "unexpected EOF").
func TestSessionCommitFailureAnswersOneCleanPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleAdmin)
	for _, q := range []string{
		`UPDATE sessions SET expiry = UTC_TIMESTAMP(6) + INTERVAL 5 MINUTE`,
		`CREATE TRIGGER sessions_refuse_writes BEFORE UPDATE ON sessions FOR EACH ROW
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'session writes refused'`,
	} {
		if _, err := app.pool.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/", "/runs"} {
		res := c.get(path)
		if res.status != http.StatusServiceUnavailable {
			t.Fatalf("GET %s with the session's commit refused: %d, want 503", path, res.status)
		}
		if got := res.header.Get("Content-Length"); got != strconv.Itoa(len(res.body)) {
			t.Fatalf("GET %s: Content-Length %q for a body of %d bytes", path, got, len(res.body))
		}
		if !strings.Contains(res.body, "Temporarily unavailable") || !strings.HasSuffix(strings.TrimSpace(res.body), "</html>") {
			t.Fatalf("GET %s: not the whole 503 page: %.300s", path, res.body)
		}
	}
	if !strings.Contains(app.logs.String(), "commit session") {
		t.Error("the failed commit was not logged")
	}
}

// TestSessionPolicyRefusesLongerTimeouts: New refuses an idle timeout over 30 minutes or a
// lifetime over 12 hours (the serve flags may only shorten them), and takes shorter ones.
func TestSessionPolicyRefusesLongerTimeouts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		idle, lifetime time.Duration
		ok             bool
	}{
		{DefaultIdleTimeout, DefaultLifetime, true},
		{time.Minute, time.Hour, true},
		{DefaultIdleTimeout + time.Second, DefaultLifetime, false},
		{DefaultIdleTimeout, DefaultLifetime + time.Second, false},
		{0, DefaultLifetime, false},
	} {
		sm := NewSessionManager(nil)
		sm.IdleTimeout, sm.Lifetime = c.idle, c.lifetime
		if err := (&Handlers{sessions: sm}).applySessionPolicy(); (err == nil) != c.ok {
			t.Errorf("idle %s, lifetime %s: error %v, want accepted=%v", c.idle, c.lifetime, err, c.ok)
		}
	}
}
