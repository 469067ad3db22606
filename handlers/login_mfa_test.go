package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/db"
	"runsdesk/mfa"
	"runsdesk/runtime"
)

// testClock is the handlers' clock a test moves.
type testClock interface {
	now() time.Time
	advance(time.Duration)
}

// manualClock is a testClock starting at the real time.
type manualClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *manualClock) advance(by time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(by)
}

// mfaDesk is a test app with sealing keys on a clock the test moves.
type mfaDesk struct {
	t     *testing.T
	app   *testApp
	clock testClock
}

func newMFADesk(t *testing.T, opts appOptions) *mfaDesk {
	t.Helper()
	clock := &manualClock{at: time.Now()}
	opts.sealing, opts.now = true, clock.now
	return &mfaDesk{t: t, app: newTestApp(t, opts), clock: clock}
}

func (d *mfaDesk) now() time.Time { return d.clock.now() }

// nextStep moves the clock to the next time step, so a code of a fresh step can be typed.
func (d *mfaDesk) nextStep() { d.clock.advance(mfa.Period) }

// code is the code of secret at the desk's time.
func (d *mfaDesk) code(secret string) string {
	d.t.Helper()
	code, err := mfa.Code(secret, d.now())
	if err != nil {
		d.t.Fatal(err)
	}
	return code
}

// enrol walks signed-in c through /account/security and returns the secret and the recovery
// codes shown.
func (d *mfaDesk) enrol(c *client) (string, []string) {
	d.t.Helper()
	tok := c.csrfFrom("/account/security")
	if res := c.postForm("/account/security/totp", url.Values{"_csrf": {tok}}); res.status != http.StatusSeeOther {
		d.t.Fatalf("begin enrolment: %d, want 303", res.status)
	}
	page := c.get("/account/security")
	secret := strings.TrimSpace(page.doc(d.t).Find(`[data-testid="security-secret"]`).Text())
	if page.status != http.StatusOK || secret == "" {
		d.t.Fatalf("security page: %d without a secret: %.300s", page.status, page.body)
	}
	qr := c.get("/account/security/qr.png")
	if qr.status != http.StatusOK || qr.header.Get("Content-Type") != "image/png" || !strings.HasPrefix(qr.body, "\x89PNG") ||
		qr.header.Get("Cache-Control") != "no-store" {
		d.t.Fatalf("QR code: %d %q %q", qr.status, qr.header.Get("Content-Type"), qr.header.Get("Cache-Control"))
	}
	res := c.postForm("/account/security/totp/confirm", url.Values{"_csrf": {tok}, "code": {d.code(secret)}})
	var codes []string
	res.doc(d.t).Find(`[data-testid="recovery-code"]`).Each(func(_ int, s *goquery.Selection) { codes = append(codes, s.Text()) })
	if res.status != http.StatusOK || len(codes) != mfa.RecoveryCodeCount {
		d.t.Fatalf("confirm: %d with %d recovery codes: %.300s", res.status, len(codes), res.body)
	}
	if again := c.get("/account/security"); !strings.Contains(again.body, "You have 10 unused recovery codes.") || strings.Contains(again.body, codes[0]) {
		d.t.Fatal("the security page does not say the factor is on, or shows a recovery code again")
	}
	return secret, codes
}

// password signs a new client in with the password of role's user from deep link next and
// checks it is sent to the code form; the client is not signed in yet.
func (d *mfaDesk) password(role runtime.Role, next string) *client {
	d.t.Helper()
	c := d.app.newClient()
	res := c.postForm("/login", url.Values{"username": {testUsers[role]}, "password": {testPassword}, "next": {next},
		"_csrf": {c.csrfFrom("/login?next=" + url.QueryEscape(next))}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != loginCodePath {
		d.t.Fatalf("password of %s: %d Location %q, want 303 to the code form", role, res.status, res.header.Get("Location"))
	}
	return c
}

// submitCode posts code on c's code form.
func (c *client) submitCode(code string) response {
	c.t.Helper()
	return c.postForm(loginCodePath, url.Values{"code": {code}, "_csrf": {c.csrfFrom(loginCodePath)}})
}

// TestTOTPEnrolmentAndSignIn: enrolment shows a QR code and the secret, a code confirms it
// and ten recovery codes are shown once. Sign-in then asks for the code after the password:
// until it is given the session is signed in nowhere (every page sends to /login); a code of
// ±1 step signs in with a renewed session token to the deep link; a step is accepted once.
func TestTOTPEnrolmentAndSignIn(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{})
	secret, _ := d.enrol(d.app.login(runtime.RoleReviewer))
	d.nextStep()
	d.nextStep()

	c := d.password(runtime.RoleReviewer, "/runs/recent?x=1")
	half := c.cookie()
	for _, path := range []string{"/", "/runs", "/account", "/account/security", "/account/password"} {
		wantRedirectToLogin(t, "half signed in: GET "+path, c.get(path))
	}
	if res := c.postForm("/logout", url.Values{"_csrf": {c.csrfFrom(loginCodePath)}}); res.status != http.StatusSeeOther || res.header.Get("Location") == "/" {
		t.Fatalf("half signed in: POST /logout %d %q", res.status, res.header.Get("Location"))
	}
	confirmed := d.now().Add(-2 * mfa.Period)
	used, err := mfa.Code(secret, confirmed)
	if err != nil {
		t.Fatal(err)
	}
	if res := c.submitCode(used); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("the code that confirmed the enrolment: %d, want 422", res.status)
	}
	if res := c.submitCode("000000"); res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, msgBadCode) {
		t.Fatalf("wrong code: %d, want 422 with %q", res.status, msgBadCode)
	}
	late := d.now().Add(-mfa.Period)
	var previous string
	previous, err = mfa.Code(secret, late)
	if err != nil {
		t.Fatal(err)
	}
	res := c.submitCode(previous[:3] + " " + previous[3:])
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/runs/recent?x=1" {
		t.Fatalf("code of the previous step: %d Location %q, want 303 to the deep link", res.status, res.header.Get("Location"))
	}
	if full := c.cookie(); full == "" || full == half {
		t.Fatal("the session token was not renewed at the full sign-in")
	}
	if name, _ := c.whoami(); name != testUsers[runtime.RoleReviewer] {
		t.Fatalf("signed in as %q after the code", name)
	}
	if res := d.app.withCookie(half).get("/"); res.status == http.StatusOK {
		t.Fatal("the half-signed-in token opens a page")
	}

	again := d.password(runtime.RoleReviewer, "/")
	if res := again.submitCode(previous); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("replayed code: %d, want 422", res.status)
	}
	if res := again.submitCode(d.code(secret)); res.status != http.StatusSeeOther {
		t.Fatalf("code of the current step: %d, want 303", res.status)
	}
	actions := strings.Join(d.app.auditActions(), " ")
	for _, want := range []string{"mfa_enrol/started", "mfa_enrol/success", "login/code_asked", "login_code/failure", "login/success"} {
		if !strings.Contains(actions, want) {
			t.Errorf("audit trail %s lacks %s", actions, want)
		}
	}
	if reasons := auditReasons(t, d.app, "login_code"); !strings.Contains(reasons, "replay") {
		t.Errorf("login_code audit reasons %q do not name the replay", reasons)
	}
}

// TestConcurrentCodesOfOneStep: two half-signed-in sessions posting the same code at once —
// a TOTP code of one step, or one recovery code — are signed in once; the other is refused.
func TestConcurrentCodesOfOneStep(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{})
	secret, codes := d.enrol(d.app.login(runtime.RoleAdmin))
	d.nextStep()
	for _, code := range []string{d.code(secret), codes[0]} {
		concurrentCode(t, d, code)
	}
}

// concurrentCode posts code from two half-signed-in sessions at once and wants exactly one
// signed in.
func concurrentCode(t *testing.T, d *mfaDesk, code string) {
	t.Helper()
	clients := []*client{d.password(runtime.RoleAdmin, "/"), d.password(runtime.RoleAdmin, "/")}
	forms := make([]url.Values, len(clients))
	for i, c := range clients {
		forms[i] = url.Values{"code": {code}, "_csrf": {c.csrfFrom(loginCodePath)}}
	}
	statuses := make([]int, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { statuses[i] = c.postForm(loginCodePath, forms[i]).status })
	}
	wg.Wait()
	if !(statuses[0] == http.StatusSeeOther) != (statuses[1] == http.StatusSeeOther) || statuses[0]+statuses[1] != http.StatusSeeOther+http.StatusUnprocessableEntity {
		t.Fatalf("code %q: statuses %v; want one 303 and one 422", code, statuses)
	}
}

// recordedAlerts records the recovery-code alerts the handlers send.
type recordedAlerts struct {
	mu   sync.Mutex
	sent []string
}

func (r *recordedAlerts) RecoveryCodeUsed(_ context.Context, person runtime.Actor, ip string, left int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, person.Email+" "+ip+" "+strings.Repeat("x", left))
	return nil
}

// TestRecoveryCodeSignIn: a recovery code (any case, dashes optional) signs in once, is
// audited and alerts the person; regenerated codes void the old ones.
func TestRecoveryCodeSignIn(t *testing.T) {
	t.Parallel()
	alerts := &recordedAlerts{}
	d := newMFADesk(t, appOptions{alerts: alerts})
	ada := d.app.login(runtime.RoleAdmin)
	_, codes := d.enrol(ada)
	if err := d.app.accounts.SetEmail(t.Context(), d.app.uids[runtime.RoleAdmin], "ada@example.com", nil); err != nil {
		t.Fatal(err)
	}
	c := d.password(runtime.RoleAdmin, "/runs")
	if res := c.submitCode(strings.ToUpper(strings.ReplaceAll(codes[3], "-", ""))); res.status != http.StatusSeeOther || res.header.Get("Location") != "/runs" {
		t.Fatalf("recovery code: %d Location %q, want 303 to the deep link", res.status, res.header.Get("Location"))
	}
	if got := strings.Join(alerts.sent, "|"); got != "ada@example.com 127.0.0.1 "+strings.Repeat("x", 9) {
		t.Fatalf("alerts %q; want one to ada saying 9 codes are left", got)
	}
	if res := d.password(runtime.RoleAdmin, "/").submitCode(codes[3]); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("recovery code used twice: %d, want 422", res.status)
	}
	if reasons := auditReasons(t, d.app, "recovery_code_used"); reasons != "a recovery code signed in" {
		t.Fatalf("recovery_code_used audit rows %q", reasons)
	}
	res := c.postForm("/account/security/recovery-codes", url.Values{"_csrf": {c.token()}})
	fresh := res.doc(t).Find(`[data-testid="recovery-code"]`).First().Text()
	if res.status != http.StatusOK || fresh == "" {
		t.Fatalf("regenerate: %d", res.status)
	}
	if res := d.password(runtime.RoleAdmin, "/").submitCode(codes[4]); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("an old code after regeneration: %d, want 422", res.status)
	}
	if res := d.password(runtime.RoleAdmin, "/").submitCode(fresh); res.status != http.StatusSeeOther {
		t.Fatalf("a new code: %d, want 303", res.status)
	}
}

// TestCodeStepIsThrottled: wrong codes count per account apart from the password; once the
// allowance is used up even the right code is 429 with Retry-After, and audited.
func TestCodeStepIsThrottled(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{limits: db.LoginLimits{AccountFailures: 3, AccountWindow: time.Hour, IPFailures: 100, IPWindow: time.Hour}})
	secret, _ := d.enrol(d.app.login(runtime.RoleAdmin))
	d.nextStep()
	for range 3 {
		if res := d.password(runtime.RoleAdmin, "/").submitCode("123456"); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("wrong code: %d", res.status)
		}
	}
	res := d.password(runtime.RoleAdmin, "/").submitCode(d.code(secret))
	if res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") == "" {
		t.Fatalf("right code after 3 wrong ones: %d Retry-After %q, want 429", res.status, res.header.Get("Retry-After"))
	}
	if !strings.Contains(strings.Join(d.app.auditActions(), " "), "login_code/throttled") {
		t.Fatal("the throttled code is not audited")
	}
}

// TestRequireMFA: a person of a role that must enrol and has no factor is signed in only to
// enrolment and sign-out (no navigation); once enrolled they may use the desk. Roles not
// listed are not asked.
func TestRequireMFA(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{requireMFA: []runtime.Role{runtime.RoleAdmin, runtime.RoleReviewer}})
	c := d.app.newClient()
	res := c.postForm("/login", url.Values{"username": {testUsers[runtime.RoleAdmin]}, "password": {testPassword}, "_csrf": {c.csrfFrom("/login")}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/account/security" {
		t.Fatalf("password of an admin without a factor: %d Location %q, want 303 to enrolment", res.status, res.header.Get("Location"))
	}
	for _, path := range []string{"/", "/runs", "/account", "/runs/new"} {
		if res := c.get(path); res.status != http.StatusSeeOther || res.header.Get("Location") != "/account/security" {
			t.Errorf("GET %s before enrolment: %d Location %q, want 303 to /account/security", path, res.status, res.header.Get("Location"))
		}
	}
	page := c.get("/account/security")
	doc := page.doc(t)
	if doc.Find(`[data-testid^="nav-"]`).Length() != 0 || doc.Find(`a[href="/account"]`).Length() != 0 ||
		doc.Find(`[data-testid="logout"]`).Length() != 1 || doc.Find(`[data-testid="security-required"]`).Length() != 1 {
		t.Fatalf("the enrolment page shows more than enrolment and sign-out: %.600s", page.body)
	}
	d.enrol(c)
	if res := c.get("/runs"); res.status != http.StatusOK {
		t.Fatalf("GET /runs after enrolment: %d", res.status)
	}
	if sam := d.app.login(runtime.RoleSupport); sam.get("/runs").status != http.StatusOK {
		t.Fatal("a support person (not required) cannot use the desk")
	}
}

// TestEnrolmentRefusedWithoutKeys: without sealing keys the page says how to set them and
// the enrolment is refused (422, audited); --require-mfa cannot be configured at all.
func TestEnrolmentRefusedWithoutKeys(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c := app.login(runtime.RoleAdmin)
	if page := c.get("/account/security"); !strings.Contains(page.body, "RUNSDESK_KEYS") {
		t.Fatalf("security page without keys does not say how to set them: %.400s", page.body)
	}
	res := c.postForm("/account/security/totp", url.Values{"_csrf": {c.token()}})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "RUNSDESK_KEYS") {
		t.Fatalf("begin without keys: %d, want 422 naming RUNSDESK_KEYS", res.status)
	}
	if _, err := newHandlers(Config{Runtime: app.rt, Catalog: app.store, Accounts: app.accounts, Admin: app.h.admin, Audit: app.audit,
		Throttle: db.NewLoginThrottle(app.pool, db.LoginLimits{}), Sessions: NewSessionManager(db.NewSessionStore(app.pool, time.Second)), SessionIndex: app.index,
		Drafts: app.store, MFA: MFA{Factors: app.factors, Require: []runtime.Role{runtime.RoleAdmin}}}); err == nil {
		t.Fatal("MFA.Require without keys was accepted")
	}
}

// auditReasons returns the reasons of the audit rows of action, oldest first, joined by "|".
func auditReasons(t *testing.T, app *testApp, action string) string {
	t.Helper()
	rows, err := app.audit.RecentAudit(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Action == action {
			out = append(out, rows[i].Reason)
		}
	}
	return strings.Join(out, "|")
}

// TestSingleSignOnSecondFactor: after single sign-on a person with a factor is asked for the
// code unless the provider says it did MFA (amr mfa or otp); with MFA.Always they are asked
// anyway. The deep link survives the code step.
func TestSingleSignOnSecondFactor(t *testing.T) {
	t.Parallel()
	for _, always := range []bool{false, true} {
		o := newOIDCDeskWith(t, false, appOptions{sealing: true, mfaAlways: always})
		d := &mfaDesk{t: t, app: o.app, clock: o}
		ann := person("ann", "desk-reviewers")
		c, res := o.signIn(ann, "/")
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
			t.Fatalf("first single sign-on: %d %q", res.status, res.header.Get("Location"))
		}
		secret, _ := d.enrol(c)
		d.nextStep()
		for _, amr := range [][]string{nil, {"pwd"}, {"pwd", "mfa"}, {"otp"}} {
			ann.AMR = amr
			c, res := o.signIn(ann, "/runs?q=1")
			exempt := !always && len(amr) > 0 && amr[len(amr)-1] != "pwd"
			if exempt {
				if res.status != http.StatusSeeOther || res.header.Get("Location") != "/runs?q=1" {
					t.Fatalf("always %v, amr %v: %d %q, want signed in to the deep link", always, amr, res.status, res.header.Get("Location"))
				}
				continue
			}
			if res.status != http.StatusSeeOther || res.header.Get("Location") != loginCodePath {
				t.Fatalf("always %v, amr %v: %d %q, want the code form", always, amr, res.status, res.header.Get("Location"))
			}
			wantRedirectToLogin(t, "single sign-on before the code", c.get("/runs"))
			if res := c.submitCode(d.code(secret)); res.status != http.StatusSeeOther || res.header.Get("Location") != "/runs?q=1" {
				t.Fatalf("always %v, amr %v: code %d %q, want the deep link", always, amr, res.status, res.header.Get("Location"))
			}
			if name, _ := c.whoami(); name != "ann" {
				t.Fatalf("signed in as %q", name)
			}
			d.nextStep()
		}
	}
}
