package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
)

// loginFrom returns a client signed in as role's test user by a browser of User-Agent agent
// at client address ip (the app trusts the loopback proxy's X-Forwarded-For).
func (a *testApp) loginFrom(role runtime.Role, agent, ip string) *client {
	a.t.Helper()
	c := a.newClient()
	res := c.postForm("/login", url.Values{"username": {testUsers[role]}, "password": {testPassword}, "_csrf": {c.csrfFrom("/login")}},
		"User-Agent", agent, "X-Forwarded-For", ip)
	if res.status != http.StatusSeeOther {
		a.t.Fatalf("login as %s: %d, want 303", role, res.status)
	}
	return c
}

// listedSession is one row of the sessions page.
type listedSession struct {
	uid, agent, ip, created, lastSeen string
	current                           bool
}

// sessionsPage returns the rows of c's sessions page, in order.
func (c *client) sessionsPage() []listedSession {
	c.t.Helper()
	res := c.get("/account/sessions")
	if res.status != http.StatusOK {
		c.t.Fatalf("GET /account/sessions: %d", res.status)
	}
	var out []listedSession
	res.doc(c.t).Find(`[data-testid="session-row"]`).Each(func(_ int, s *goquery.Selection) {
		uid, _ := s.Attr("data-uid")
		out = append(out, listedSession{uid: uid, agent: strings.TrimSpace(s.Find(`[data-testid="session-agent"]`).Text()),
			ip: s.Find(`[data-testid="session-ip"]`).Text(), created: s.Find(`[data-testid="session-created"] time`).AttrOr("datetime", ""),
			lastSeen: s.Find(`[data-testid="session-last-seen"] time`).AttrOr("datetime", ""),
			current:  s.Find(`[data-testid="session-current"]`).Length() == 1})
	})
	return out
}

// otherSession returns the uid of the first session on c's page that is not c's own.
func (c *client) otherSession() string {
	c.t.Helper()
	for _, s := range c.sessionsPage() {
		if !s.current {
			return s.uid
		}
	}
	c.t.Fatal("no other session listed")
	return ""
}

// indexedSessions counts the open rows of the session index of user uid.
func (a *testApp) indexedSessions(uid int64) int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_session WHERE be_user = ? AND ended_at = 0`, uid).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// TestSessionsPageListsOpenSessions: each sign-in is a row with its sign-in time, last seen,
// client address and browser, this session first and marked; another person's sessions and
// signed-out ones are not listed; the account page links the page.
func TestSessionsPageListsOpenSessions(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{trustedProxies: "127.0.0.1/32"})
	phone := app.loginFrom(runtime.RoleReviewer, "Phone <b>Safari</b>", "198.51.100.7")
	laptop := app.loginFrom(runtime.RoleReviewer, "Laptop Firefox", "203.0.113.9")
	gone := app.loginFrom(runtime.RoleReviewer, "Gone", "192.0.2.1")
	app.loginFrom(runtime.RoleSupport, "Someone else's", "192.0.2.2")
	if res := gone.postForm("/logout", url.Values{"_csrf": {gone.token()}}); res.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.status)
	}
	if link := laptop.get("/account").doc(t).Find(`[data-testid="account-sessions-link"]`).AttrOr("href", ""); link != "/account/sessions" {
		t.Errorf("account page links %q, want /account/sessions", link)
	}
	rows := laptop.sessionsPage()
	if len(rows) != 2 {
		t.Fatalf("sessions page lists %+v, want the laptop's and the phone's", rows)
	}
	if r := rows[0]; !r.current || r.agent != "Laptop Firefox" || r.ip != "203.0.113.9" || r.created == "" || r.lastSeen == "" {
		t.Errorf("first row %+v, want this session (Laptop Firefox from 203.0.113.9) marked, with its times", r)
	}
	if r := rows[1]; r.current || r.agent != "Phone <b>Safari</b>" || r.ip != "198.51.100.7" {
		t.Errorf("second row %+v, want the phone's (its User-Agent as text), not marked", r)
	}
	if page := phone.sessionsPage(); !page[0].current || page[0].agent != "Phone <b>Safari</b>" {
		t.Errorf("the phone's own page marks %+v first, want the phone", page[0])
	}
}

// TestEverySignInPathWritesTheSessionIndex: a password, a password and TOTP code, a recovery
// code and single sign-on each leave one open row for the person; a half-finished sign-in
// (code owed) leaves none.
func TestEverySignInPathWritesTheSessionIndex(t *testing.T) {
	t.Parallel()
	t.Run("password", func(t *testing.T) {
		app := newTestApp(t, appOptions{})
		app.login(runtime.RoleSupport)
		if n := app.indexedSessions(app.uids[runtime.RoleSupport]); n != 1 {
			t.Errorf("%d rows after a password sign-in, want 1", n)
		}
	})
	t.Run("one-time and recovery codes", func(t *testing.T) {
		d := newMFADesk(t, appOptions{})
		uid := d.app.uids[runtime.RoleReviewer]
		first := d.app.login(runtime.RoleReviewer)
		secret, codes := d.enrol(first)
		if res := first.postForm("/logout", url.Values{"_csrf": {first.token()}}); res.status != http.StatusSeeOther {
			t.Fatalf("logout: %d", res.status)
		}
		d.nextStep()
		c := d.password(runtime.RoleReviewer, "/")
		if n := d.app.indexedSessions(uid); n != 0 {
			t.Errorf("%d rows while the code is owed, want 0", n)
		}
		if res := c.submitCode(d.code(secret)); res.status != http.StatusSeeOther {
			t.Fatalf("code: %d", res.status)
		}
		if n := d.app.indexedSessions(uid); n != 1 {
			t.Errorf("%d rows after the one-time code, want 1", n)
		}
		if res := d.password(runtime.RoleReviewer, "/").submitCode(codes[0]); res.status != http.StatusSeeOther {
			t.Fatalf("recovery code: %d", res.status)
		}
		if n := d.app.indexedSessions(uid); n != 2 {
			t.Errorf("%d rows after a recovery code too, want 2", n)
		}
	})
	t.Run("single sign-on", func(t *testing.T) {
		d := newOIDCDesk(t, false)
		c, res := d.signIn(person("olga", "desk-admins"), "/")
		if res.status != http.StatusSeeOther {
			t.Fatalf("callback: %d", res.status)
		}
		olga, err := d.app.accounts.AccountByUsername(t.Context(), "olga")
		if err != nil {
			t.Fatal(err)
		}
		if n := d.app.indexedSessions(olga.UID); n != 1 {
			t.Errorf("%d rows after single sign-on, want 1", n)
		}
		if rows := c.sessionsPage(); len(rows) != 1 || !rows[0].current {
			t.Errorf("sessions page after single sign-on: %+v", rows)
		}
	})
}

// TestSignOutOneSessionEndsItAtItsNextRequest: from the laptop the person signs out the
// phone; the phone's next request goes to the sign-in page (audited with the reason), the
// laptop stays signed in, and the phone's cookie replayed later opens nothing.
func TestSignOutOneSessionEndsItAtItsNextRequest(t *testing.T) {
	t.Parallel()
	for _, withSession := range []bool{false, true} {
		t.Run(map[bool]string{false: "index read alone", true: "index read with the session"}[withSession], func(t *testing.T) {
			signOutOne(t, newTestApp(t, appOptions{sessionAccount: withSession}))
		})
	}
}

func signOutOne(t *testing.T, app *testApp) {
	phone, laptop := app.login(runtime.RoleReviewer), app.login(runtime.RoleReviewer)
	phoneCookie := phone.cookie()
	if phone.get("/").status != http.StatusOK {
		t.Fatal("the phone is not signed in")
	}
	res := laptop.postForm("/account/sessions/end", url.Values{"_csrf": {laptop.token()}, "session": {laptop.otherSession()}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/account/sessions" {
		t.Fatalf("sign out the phone: %d Location %q, want 303 to the sessions page", res.status, res.header.Get("Location"))
	}
	wantRedirectToLogin(t, "the phone's next request", phone.get("/runs"))
	wantRedirectToLogin(t, "the phone's cookie replayed", app.withCookie(phoneCookie).get("/"))
	if laptop.get("/").status != http.StatusOK {
		t.Error("the laptop was signed out too")
	}
	if rows := laptop.sessionsPage(); len(rows) != 1 || !rows[0].current {
		t.Errorf("sessions after signing out the phone: %+v, want the laptop alone", rows)
	}
	if got := auditReasons(t, app, actionSessionEnded); !strings.Contains(got, "signed out from another session") {
		t.Errorf("session_ended reasons %q lack the sign-out from another session", got)
	}
	if got := auditReasons(t, app, actionSessionSignOut); !strings.HasPrefix(got, "signed out session ") {
		t.Errorf("session_sign_out reasons %q", got)
	}
}

// TestSignOutAllOtherSessionsKeepsThisOne: every other session of the person is signed out,
// this one and other people's stay.
func TestSignOutAllOtherSessionsKeepsThisOne(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	others := []*client{app.login(runtime.RoleAdmin), app.login(runtime.RoleAdmin), app.login(runtime.RoleAdmin)}
	bystander := app.login(runtime.RoleSupport)
	me := app.login(runtime.RoleAdmin)
	if res := me.postForm("/account/sessions/end-others", url.Values{"_csrf": {me.token()}}); res.status != http.StatusSeeOther {
		t.Fatalf("sign out all others: %d", res.status)
	}
	page := me.get("/account/sessions")
	if !strings.Contains(page.body, msgOthersEnded) || page.doc(t).Find(`[data-testid="sessions-only-this"]`).Length() != 1 {
		t.Errorf("sessions page after signing out all others lacks the flash or \"only session\": %.400s", page.body)
	}
	for i, c := range others {
		wantRedirectToLogin(t, "another session "+string(rune('A'+i)), c.get("/"))
	}
	if me.get("/").status != http.StatusOK || bystander.get("/").status != http.StatusOK {
		t.Error("this session or another person's was signed out")
	}
	if got := auditReasons(t, app, actionSessionSignOut); got != "signed out every other session (3)" {
		t.Errorf("session_sign_out reasons %q", got)
	}
}

// TestSignOutAnotherPersonsSessionIs404: a session number that is not one of the person's open
// sessions — another person's, unknown, not a number — is 404 (audited) and ends nothing.
func TestSignOutAnotherPersonsSessionIs404(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	sam := app.login(runtime.RoleSupport)
	var samSession string
	if err := app.pool.QueryRow(`SELECT uid FROM tx_runsdesk_session WHERE be_user = ?`, app.uids[runtime.RoleSupport]).Scan(&samSession); err != nil {
		t.Fatal(err)
	}
	ada := app.login(runtime.RoleAdmin)
	for _, id := range []string{samSession, "999999", "x"} {
		if res := ada.postForm("/account/sessions/end", url.Values{"_csrf": {ada.token()}, "session": {id}}); res.status != http.StatusNotFound {
			t.Errorf("sign out session %q of someone else: %d, want 404", id, res.status)
		}
	}
	if sam.get("/").status != http.StatusOK {
		t.Error("another person's session was signed out")
	}
	if got := auditReasons(t, app, actionSessionSignOut); got != strings.Repeat("|not an open session of theirs", 3)[1:] {
		t.Errorf("session_sign_out reasons %q, want three denials", got)
	}
}

// TestLastSeenIsWrittenAtMostOnceAMinute: requests within a minute of the last one written
// leave the row alone; the first one after it writes its time and address.
func TestLastSeenIsWrittenAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	clock := &manualClock{at: time.Now()}
	app := newTestApp(t, appOptions{now: clock.now, trustedProxies: "127.0.0.1/32"})
	uid := app.uids[runtime.RoleSupport]
	signedIn := clock.now().Unix()
	c := app.loginFrom(runtime.RoleSupport, "Browser", "198.51.100.7")
	seen := func() (int64, string) {
		t.Helper()
		var at int64
		var ip string
		if err := app.pool.QueryRow(`SELECT last_seen, ip FROM tx_runsdesk_session WHERE be_user = ?`, uid).Scan(&at, &ip); err != nil {
			t.Fatal(err)
		}
		return at, ip
	}
	from := func(ip string) {
		t.Helper()
		if res := c.request(http.MethodGet, "/", nil, http.Header{"X-Forwarded-For": {ip}}); res.status != http.StatusOK {
			t.Fatalf("GET /: %d", res.status)
		}
	}
	for range 3 {
		clock.advance(19 * time.Second)
		from("203.0.113.1")
	}
	if at, ip := seen(); at != signedIn || ip != "198.51.100.7" {
		t.Errorf("after requests within a minute: last seen %d from %s, want the sign-in's %d from 198.51.100.7", at, ip, signedIn)
	}
	clock.advance(3 * time.Second)
	from("203.0.113.2")
	if at, ip := seen(); at != clock.now().Unix() || ip != "203.0.113.2" {
		t.Errorf("a minute after the sign-in: last seen %d from %s, want %d from 203.0.113.2", at, ip, clock.now().Unix())
	}
	written := clock.now().Unix()
	clock.advance(30 * time.Second)
	from("203.0.113.3")
	if at, _ := seen(); at != written {
		t.Errorf("30 s later: last seen %d, want %d", at, written)
	}
}

// TestSignOutForgetsTheSession: signing out removes the session's row, so its cookie replayed
// opens nothing even if the session store still held it.
func TestSignOutForgetsTheSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleSupport)
	if res := c.postForm("/logout", url.Values{"_csrf": {c.token()}}); res.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.status)
	}
	if n := app.indexedSessions(app.uids[runtime.RoleSupport]); n != 0 {
		t.Errorf("%d rows after sign-out, want 0", n)
	}
}

// TestSignOutAllOthersRace: while sessions of one person send requests, several of them sign
// out all the others at once. Exactly one wins; once it has answered, no request of an ended
// session gets through (each request reads its index row with its session, as the
// application does), and the winner stays signed in.
func TestSignOutAllOthersRace(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{sessionAccount: true})
	const sessions = 8
	clients := make([]*client, sessions)
	tokens := make([]string, sessions)
	for i := range clients {
		clients[i] = app.login(runtime.RoleReviewer)
		tokens[i] = clients[i].token()
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answered atomic.Bool
		winners  []int
		leaked   []string
	)
	start := make(chan struct{})
	for i, c := range clients {
		wg.Go(func() {
			<-start
			res := c.postForm("/account/sessions/end-others", url.Values{"_csrf": {tokens[i]}})
			if res.status == http.StatusSeeOther && res.header.Get("Location") == "/account/sessions" {
				mu.Lock()
				winners = append(winners, i)
				mu.Unlock()
				answered.Store(true)
			}
		})
		wg.Go(func() {
			<-start
			for range 15 {
				after := answered.Load()
				res := c.get("/runs")
				mu.Lock()
				won := len(winners) == 1 && winners[0] == i
				if after && res.status == http.StatusOK && !won {
					leaked = append(leaked, "session "+string(rune('A'+i)))
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d sessions won signing out all others (%v), want exactly one", len(winners), winners)
	}
	if len(leaked) > 0 {
		t.Errorf("requests of ended sessions got through after the sign-out answered: %v", leaked)
	}
	for i, c := range clients {
		got := c.get("/").status
		if i == winners[0] && got != http.StatusOK {
			t.Errorf("the winner was signed out: %d", got)
		}
		if i != winners[0] && got == http.StatusOK {
			t.Errorf("session %d stays signed in", i)
		}
	}
}
