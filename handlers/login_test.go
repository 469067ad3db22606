package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/runtime"
)

func TestLoginLogoutAndSessionFixation(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.newClient()
	wantRedirectToLogin(t, "anonymous GET /", c.get("/"))

	token := c.csrfFrom("/login")
	if c.cookie() != "" {
		t.Fatal("GET /login set a session cookie (the sign-in form needs no session)")
	}
	preLogin := "planted-by-an-attacker"
	u, _ := url.Parse(app.srv.URL)
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: cookieInsecure, Value: preLogin, Path: "/"}})
	res := c.postForm("/login", url.Values{"username": {"rita"}, "password": {testPassword}, "_csrf": {token},
		"next": {"/account/password?x=1"}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/account/password?x=1" {
		t.Fatalf("login: %d Location %q, want 303 to next", res.status, res.header.Get("Location"))
	}
	signedIn := c.cookie()
	if signedIn == "" || signedIn == preLogin {
		t.Fatalf("session token not renewed at login (before %q, after %q)", preLogin, signedIn)
	}
	home := c.get("/")
	if home.status != http.StatusOK {
		t.Fatalf("GET / signed in: %d", home.status)
	}
	doc := home.doc(t)
	if got := doc.Find(`[data-testid="signed-in-user"]`).Text(); got != "rita" {
		t.Errorf("signed-in user = %q, want rita", got)
	}
	if got := doc.Find(`[data-testid="signed-in-role"]`).Text(); got != "Reviewer" {
		t.Errorf("role = %q, want Reviewer", got)
	}
	if newToken := c.token(); newToken == token {
		t.Error("CSRF token not renewed at login")
	}

	wantRedirectToLogin(t, "the pre-login cookie after login", app.withCookie(preLogin).get("/"))

	out := c.postForm("/logout", url.Values{"_csrf": {c.token()}})
	if out.status != http.StatusSeeOther || out.header.Get("Location") != "/login" {
		t.Fatalf("logout: %d Location %q", out.status, out.header.Get("Location"))
	}
	wantRedirectToLogin(t, "the signed-in cookie after logout", app.withCookie(signedIn).get("/"))
	wantRedirectToLogin(t, "the client after logout", c.get("/"))
	if flash := c.get("/login").doc(t).Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "signed out") {
		t.Errorf("login page after logout: flash %q, want the sign-out confirmation", flash)
	}

	want := []string{"login/success", "logout/success"}
	if got := app.auditActions(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("audit = %v, want %v", got, want)
	}
}

func TestLoginFailuresLookTheSame(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	if err := app.accounts.DisableUser(t.Context(), app.uids[runtime.RoleSupport], nil); err != nil {
		t.Fatal(err)
	}
	c := app.newClient()
	token := c.csrfFrom("/login")
	attempt := func(username, password string) response {
		return c.postForm("/login", url.Values{"username": {username}, "password": {password}, "_csrf": {token}})
	}
	wrong := attempt("rita", "not the right password")
	unknown := attempt("nobody", "not the right password")
	disabled := attempt("sam", testPassword)
	for name, res := range map[string]response{"wrong password": wrong, "unknown user": unknown, "disabled user": disabled} {
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", name, res.status)
		}
		if got := res.doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, badCredentials) {
			t.Errorf("%s: error %q, want %q", name, got, badCredentials)
		}
	}
	same := func(r response, name string) string {
		return strings.ReplaceAll(r.body, `value="`+name+`"`, `value=""`)
	}
	if same(wrong, "rita") != same(unknown, "nobody") || same(wrong, "rita") != same(disabled, "sam") {
		t.Error("failure bodies differ beyond the echoed username")
	}
	if got := app.auditActions(); len(got) != 3 || got[0] != "login/failure" || got[2] != "login/failure" {
		t.Errorf("audit = %v, want three login failures", got)
	}
	if strings.Contains(app.logs.String(), "not the right password") || strings.Contains(app.logs.String(), testPassword) {
		t.Error("a password reached the log")
	}
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{limits: db.LoginLimits{AccountFailures: 3, IPFailures: 5}})
	c := app.newClient()
	token := c.csrfFrom("/login")
	post := func(username, password string) response {
		return c.postForm("/login", url.Values{"username": {username}, "password": {password}, "_csrf": {token}})
	}
	for i := range 3 {
		if res := post("rita", "wrong password number"); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("failure %d: status %d, want 422", i+1, res.status)
		}
	}
	res := post("rita", testPassword)
	if res.status != http.StatusTooManyRequests {
		t.Fatalf("4th attempt with the right password: status %d, want 429", res.status)
	}
	if ra := res.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After = %q, want seconds", ra)
	}
	if got := res.doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, "Too many failed sign-in attempts") {
		t.Errorf("429 page says %q", got)
	}
	if c.get("/").status != http.StatusSeeOther {
		t.Error("a throttled attempt signed the person in")
	}

	if res := post("ada", "wrong password again"); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("other account: status %d, want 422", res.status)
	}
	if res := post("sam", "wrong password again"); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("5th failure from this address: status %d, want 422", res.status)
	}
	if res := post("sam", testPassword); res.status != http.StatusTooManyRequests {
		t.Errorf("6th attempt from this address: status %d, want 429 (per-address limit)", res.status)
	}
	if got := app.auditActions(); got[len(got)-1] != "login/throttled" {
		t.Errorf("last audit row %q, want login/throttled", got[len(got)-1])
	}
}

func TestLoginRedirectsOnlyToLocalPaths(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	for _, tc := range []struct{ next, want string }{
		{"/account/password", "/account/password"},
		{"/runs?status=waiting#top", "/runs?status=waiting#top"},
		{"//evil.example", "/"},
		{"/\\evil.example", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"", "/"},
	} {
		c := app.newClient()
		res := c.postForm("/login", url.Values{"username": {"ada"}, "password": {testPassword},
			"_csrf": {c.csrfFrom("/login")}, "next": {tc.next}})
		if got := res.header.Get("Location"); res.status != http.StatusSeeOther || got != tc.want {
			t.Errorf("next=%q: %d Location %q, want 303 %q", tc.next, res.status, got, tc.want)
		}
	}
}

func TestLocalRedirect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/runs", "/runs"},
		{"/runs/abc?x=1&y=2", "/runs/abc?x=1&y=2"},
		{"/", "/"},
		{"", "/"},
		{"runs", "/"},
		{"//evil.example", "/"},
		{"///evil.example", "/"},
		{"/\\evil.example", "/"},
		{"\\\\evil.example", "/"},
		{"/%2F%2Fevil.example", "/"},
		{"https://evil.example", "/"},
		{"HTTPS://evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"/path\r\nSet-Cookie: x=y", "/"},
		{"/\tevil", "/"},
		{"/" + strings.Repeat("a", 3000), "/"},
	} {
		if got := localRedirect(tc.in, "/"); got != tc.want {
			t.Errorf("localRedirect(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAnonymousRedirectKeepsTheTarget(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.newClient()
	res := c.get("/account/password")
	if loc := res.header.Get("Location"); loc != "/login?next=%2Faccount%2Fpassword" {
		t.Fatalf("Location %q", loc)
	}
	next, _ := c.get(res.header.Get("Location")).doc(t).Find(`input[name="next"]`).Attr("value")
	if next != "/account/password" {
		t.Errorf("login form next = %q, want /account/password", next)
	}
}

// TestLoginThrottleCoversEveryFormOfTheUsername fails throt2's allowance, then tries the right
// password under other spellings: forms whose canonical username is throt2 are throttled like
// it, and look-alikes (accents, another script, invisible characters) are other names that
// sign nobody in.
func TestLoginThrottleCoversEveryFormOfTheUsername(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{limits: db.LoginLimits{AccountFailures: 10, IPFailures: 1000}})
	if _, err := app.accounts.CreateUser(t.Context(), "throt2", testPassword, runtime.RoleSupport); err != nil {
		t.Fatal(err)
	}
	c := app.newClient()
	token := c.csrfFrom("/login")
	post := func(username, password string) response {
		return c.postForm("/login", url.Values{"username": {username}, "password": {password}, "_csrf": {token}})
	}
	for i := range 10 {
		if res := post("throt2", "wrong password number"); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("failure %d: status %d, want 422", i+1, res.status)
		}
	}
	for _, same := range []string{"throt2", "THROT2", " Throt2 ", "ｔｈｒｏｔ２"} {
		if res := post(same, testPassword); res.status != http.StatusTooManyRequests {
			t.Errorf("%q with the right password after 10 failures: status %d, want 429", same, res.status)
		}
	}
	for _, other := range []string{"ťhrot2", "t\u030chrot2", "thrót2", "THRÖT2", "тhrot2", "throt2\u200b"} {
		if res := post(other, testPassword); res.status != http.StatusUnprocessableEntity {
			t.Errorf("%q with throt2's password: status %d, want 422 (another name, nobody signed in)", other, res.status)
		}
	}
	if c.get("/").status != http.StatusSeeOther {
		t.Error("a variant of the username signed in past the throttle")
	}
}
