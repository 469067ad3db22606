package handlers

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/handlers/admission"
	"runsdesk/handlers/api"
	"runsdesk/handlers/api/apitest"
	"runsdesk/handlers/mcpserver"
	"runsdesk/handlers/metrics"
	"runsdesk/handlers/waiters"
	"runsdesk/internal/syncbuf"
	"runsdesk/internal/testdb"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/runtime/applied"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/tool"
	"runsdesk/seal"
	typo3accounts "runsdesk/typo3/accounts"
	"runsdesk/typo3/backend"
	"runsdesk/typo3/extruns"
	"runsdesk/typo3/extruns/extrunstest"
	"runsdesk/typo3/roles"
	"runsdesk/typo3/typo3test"
)

func TestMain(m *testing.M) { dbtest.Main(m, stopBrowser) }

// The production types satisfy the interfaces New takes.
var (
	_ Runtime       = (*engine.Runtime)(nil)
	_ Catalog       = (*db.Store)(nil)
	_ Directory     = (*db.Accounts)(nil)
	_ Accounts      = (*db.Accounts)(nil)
	_ Auditor       = (*db.Audit)(nil)
	_ LoginThrottle = (*db.LoginThrottle)(nil)
	_ Drafts        = (*db.Store)(nil)
	_ Notifications = (*db.Store)(nil)
	_ Factors       = (*db.Factors)(nil)
	_ TYPO3Runs     = (*extruns.Runs)(nil)
)

// testKey is the sealing key of the apps with appOptions.sealing.
const testKey = "t1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// testPassword is every test user's password.
const testPassword = "a long test passphrase for runsdesk"

// testUsers are the people of every test app, one per role.
var testUsers = map[runtime.Role]string{
	runtime.RoleAdmin:    "ada",
	runtime.RoleReviewer: "rita",
	runtime.RoleSupport:  "sam",
}

// appOptions adjusts newTestApp.
type appOptions struct {
	idle, lifetime time.Duration
	limits         db.LoginLimits
	secure         bool
	// extra registers test-only routes (a panicking handler) on the finished router.
	extra func(h *Handlers, e *echo.Echo)
	// tools are in-process tools of the runtime; configurations are stored before it starts.
	tools          []tool.Tool
	configurations []runtime.Configuration
	// gate is the admission gate of the pages and the API (none when nil).
	gate *admission.Gate
	// trustedProxies are the peers whose X-Forwarded-For is honoured (CIDR list).
	trustedProxies string
	// apiAuthFailures is the API's per-address budget of failed authentications, refilled
	// once a minute; 0: unlimited (the route matrix fails authentication many times).
	apiAuthFailures int
	// runtimeStore, when set, wraps the store the runtime uses; schemas, when set, is the
	// runtime's schema compiler.
	runtimeStore func(runtime.Store) runtime.Store
	schemas      engine.SchemaCompiler
	// pages, when set, wraps the runtime the web pages call (the API keeps the engine).
	pages func(Runtime) Runtime
	// signOn, when set, builds the single sign-on of the app on its database; now is the
	// handlers' clock (default time.Now).
	signOn func(pool *sql.DB) SignOn
	now    func() time.Time
	// sealing gives the app sealing keys, so people may enrol a second factor; requireMFA,
	// mfaAlways and alerts are its MFA's Require, Always and Alerts.
	sealing    bool
	requireMFA []runtime.Role
	mfaAlways  bool
	alerts     Alerts
	// sessionAccount reads each request's account and session index row with its session, as
	// the application does (db.WithSessionAccount).
	sessionAccount bool
	// maxWaiters and heartbeat are the hall's Max and Heartbeat (0: its defaults).
	maxWaiters int
	heartbeat  time.Duration
	// mcpHold and toolUseHold are the MCP server's Hold and ToolUseHold (0: its defaults);
	// auditAPI gives the API (and so the MCP server) the app's audit trail.
	mcpHold, toolUseHold time.Duration
	auditAPI             bool
	// typo3Runs lists the runs of a TYPO3 site's own tx_nrllm_agentrun (testApp.typo3, a
	// database of its own holding only the upstream table); typo3Backend is the backend's
	// address.
	typo3Runs    bool
	typo3Backend string
	// typo3Site runs the app beside a TYPO3 12 site (--typo3): its database holds TYPO3's
	// be_users and be_groups (testApp.typo3, a pool that renames nothing), runsdesk's tables
	// under their own names, and TYPO3 accounts sign in (typo3/accounts, group "Editors" mapped
	// to reviewer, TYPO3 admins admin).
	typo3Site bool
}

// testApp is the real router on a fresh, migrated database, served by httptest. Its clients'
// calls below /api/v1 are checked against the OpenAPI document (apitest).
type testApp struct {
	t        *testing.T
	srv      *httptest.Server
	e        *echo.Echo
	h        *Handlers
	pool     *sql.DB
	store    *db.Store
	rt       *engine.Runtime
	accounts *db.Accounts
	audit    *db.Audit
	tokens   *db.ServiceAccounts
	factors  *db.Factors
	index    *db.SessionIndex
	uids     map[runtime.Role]int64
	logs     *syncBuffer
	hall     *waiters.Hall
	// typo3 is the TYPO3 site's database of appOptions.typo3Runs (nil without).
	typo3 *sql.DB
}

func newTestApp(t *testing.T, opts appOptions) *testApp {
	t.Helper()
	ctx := context.Background()
	pool, dsn, layout, site := appDatabase(t, opts)
	accounts, err := db.NewAccounts(pool, nil, 4, db.CheapHashes())
	if err != nil {
		t.Fatal(err)
	}
	a := &testApp{t: t, pool: pool, typo3: site, accounts: accounts, audit: db.NewAudit(pool, nil),
		tokens: db.NewServiceAccounts(pool, nil), index: db.NewSessionIndex(pool), uids: map[runtime.Role]int64{}, logs: &syncBuffer{}}
	for role, name := range testUsers {
		uid, err := accounts.CreateUser(ctx, name, testPassword, role)
		if err != nil {
			t.Fatalf("CreateUser %s: %v", name, err)
		}
		a.uids[role] = uid
	}
	batches, err := db.OpenBatches(ctx, dsn, layout...)
	if err != nil {
		t.Fatalf("OpenBatches: %v", err)
	}
	t.Cleanup(func() { batches.Close() })
	store := db.New(pool, db.WithBatches(batches))
	for _, c := range opts.configurations {
		if _, err := store.UpsertConfiguration(ctx, c); err != nil {
			t.Fatalf("UpsertConfiguration %s: %v", c.Identifier, err)
		}
	}
	var rtStore runtime.Store = store
	if opts.runtimeStore != nil {
		rtStore = opts.runtimeStore(store)
	}
	desk := metrics.New(metrics.Config{Source: zeroSource{}})
	rt := engine.New(engine.Config{Store: rtStore, Catalog: store, Rules: store, Tools: opts.tools, Lease: time.Minute, Schemas: opts.schemas, Observer: desk})
	t.Cleanup(rt.Close)
	a.store, a.rt = store, rt
	slack := db.DefaultSessionExpirySlack
	if opts.idle > 0 {
		slack = opts.idle / 30
	}
	sessions := NewSessionManager(db.NewSessionStore(pool, slack))
	if opts.idle > 0 {
		sessions.IdleTimeout = opts.idle
	}
	if opts.lifetime > 0 {
		sessions.Lifetime = opts.lifetime
	}
	proxies, err := ParseTrustedProxies(opts.trustedProxies)
	if err != nil {
		t.Fatal(err)
	}
	authFailures := rate.Inf
	if opts.apiAuthFailures > 0 {
		authFailures = rate.Every(time.Minute)
	}
	a.hall = waiters.New(waiters.Config{Source: store, Desk: store, Interval: 20 * time.Millisecond,
		Max: opts.maxWaiters, Heartbeat: opts.heartbeat})
	var pages Runtime = rt
	if opts.pages != nil {
		pages = opts.pages(rt)
	}
	apiConfig := api.Config{Runtime: rt, Tokens: a.tokens, Gate: opts.gate, Queue: store, Waiters: a.hall,
		AuthFailureRate: authFailures, AuthFailureBurst: opts.apiAuthFailures}
	if opts.auditAPI {
		apiConfig.Audit = a.audit
	}
	jsonAPI := api.New(apiConfig)
	cfg := Config{
		TrustedProxies: proxies,
		Runtime:        pages, Catalog: store, Directory: accounts, Accounts: accounts, Audit: a.audit, Throttle: db.NewLoginThrottle(pool, opts.limits),
		Drafts:        store,
		Presence:      store,
		Queue:         store,
		Notifications: store,
		Applied:       applied.New(applied.Config{Store: store}),
		Sessions:      sessions, SessionIndex: a.index, SecureCookies: opts.secure,
		Logger:  slog.New(slog.NewJSONHandler(a.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Waiters: a.hall,
		API:     jsonAPI,
		MCP:     mcpserver.New(mcpserver.Config{Runtime: rt, Guard: jsonAPI, Waiters: a.hall, Hold: opts.mcpHold, ToolUseHold: opts.toolUseHold}),
		Gate:    opts.gate,
		Metrics: desk,
		Ready: metrics.Readyz(metrics.ReadyConfig{Ping: pool.PingContext,
			Pending: func(ctx context.Context) (int, error) { return db.Pending(ctx, pool) }}),
	}
	if opts.signOn != nil {
		cfg.SignOn = opts.signOn(pool)
	}
	if opts.typo3Runs {
		a.typo3 = extrunstest.New(t)
		cfg.TYPO3Runs, cfg.TYPO3BackendURL = extruns.New(a.typo3), opts.typo3Backend
	}
	if opts.typo3Site {
		mapping, err := roles.Parse("reviewer=Editors")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Accounts = typo3accounts.New(accounts, db.NewIdentities(pool, opts.now), backend.New(site, mapping, runtime.RoleAdmin),
			opts.now, cfg.Logger)
		cfg.TYPO3Runs = extruns.New(site)
	}
	var keys *seal.Keyring
	if opts.sealing {
		if keys, err = seal.FromEnv(func(string) string { return testKey }); err != nil {
			t.Fatal(err)
		}
	}
	a.factors = db.NewFactors(pool, keys, opts.now)
	people, err := db.NewAdmin(pool, keys, opts.now, db.CheapHashes())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Admin = admin.New(people, opts.now)
	cfg.MFA = MFA{Factors: a.factors, Require: opts.requireMFA, Always: opts.mfaAlways, Alerts: opts.alerts}
	cfg.Now = opts.now
	a.h, err = newHandlers(cfg)
	if err != nil {
		t.Fatalf("newHandlers: %v", err)
	}
	a.e = a.h.router(cfg)
	if opts.extra != nil {
		opts.extra(a.h, a.e)
	}
	var handler http.Handler = a.e
	if opts.sessionAccount {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a.e.ServeHTTP(w, r.WithContext(db.WithSessionAccount(r.Context())))
		})
	}
	if opts.secure {
		a.srv = httptest.NewTLSServer(handler)
	} else {
		a.srv = httptest.NewServer(handler)
	}
	a.srv.Client().Transport = apitest.New().Transport(t, a.srv.Client().Transport)
	t.Cleanup(a.srv.Close)
	t.Cleanup(a.hall.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", a.logs.String())
		}
	})
	return a
}

// appDatabase is the app's fresh, migrated database: its pool and DSN, and, beside a TYPO3
// site (opts.typo3Site), the layout its pools open with and the site's own pool.
func appDatabase(t *testing.T, opts appOptions) (*sql.DB, string, []db.OpenOption, *sql.DB) {
	t.Helper()
	if !opts.typo3Site {
		pool, dsn := testdb.New(t)
		return pool, dsn, nil, nil
	}
	site := typo3test.New(t)
	return site.Pool, site.DSN, []db.OpenOption{db.BesideTYPO3()}, site.Site
}

// client is a browser stand-in: a cookie jar, redirects not followed.
type client struct {
	t    *testing.T
	app  *testApp
	http *http.Client
}

func (a *testApp) newClient() *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		a.t.Fatal(err)
	}
	hc := *a.srv.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &client{t: a.t, app: a, http: &hc}
}

// login returns a client signed in as the test user of role.
func (a *testApp) login(role runtime.Role) *client {
	a.t.Helper()
	c := a.newClient()
	res := c.postForm("/login", url.Values{"username": {testUsers[role]}, "password": {testPassword}, "_csrf": {c.csrfFrom("/login")}})
	if res.status != http.StatusSeeOther {
		a.t.Fatalf("login as %s: status %d, want 303; body: %.300s", role, res.status, res.body)
	}
	return c
}

// response is what a test looks at.
type response struct {
	status int
	header http.Header
	body   string
}

func (r response) doc(t *testing.T) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	return d
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: string(body)}
}

func (c *client) request(method, path string, body io.Reader, header http.Header) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.app.srv.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return c.do(req)
}

func (c *client) get(path string) response {
	c.t.Helper()
	return c.request(http.MethodGet, path, nil, nil)
}

func (c *client) postForm(path string, form url.Values, extra ...string) response {
	c.t.Helper()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return c.request(http.MethodPost, path, strings.NewReader(form.Encode()), h)
}

// csrfFrom loads page and returns the _csrf value of its first form.
func (c *client) csrfFrom(page string) string {
	c.t.Helper()
	res := c.get(page)
	tok, ok := res.doc(c.t).Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		c.t.Fatalf("no CSRF token on %s (status %d)", page, res.status)
	}
	return tok
}

// token returns the signed-in client's CSRF token (from the layout's sign-out form).
func (c *client) token() string {
	c.t.Helper()
	return c.csrfFrom("/account/password")
}

// cookie returns the value of the session cookie the jar holds for the server.
func (c *client) cookie() string {
	u, _ := url.Parse(c.app.srv.URL)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == cookieInsecure || ck.Name == cookieSecure {
			return ck.Value
		}
	}
	return ""
}

// withCookie returns a fresh client holding only the session cookie value.
func (a *testApp) withCookie(value string) *client {
	c := a.newClient()
	u, _ := url.Parse(a.srv.URL)
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: cookieInsecure, Value: value, Path: "/"}})
	return c
}

// auditActions returns the action/outcome pairs of the audit trail, oldest first.
func (a *testApp) auditActions() []string {
	a.t.Helper()
	rows, err := a.audit.RecentAudit(context.Background(), 1000)
	if err != nil {
		a.t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = r.Action + "/" + r.Outcome
	}
	return out
}

func wantRedirectToLogin(t *testing.T, what string, res response) {
	t.Helper()
	if loc := res.header.Get("Location"); res.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Errorf("%s: got %d Location %q, want 303 to /login", what, res.status, loc)
	}
}

// syncBuffer collects what a test's logger or server writes while the test reads it.
type syncBuffer = syncbuf.Buffer

// zeroSource is a metrics source with no runs.
type zeroSource struct{}

func (zeroSource) CountByStatus(context.Context) (map[string]int, error) {
	return map[string]int{}, nil
}
func (zeroSource) WaitingAges(_ context.Context, _ int64, bounds []int64) ([]int64, int64, error) {
	return make([]int64, len(bounds)+1), 0, nil
}
func (zeroSource) CountLeased(context.Context) (int, error) { return 0, nil }
