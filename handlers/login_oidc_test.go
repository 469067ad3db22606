package handlers

import (
	"database/sql"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"runsdesk/db"
	"runsdesk/internal/testoidc"
	"runsdesk/runtime"
	"runsdesk/sso"
	"runsdesk/sso/ssodb"
)

const (
	oidcClientID = "runsdesk"
	oidcSecret   = "a client secret"
	oidcRoles    = "admin=desk-admins,reviewer=desk-reviewers|finance,support=desk-support"
)

// oidcDesk is a test app signing people in with an in-test provider, on a clock the test
// moves.
type oidcDesk struct {
	t     *testing.T
	app   *testApp
	idp   *testoidc.Provider
	mu    sync.Mutex
	clock time.Time
}

func newOIDCDesk(t *testing.T, passwordOff bool) *oidcDesk {
	t.Helper()
	return newOIDCDeskWith(t, passwordOff, appOptions{})
}

// newOIDCDeskWith is newOIDCDesk on an app of opts (its clock and single sign-on set here).
func newOIDCDeskWith(t *testing.T, passwordOff bool, opts appOptions) *oidcDesk {
	t.Helper()
	d := &oidcDesk{t: t, idp: testoidc.New(t, oidcClientID, oidcSecret), clock: time.Now()}
	roles, err := sso.ParseRoles(oidcRoles)
	if err != nil {
		t.Fatal(err)
	}
	provider, err := sso.New(t.Context(), sso.Config{Issuer: d.idp.URL, ClientID: oidcClientID, ClientSecret: oidcSecret,
		Scopes: []string{"openid", "profile", "email"}, RoleClaim: "groups", Roles: roles, Name: "Example ID"})
	if err != nil {
		t.Fatal(err)
	}
	opts.now = d.now
	opts.signOn = func(pool *sql.DB) SignOn {
		return SignOn{Provider: provider, Identities: ssodb.NewStore(db.NewIdentities(pool, nil)),
			PasswordOff: passwordOff, BreakGlassUser: testUsers[runtime.RoleAdmin]}
	}
	d.app = newTestApp(t, opts)
	return d
}

func (d *oidcDesk) now() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.clock
}

func (d *oidcDesk) advance(by time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock = d.clock.Add(by)
}

// signIn makes the provider approve person and walks a new client through the round trip
// from /login/oidc?next=next; it returns the client and the callback's response.
func (d *oidcDesk) signIn(person testoidc.Person, next string) (*client, response) {
	d.t.Helper()
	d.idp.SignInAs(person)
	c := d.app.newClient()
	return c, d.roundTrip(c, next)
}

func (d *oidcDesk) roundTrip(c *client, next string) response {
	d.t.Helper()
	callback := d.authorize(c, next)
	return c.get(callback)
}

// authorize starts a sign-in and returns the callback path the provider sends the client to.
func (d *oidcDesk) authorize(c *client, next string) string {
	d.t.Helper()
	start := c.get("/login/oidc?next=" + url.QueryEscape(next))
	if start.status != http.StatusSeeOther || !strings.HasPrefix(start.header.Get("Location"), d.idp.URL+"/authorize?") {
		d.t.Fatalf("GET /login/oidc: %d Location %q, want 303 to the provider", start.status, start.header.Get("Location"))
	}
	auth := start.header.Get("Location")
	if q, _ := url.Parse(auth); q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("nonce") == "" || q.Query().Get("state") == "" {
		d.t.Fatalf("authorization request %q lacks PKCE S256, nonce or state", auth)
	}
	req, err := http.NewRequest(http.MethodGet, auth, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	back := c.do(req)
	loc, err := url.Parse(back.header.Get("Location"))
	if back.status != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), d.app.srv.URL+oidcCallbackPath) {
		d.t.Fatalf("provider's authorize: %d Location %q, want 302 to the callback", back.status, back.header.Get("Location"))
	}
	return loc.RequestURI()
}

// whoami returns the signed-in username and role label of c, or "" when it is sent to sign in.
func (c *client) whoami() (string, string) {
	c.t.Helper()
	res := c.get("/")
	if res.status != http.StatusOK {
		return "", ""
	}
	doc := res.doc(c.t)
	return doc.Find(`[data-testid="signed-in-user"]`).Text(), doc.Find(`[data-testid="signed-in-role"]`).Text()
}

func person(sub string, groups ...string) testoidc.Person {
	return testoidc.Person{Subject: sub, PreferredUsername: sub, Email: sub + "@example.com", EmailVerified: true, Groups: groups}
}

func TestOIDCSignInMapsEachRoleAndKeepsTheDeepLink(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	for _, tc := range []struct {
		person testoidc.Person
		role   string
	}{
		{person("olga", "desk-admins", "desk-support"), "Admin"},
		{person("finn", "finance"), "Reviewer"},
		{person("rhea", "desk-reviewers", "desk-support"), "Reviewer"},
		{person("suki", "desk-support", "everyone"), "Support"},
	} {
		c, res := d.signIn(tc.person, "/runs?status=waiting")
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/runs?status=waiting" {
			t.Fatalf("%s: callback %d Location %q, want 303 to the deep link", tc.person.Subject, res.status, res.header.Get("Location"))
		}
		if name, role := c.whoami(); name != tc.person.Subject || role != tc.role {
			t.Errorf("%s: signed in as %q (%q), want %q (%q)", tc.person.Subject, name, role, tc.person.Subject, tc.role)
		}
	}

	// The role is re-synced at the next sign-in and the change audited.
	d.idp.SetGroups("suki", []string{"desk-admins"})
	c, _ := d.signIn(person("suki", "desk-admins"), "/")
	if _, role := c.whoami(); role != "Admin" {
		t.Errorf("suki after joining desk-admins: role %q, want Admin", role)
	}
	if got := d.app.auditActions(); !slices.Contains(got, "role_synced/success") || !slices.Contains(got, "account_created/success") {
		t.Errorf("audit %v lacks the account_created or role_synced row", got)
	}

	// An unsafe deep link is dropped.
	if _, res := d.signIn(person("olga", "desk-admins"), "//evil.example/x"); res.header.Get("Location") != "/" {
		t.Errorf("deep link //evil.example/x: Location %q, want /", res.header.Get("Location"))
	}
}

func TestOIDCGroupsFromUserInfoWhenTheIDTokenHasNone(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	d.idp.SetKnobs(testoidc.Knobs{GroupsInUserInfoOnly: true})
	c, res := d.signIn(person("uma", "desk-reviewers"), "/")
	if res.status != http.StatusSeeOther {
		t.Fatalf("callback: %d %.300s", res.status, res.body)
	}
	if _, role := c.whoami(); role != "Reviewer" {
		t.Errorf("role from UserInfo = %q, want Reviewer", role)
	}
}

func TestOIDCRefusesTokensItCannotTrust(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	for name, knobs := range map[string]testoidc.Knobs{
		"wrong audience": {Audience: "another-client"},
		"expired":        {Expired: true},
		"bad nonce":      {Nonce: "not-the-sign-ins-nonce"},
		"unknown key":    {UnpublishedKey: true},
	} {
		d.idp.SetKnobs(knobs)
		c, res := d.signIn(person("mallory", "desk-admins"), "/")
		if res.status != http.StatusUnauthorized || !strings.Contains(res.body, "could not be verified") {
			t.Errorf("%s: callback %d, want 401 with the page saying so", name, res.status)
		}
		if who, _ := c.whoami(); who != "" {
			t.Errorf("%s: signed in as %q", name, who)
		}
	}
	if got := d.app.auditActions(); len(got) != 4 || got[0] != "login/denied" {
		t.Errorf("audit = %v, want four login/denied rows", got)
	}
}

func TestOIDCStateIsSingleUse(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	d.idp.SignInAs(person("olga", "desk-admins"))
	c := d.app.newClient()
	callback := d.authorize(c, "/")
	if res := c.get(callback); res.status != http.StatusSeeOther {
		t.Fatalf("first callback: %d", res.status)
	}
	if res := c.get(callback); res.status != http.StatusBadRequest || !strings.Contains(res.body, "already used") {
		t.Errorf("replayed callback in the same browser: %d, want 400", res.status)
	}
	if res := d.app.newClient().get(callback); res.status != http.StatusBadRequest {
		t.Errorf("replayed callback in another browser: %d, want 400", res.status)
	}
	forged := d.app.newClient()
	d.authorize(forged, "/")
	if res := forged.get(oidcCallbackPath + "?code=x&state=forged"); res.status != http.StatusBadRequest {
		t.Errorf("callback with another state: %d, want 400", res.status)
	}
}

func TestOIDCUnknownKeyAfterRotationFetchesTheKeysAgain(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	if _, res := d.signIn(person("olga", "desk-admins"), "/"); res.status != http.StatusSeeOther {
		t.Fatalf("before rotation: %d", res.status)
	}
	before := d.idp.Fetches()
	d.idp.Rotate()
	c, res := d.signIn(person("finn", "finance"), "/")
	if res.status != http.StatusSeeOther {
		t.Fatalf("after rotation: callback %d %.300s, want 303", res.status, res.body)
	}
	if who, _ := c.whoami(); who != "finn" {
		t.Errorf("after rotation signed in as %q", who)
	}
	if got := d.idp.Fetches(); got != before+1 {
		t.Errorf("JWKS fetched %d times at the rotation, want once", got-before)
	}
}

func TestOIDCRefusesAPersonInNoMappedGroup(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	c, res := d.signIn(person("nina", "everyone"), "/")
	if res.status != http.StatusForbidden || !strings.Contains(res.body, "in no group that may use runsdesk") {
		t.Fatalf("callback: %d, want 403 with the page saying why", res.status)
	}
	if who, _ := c.whoami(); who != "" {
		t.Errorf("signed in as %q", who)
	}
	if _, err := d.app.accounts.AccountByUsername(t.Context(), "nina"); err == nil {
		t.Error("an account was created for a person in no mapped group")
	}
}

func TestOIDCDoesNotTakeOverALocalAccountWithTheSameEmail(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	rita := d.app.uids[runtime.RoleReviewer]
	if _, err := d.app.pool.ExecContext(t.Context(), `UPDATE be_users SET email = ? WHERE uid = ?`, "rita@example.com", rita); err != nil {
		t.Fatal(err)
	}
	c, res := d.signIn(testoidc.Person{Subject: "attacker-1", PreferredUsername: "rita", Email: "rita@example.com",
		EmailVerified: true, Groups: []string{"desk-admins"}}, "/")
	if res.status != http.StatusSeeOther {
		t.Fatalf("callback: %d", res.status)
	}
	if who, _ := c.whoami(); who == "rita" || who == "" {
		t.Errorf("signed in as %q, want a new account beside rita", who)
	}
	u, err := d.app.accounts.UserByUID(t.Context(), rita)
	if err != nil || u.Role != runtime.RoleReviewer {
		t.Errorf("local rita after the sign-in: %+v, %v; want her unchanged", u, err)
	}
	if _, err := d.app.accounts.AccountByUsername(t.Context(), "rita-2"); err != nil {
		t.Errorf("no account rita-2: %v", err)
	}
}

func TestOIDCGroupsCheckedAgainEveryFifteenMinutes(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	stays, _ := d.signIn(person("olga", "desk-admins"), "/")
	removed, _ := d.signIn(person("finn", "finance"), "/")
	revoked, _ := d.signIn(person("rhea", "desk-reviewers"), "/")
	d.idp.SetGroups("finn", []string{"everyone"})
	d.idp.Revoke("rhea")

	d.advance(10 * time.Minute)
	for name, c := range map[string]*client{"olga": stays, "finn": removed, "rhea": revoked} {
		if who, _ := c.whoami(); who != name {
			t.Errorf("after 10 minutes %s is %q, want still signed in (no check yet)", name, who)
		}
	}
	d.advance(6 * time.Minute)
	if who, _ := stays.whoami(); who != "olga" {
		t.Errorf("olga after the check: %q, want still signed in", who)
	}
	for name, c := range map[string]*client{"finn (no mapped group)": removed, "rhea (provider refuses)": revoked} {
		wantRedirectToLogin(t, name+" after the check", c.get("/"))
	}
	d.advance(16 * time.Minute)
	if who, _ := stays.whoami(); who != "olga" {
		t.Errorf("olga after the second check: %q, want still signed in", who)
	}
	ended := 0
	for _, a := range d.app.auditActions() {
		if a == "session_ended/denied" {
			ended++
		}
	}
	if ended != 2 {
		t.Errorf("audit has %d session_ended/denied rows, want 2: %v", ended, d.app.auditActions())
	}
}

func TestOIDCCheckRefreshesAnExpiredAccessToken(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, false)
	d.idp.SetKnobs(testoidc.Knobs{ShortLivedAccess: true})
	c, _ := d.signIn(person("olga", "desk-admins"), "/")
	d.advance(16 * time.Minute)
	if who, _ := c.whoami(); who != "olga" {
		t.Fatalf("after the check olga is %q, want still signed in", who)
	}
	if got := d.idp.Refreshes(); got != 1 {
		t.Errorf("refresh token used %d times at the check, want once", got)
	}
	d.idp.Revoke("olga")
	d.advance(16 * time.Minute)
	wantRedirectToLogin(t, "olga after her refresh token was revoked", c.get("/"))
}

func TestPasswordSignInOffButForTheBreakGlassUser(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, true)
	c := d.app.newClient()
	page := c.get("/login").doc(t)
	if page.Find(`[data-testid="login-form"]`).Length() != 0 {
		t.Error("the password form is shown while password sign-in is off")
	}
	if got := page.Find(`[data-testid="login-sso"]`).Text(); got != "Sign in with Example ID" {
		t.Errorf("button %q, want Sign in with Example ID", got)
	}
	for _, try := range []struct {
		name string
		want int
	}{{"rita", http.StatusUnprocessableEntity}, {"ada", http.StatusSeeOther}} {
		token := c.csrfFrom("/login?password=1")
		res := c.postForm("/login", url.Values{"username": {try.name}, "password": {testPassword}, "_csrf": {token}})
		if res.status != try.want {
			t.Errorf("password sign-in as %s: %d, want %d", try.name, res.status, try.want)
		}
	}
}

func TestBrowserSignInWithTheProviderKeepsTheDeepLink(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, true)
	d.idp.SignInAs(person("olga", "desk-admins"))
	b := newTab(t, d.app)
	b.open("/runs/recent")
	if b.count(`[data-testid="login-form"]`) != 0 {
		t.Error("the password form is shown while password sign-in is off")
	}
	b.do("sign in with the provider", chromedp.Click(chromedp.CSS(`[data-testid="login-sso"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)))
	if location := evalIn[string](b, `location.pathname`); location != "/runs/recent" {
		t.Errorf("after the round trip the browser is at %q, want the deep link /runs/recent", location)
	}
	if got := b.text(`[data-testid="signed-in-user"]`); got != "olga" {
		t.Errorf("signed in as %q, want olga", got)
	}
}

// TestBrowserSessionsAfterSignInWithTheProvider: Chromium signs in through the in-test
// provider (the whole round trip), finds its session marked on /account/sessions beside the
// person's other one, signs that one out, and the other session's next request goes to the
// sign-in page.
func TestBrowserSessionsAfterSignInWithTheProvider(t *testing.T) {
	t.Parallel()
	d := newOIDCDesk(t, true)
	other, res := d.signIn(person("olga", "desk-admins"), "/")
	if res.status != http.StatusSeeOther {
		t.Fatalf("the other session's sign-in: %d", res.status)
	}
	b := newTab(t, d.app)
	b.open("/account/sessions")
	b.do("sign in with the provider", chromedp.Click(chromedp.CSS(`[data-testid="login-sso"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sessions-table"]`)))
	if location := evalIn[string](b, `location.pathname`); location != "/account/sessions" {
		t.Fatalf("after the round trip the browser is at %q, want /account/sessions", location)
	}
	if rows, current := b.count(`[data-testid="session-row"]`), b.count(`[data-testid="session-current"]`); rows != 2 || current != 1 {
		t.Fatalf("sessions page lists %d sessions with %d marked current, want 2 and 1", rows, current)
	}
	agent := evalIn[string](b, `navigator.userAgent`)
	if got := b.text(`[data-testid="session-row"]:first-child [data-testid="session-agent"]`); got != agent {
		t.Errorf("the current session's browser is %q, want Chromium's %q", got, agent)
	}
	b.do("sign out the other session", chromedp.Click(chromedp.CSS(`[data-testid="session-end"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sessions-only-this"]`)))
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, msgSessionEnded) {
		t.Errorf("flash %q, want %q", got, msgSessionEnded)
	}
	wantRedirectToLogin(t, "the signed-out session's next request", other.get("/"))
}
