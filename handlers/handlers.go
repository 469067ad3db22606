// Package handlers is runsdesk's web layer: the echo router, middleware (request id, access
// log, recover, security headers, body limit, cross-origin check, sessions, CSRF, sign-in and
// role gates), the error pages, and one handler per resource action. The JSON API (package
// api), the MCP server at /mcp (package mcpserver) and /metrics, /readyz (package metrics) are
// mounted by routes.go.
//
// How to add a page (see routes.go for the route table and the groups):
//   - write the handler as a method on *Handlers in its own file (runs_list.go, run_approve.go):
//     parse, authorize, load, validate, mutate, then redirect (303) or render;
//   - register it in routes.go in the group whose access it needs (signedIn, deciders, admins),
//     add a row to the table at the top of routes.go and to routeMatrix in routes_test.go;
//   - h.actor(c) is who asks (re-loaded from be_users on every request; the zero Actor when
//     anonymous); pass it to every Runtime call;
//   - h.page(c, title, nav) builds views.Page (user, role, CSRF token, flashes, assets);
//     h.render(c, status, views.SomePage(p, …)) renders it buffered;
//   - forms carry <input type="hidden" name="_csrf" value={ p.CSRF }/>; verifyCSRF checks it
//     (or header X-CSRF-Token) on every POST of a session group before the handler runs;
//   - after a POST: h.flash(c, flashSomething) and c.Redirect(http.StatusSeeOther, …); a flash
//     is a code of flashCatalogue (flash.go: add the message there), carried in a short-lived
//     cookie, not the session; an invalid form re-renders with 422;
//   - a refused runtime operation is answered by h.refused from the refusal table (package
//     refusal: each runtime code's status, flash per form and API message; add rows there);
//   - h.audit(c, action, outcome, reason) / h.auditRun(c, action, runUUID, outcome, reason)
//     append to the audit trail (never submitted values);
//   - return errors instead of writing them: publicError(status, code, text) shows text; a
//     *runtime.Error gets its code's status in the refusal table and a generic text; anything
//     else is a generic 500. 5xx never show error text. Always return after an error.
package handlers

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"runsdesk/cache"
	"runsdesk/handlers/admission"
	"runsdesk/handlers/api"
	"runsdesk/handlers/mcpserver"
	"runsdesk/handlers/metrics"
	"runsdesk/handlers/waiters"
	"runsdesk/static"
)

// Session limits: ASVS V7.3 asks for an idle timeout of at most 30 minutes and an absolute
// lifetime of at most 12 hours.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultLifetime    = 12 * time.Hour
	DefaultBodyLimit   = 1 << 20
)

// Config wires the web layer. Runtime, Catalog, Accounts, Admin, Audit, Throttle, Sessions,
// SessionIndex and Drafts are required; the rest have defaults or are left out when nil.
type Config struct {
	Runtime  Runtime
	Catalog  Catalog
	Accounts Accounts
	// Admin administers people and service accounts at /admin/people and /admin/tokens.
	Admin Admin
	// Directory names owners and deciders on the run pages; when nil they are shown by uid.
	Directory Directory
	Audit     Auditor
	Throttle  LoginThrottle
	// Drafts keeps the input forms people saved as drafts.
	Drafts Drafts
	// Notifications, when set, lists a run's notifications on its page.
	Notifications Notifications
	// Presence, when set, shows on a waiting run's page who else has it open.
	Presence Presence
	// Queue, when set, serves the queue's health at /queue (404 without it).
	Queue QueueHealth
	// Applied, when set, serves what `apply -f` applied at /admin/configuration and its
	// download as an apply file (404 without it).
	Applied Applied
	// TYPO3Runs, when set, lists the runs of the TYPO3 extension nr-llm, read only, at
	// /typo3/runs and /typo3/runs/:uuid for every signed-in person, and adds "TYPO3 runs" to
	// the navigation: typo3/extruns.New on the TYPO3 site's database, whose tx_nrllm_agentrun
	// holds them. Without it those routes do not exist (404).
	TYPO3Runs TYPO3Runs
	// TYPO3BackendURL is the TYPO3 backend's address ("https://cms.example.com/typo3/"),
	// where the extension's runs are decided: the banner of their pages links to it. Empty:
	// the banner names TYPO3 without a link. Anything else than an absolute http(s) URL is
	// refused by New.
	TYPO3BackendURL string
	// API, when set, is mounted under /api/v1 (package api: bearer tokens, scopes, JSON errors).
	API *api.API
	// MCP, when set, is mounted at /mcp (package mcpserver: the API's tokens, scope request).
	MCP *mcpserver.Server
	// Metrics, when set, times every request and serves /metrics to loopback peers only.
	Metrics *metrics.Metrics
	// Ready, when set, serves /readyz (metrics.Readyz).
	Ready echo.HandlerFunc
	// Sessions is the scs manager (use NewSessionManager). New sets its cookie policy (name,
	// Secure, HttpOnly, SameSite=Lax, Path=/, no Domain, not persistent), stores only token
	// hashes and installs a fail-closed ErrorFunc; its IdleTimeout must be in (0, 30m] and its
	// Lifetime in (0, 12h].
	Sessions *scs.SessionManager
	// SessionIndex lists each person's signed-in sessions (/account/sessions); a session
	// whose row is ended or gone is signed out at its next request.
	SessionIndex SessionIndex
	Logger       *slog.Logger
	// NoAccessLog drops the one Logger line per request; errors are still rendered.
	NoAccessLog bool
	// SecureCookies marks the session cookie Secure with the __Host- prefix and sends HSTS.
	// Turn it off only for plain-HTTP loopback development and tests.
	SecureCookies bool
	Now           func() time.Time
	// BodyLimit caps request bodies in bytes (default 1 MiB); larger requests get 413.
	BodyLimit int64
	// TrustedProxies are the peers (load balancers, reverse proxies) whose X-Forwarded-For
	// names the client of every log line, audit row, throttle and rate limit: its rightmost
	// address that is not a trusted proxy. Empty: the client is the connection's peer.
	TrustedProxies []*net.IPNet
	// LoginFormKey is the key of the sign-in form's CSRF tokens (at least 32 bytes, the same in
	// every process behind one address: db.Secret). When empty, a random key is made, which is
	// right only for a single process.
	LoginFormKey []byte
	// TrustedOrigins are extra origins ("https://desk.example.com") allowed to POST besides
	// the request's own host.
	TrustedOrigins []string
	// Gate, when set, bounds the requests of the session routes that build their responses at
	// once (admission.Gate; share one with the API's). A request whose deadline passes while
	// it waits for a slot answers 503. /healthz, /readyz, /metrics and /static are never
	// gated.
	Gate *admission.Gate
	// SignOn, when its Provider is set, adds single sign-on (login_oidc.go).
	SignOn SignOn
	// MFA, when its Factors is set, adds two-factor sign-in (login_mfa.go) and
	// /account/security (account_security.go). Roles in MFA.Require need a Factors that seals.
	MFA MFA
	// RequestTimeout is the deadline of each request's work (0: none); a request the
	// database holds up past it answers 503.
	RequestTimeout time.Duration
	// Waiters holds the long-lived requests (share it with the API's): they skip the gate and
	// RequestTimeout (package waiters).
	Waiters *waiters.Hall
}

// Handlers holds the dependencies every handler method uses. Build it with New.
type Handlers struct {
	rt       Runtime
	catalog  Catalog
	accounts Accounts
	admin    Admin
	people   Directory
	auditor  Auditor
	drafts   Drafts
	notices  Notifications
	presence Presence
	queue    QueueHealth
	applied  Applied
	typo3    TYPO3Runs
	backend  string
	api      *api.API
	mcp      *mcpserver.Server
	metrics  *metrics.Metrics
	ready    echo.HandlerFunc
	throttle LoginThrottle
	sessions *scs.SessionManager
	index    SessionIndex
	log      *slog.Logger
	quiet    bool
	secure   bool
	now      func() time.Time
	assets   *static.Assets
	origins  *http.CrossOriginProtection
	gate     *admission.Gate
	waiters  *waiters.Hall
	timeout  time.Duration
	loginKey []byte
	signOn   SignOn
	mfa      MFA
	// assignees remembers the uids the inbox's assignee filter resolved usernames to.
	assignees *cache.Cache[string, int64]
}

// New validates cfg, applies the session cookie policy to cfg.Sessions and returns the echo
// router with every route of routes.go registered and the error handler installed; the
// caller's http.Server sets the timeouts (package app). It is an error if a required dependency is missing or the
// session timeouts exceed ASVS limits.
func New(cfg Config) (*echo.Echo, error) {
	h, err := newHandlers(cfg)
	if err != nil {
		return nil, err
	}
	return h.router(cfg), nil
}

func (h *Handlers) router(cfg Config) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort, e.Debug = true, true, false
	e.HTTPErrorHandler = h.handleError
	e.IPExtractor = clientIP(cfg.TrustedProxies)
	limit := cfg.BodyLimit
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	e.Use(h.requestID, retryWhenUnavailable, h.waiters.Unless(requestDeadline(h.timeout)))
	if h.metrics != nil {
		e.Use(h.metrics.Middleware(func(err error) int { s, _, _ := classify(err); return s }))
	}
	e.Use(h.accessLog, h.securityHeaders, h.recoverPanic, refuseTrace, bodyLimit(limit), h.crossOrigin)
	h.routes(e)
	return e
}

func newHandlers(cfg Config) (*Handlers, error) {
	switch {
	case cfg.Runtime == nil, cfg.Catalog == nil, cfg.Accounts == nil, cfg.Admin == nil, cfg.Audit == nil, cfg.Throttle == nil,
		cfg.Sessions == nil, cfg.SessionIndex == nil, cfg.Drafts == nil:
		return nil, errors.New("handlers: Runtime, Catalog, Accounts, Admin, Audit, Throttle, Sessions, SessionIndex and Drafts are required")
	}
	assets, err := static.New()
	if err != nil {
		return nil, fmt.Errorf("handlers: %w", err)
	}
	origins := http.NewCrossOriginProtection()
	for _, o := range cfg.TrustedOrigins {
		if err := origins.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("handlers: trusted origin: %w", err)
		}
	}
	h := &Handlers{
		rt: cfg.Runtime, catalog: cfg.Catalog, accounts: cfg.Accounts, admin: cfg.Admin, people: cfg.Directory, auditor: cfg.Audit, drafts: cfg.Drafts,
		notices: cfg.Notifications, presence: cfg.Presence, queue: cfg.Queue, applied: cfg.Applied, typo3: cfg.TYPO3Runs, backend: cfg.TYPO3BackendURL,
		api: cfg.API, mcp: cfg.MCP, metrics: cfg.Metrics, ready: cfg.Ready, throttle: cfg.Throttle, sessions: cfg.Sessions, index: cfg.SessionIndex,
		log: cfg.Logger, quiet: cfg.NoAccessLog, secure: cfg.SecureCookies, now: cfg.Now, assets: assets, origins: origins,
		gate: cfg.Gate, waiters: cfg.Waiters, timeout: cfg.RequestTimeout, loginKey: cfg.LoginFormKey, signOn: cfg.SignOn,
		mfa: cfg.MFA,
	}
	switch {
	case len(h.loginKey) == 0:
		h.loginKey = make([]byte, 32)
		_, _ = rand.Read(h.loginKey)
	case len(h.loginKey) < 32:
		return nil, errors.New("handlers: LoginFormKey must be at least 32 bytes")
	}
	if err := checkBackendURL(h.backend); err != nil {
		return nil, err
	}
	if h.signOn.Provider != nil && h.signOn.Identities == nil {
		return nil, errors.New("handlers: SignOn.Identities is required with a provider")
	}
	if len(h.mfa.Require) > 0 && (h.mfa.Factors == nil || !h.mfa.Factors.Sealing()) {
		return nil, errors.New("handlers: MFA.Require needs MFA.Factors with sealing keys")
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.assignees = cache.New[string, int64](cache.Options{Max: assigneesRemembered, TTL: assigneeFresh, Now: h.now})
	if err := h.applySessionPolicy(); err != nil {
		return nil, err
	}
	return h, nil
}
