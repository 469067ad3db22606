package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
)

// The flash cookie's names, as a browser sees them.
const (
	testFlashCookie       = "runsdesk_flash"
	testFlashCookieSecure = "__Host-runsdesk_flash"
)

// sessionTable returns every row of the sessions table (token hash, data, expiry), so a test
// can tell whether a request wrote a session.
func (a *testApp) sessionTable() string {
	a.t.Helper()
	rows, err := a.pool.Query(`SELECT token, data, expiry FROM sessions ORDER BY token`)
	if err != nil {
		a.t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var token string
		var data []byte
		var expiry time.Time
		if err := rows.Scan(&token, &data, &expiry); err != nil {
			a.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %x %s\n", token, data, expiry.Format(time.RFC3339Nano))
	}
	if err := rows.Err(); err != nil {
		a.t.Fatal(err)
	}
	return b.String()
}

// setCookie returns the Set-Cookie of res for name, or nil.
func setCookie(t *testing.T, res response, name string) *http.Cookie {
	t.Helper()
	var found *http.Cookie
	for _, line := range res.header.Values("Set-Cookie") {
		ck, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		if ck.Name == name {
			if found != nil {
				t.Errorf("two Set-Cookie lines for %s: %q", name, res.header.Values("Set-Cookie"))
			}
			found = ck
		}
	}
	return found
}

// pageFlashes returns the flash texts res shows.
func pageFlashes(t *testing.T, res response) []string {
	t.Helper()
	var out []string
	res.doc(t).Find(`[data-testid="flash"] span:not(.alert__icon)`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Text()))
	})
	return out
}

// wantFlashCookieSet checks the flash cookie a redirect sets: present, short-lived, HttpOnly,
// SameSite=Lax, Path=/, no Domain, Secure only with secure cookies.
func wantFlashCookieSet(t *testing.T, res response, name string, secure bool) {
	t.Helper()
	ck := setCookie(t, res, name)
	if ck == nil {
		t.Fatalf("the redirect sets no %s cookie: %q", name, res.header.Values("Set-Cookie"))
	}
	if ck.Value == "" || ck.MaxAge <= 0 || ck.MaxAge > 300 || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode ||
		ck.Path != "/" || ck.Domain != "" || ck.Secure != secure {
		t.Errorf("flash cookie %q: want a value, 0 < Max-Age <= 300, HttpOnly, SameSite=Lax, Path=/, no Domain, Secure=%v", ck.String(), secure)
	}
	if strings.Contains(ck.Value, " ") || len(ck.Value) > 100 {
		t.Errorf("flash cookie value %q: want a few short codes", ck.Value)
	}
}

// wantFlashShownOnce: the next page shows want (only) and deletes the cookie; the page after
// shows nothing and leaves cookies alone; none of it writes the session.
func wantFlashShownOnce(t *testing.T, app *testApp, c *client, page, want string, sessions string) {
	t.Helper()
	res := c.get(page)
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: %d", page, res.status)
	}
	if got := pageFlashes(t, res); !slices.Equal(got, []string{want}) {
		t.Errorf("GET %s after the redirect: flashes %q, want [%q]", page, got, want)
	}
	if ck := setCookie(t, res, testFlashCookie); ck == nil || ck.MaxAge >= 0 || ck.Value != "" {
		t.Errorf("GET %s does not delete the flash cookie: %q", page, res.header.Values("Set-Cookie"))
	}
	if got := app.sessionTable(); got != sessions {
		t.Errorf("GET %s showing the flash rewrote the session:\nbefore %s\nafter  %s", page, sessions, got)
	}
	res = c.get(page)
	if got := pageFlashes(t, res); len(got) != 0 {
		t.Errorf("GET %s a second time: flashes %q, want none", page, got)
	}
	if ck := setCookie(t, res, testFlashCookie); ck != nil {
		t.Errorf("GET %s without a flash cookie sets one: %q", page, ck.String())
	}
	if got := app.sessionTable(); got != sessions {
		t.Errorf("second GET %s rewrote the session", page)
	}
}

// TestSubmitFlashIsACookieNotASessionWrite: a successful input submission redirects with its
// message in the flash cookie and leaves the session row as it is; the run page shows the
// message once, deletes the cookie and does not write the session either.
func TestSubmitFlashIsACookieNotASessionWrite(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	c := w.app.login(runtime.RoleReviewer)
	form := submission(c, v, "key-flash-1", url.Values{"input/amount": {"12"}, "input/method": {"card"}})
	before := w.app.sessionTable()
	if before == "" {
		t.Fatal("no session row after sign-in")
	}
	res := c.postForm(inputPath(v), form)
	wantSeeOtherToRun(t, "submit", res, v.Run.UUID)
	wantFlashCookieSet(t, res, testFlashCookie, false)
	if got := w.app.sessionTable(); got != before {
		t.Errorf("the submission rewrote the session:\nbefore %s\nafter  %s", before, got)
	}
	w.app.rt.Wait()
	wantFlashShownOnce(t, w.app, c, "/runs/"+v.Run.UUID, msgInputSubmitted, before)
}

// TestApprovalFlashIsACookieNotASessionWrite: the same for an approval.
func TestApprovalFlashIsACookieNotASessionWrite(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(uuid, "approve")
	before := app.sessionTable()
	res := rita.postForm("/runs/"+uuid+"/approval", form)
	wantSeeOther(t, "approve", res, "/runs/"+uuid)
	wantFlashCookieSet(t, res, testFlashCookie, false)
	if got := app.sessionTable(); got != before {
		t.Errorf("the approval rewrote the session:\nbefore %s\nafter  %s", before, got)
	}
	app.rt.Wait()
	wantFlashShownOnce(t, app, rita, "/runs/"+uuid, "Approval recorded; the run continues.", before)
}

// TestSignOutFlashOutlivesTheSession: over TLS the flash cookie is __Host- and Secure, and
// the sign-in page shows the sign-out confirmation after the session is gone.
func TestSignOutFlashOutlivesTheSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{secure: true})
	c := app.login(runtime.RoleSupport)
	res := c.postForm("/logout", url.Values{"_csrf": {c.token()}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.status)
	}
	wantFlashCookieSet(t, res, testFlashCookieSecure, true)
	if ck := setCookie(t, res, testFlashCookie); ck != nil {
		t.Errorf("over TLS the flash cookie is also set without the __Host- prefix: %q", ck.String())
	}
	page := c.get("/login")
	if got := pageFlashes(t, page); !slices.Equal(got, []string{"You have signed out."}) {
		t.Errorf("sign-in page after sign-out: flashes %q", got)
	}
	if ck := setCookie(t, page, testFlashCookieSecure); ck == nil || ck.MaxAge >= 0 {
		t.Errorf("the sign-in page does not delete the flash cookie: %q", page.header.Values("Set-Cookie"))
	}
	if got := pageFlashes(t, c.get("/login")); len(got) != 0 {
		t.Errorf("sign-in page again: flashes %q, want none", got)
	}
}

// TestForgedFlashCookieShowsOnlyCatalogueTexts: a flash cookie is not signed; a forged one
// can only pick messages of the catalogue. Unknown or garbled codes show nothing and do not
// fail the page; known codes show their fixed text, at most a few of them.
func TestForgedFlashCookieShowsOnlyCatalogueTexts(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleSupport)
	u, _ := url.Parse(app.srv.URL)
	for _, tc := range []struct {
		name, value string
		want        []string
	}{
		{"unknown code", "nonsense", nil},
		{"markup", "<script>alert(1)</script>", nil},
		{"empty", "", nil},
		{"separators only", "....", nil},
		{"known code", "approved", []string{msgApproved}},
		{"known among garbage", "x.cancelled.%3Cb%3E", []string{msgCancelled}},
		{"more than a few", strings.Repeat("denied.", 50), []string{msgDenied, msgDenied, msgDenied, msgDenied}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.http.Jar.SetCookies(u, []*http.Cookie{{Name: testFlashCookie, Value: tc.value, Path: "/"}})
			res := c.get("/runs/recent")
			if res.status != http.StatusOK {
				t.Fatalf("GET with flash cookie %q: %d", tc.value, res.status)
			}
			if got := pageFlashes(t, res); !slices.Equal(got, tc.want) {
				t.Errorf("flash cookie %q: flashes %q, want %q", tc.value, got, tc.want)
			}
			if strings.Contains(res.body, "<script>alert") || strings.Contains(res.body, "nonsense") {
				t.Errorf("flash cookie %q echoed into the page", tc.value)
			}
			if got := pageFlashes(t, c.get("/runs/recent")); len(got) != 0 {
				t.Errorf("flash cookie %q not cleared: next page shows %q", tc.value, got)
			}
		})
	}
}
