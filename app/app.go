// Package app wires runsdesk once: from a Config on an open database it builds the store, the
// runtime, the session manager, the web handlers, the JSON API, the metrics, the admission
// gate and the HTTP server that serves them. `runsdesk serve`, `runsdesk worker`, the
// benchmarks and the reliability suite all build the application here, so they run the same
// middleware chain.
package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"

	"runsdesk/db"
	"runsdesk/handlers"
	"runsdesk/handlers/admission"
	"runsdesk/handlers/api"
	"runsdesk/handlers/mcpserver"
	"runsdesk/handlers/metrics"
	"runsdesk/handlers/waiters"
	"runsdesk/notify"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/runtime/applied"
	"runsdesk/runtime/auditchain"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/retention"
	"runsdesk/runtime/tool"
	"runsdesk/seal"
	"runsdesk/sso/ssodb"
	typo3accounts "runsdesk/typo3/accounts"
	"runsdesk/typo3/backend"
	"runsdesk/typo3/extruns"
	"runsdesk/typo3/roles"
)

// Limits of the HTTP server: every phase of a request is bounded.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 64 << 10
)

// DefaultRequestTimeout is the deadline of one request's work when Config.RequestTimeout is
// zero (serve's --request-timeout default).
const DefaultRequestTimeout = 10 * time.Second

// sessionCleanup is how often expired sessions are deleted.
const sessionCleanup = 5 * time.Minute

// Config says how to build the application. DB is required; every other field has a default.
type Config struct {
	// DB is the open, migrated database (db.Open). The caller closes it after Close.
	DB *sql.DB
	// Batches is the pool the store sends the submit path's transitions on as one batch each
	// (db.OpenBatches; nil: statement by statement). The caller closes it after Close.
	Batches *sql.DB
	// Keys seal suspended_state and queued_request at rest (nil: stored in clear).
	Keys *seal.Keyring
	// Logger receives every component's logs, tagged with "component" (default: discarded).
	Logger *slog.Logger
	// NoAccessLog drops the web UI's and API's one log line per request.
	NoAccessLog bool
	// Getenv is the environment the runtime's tools read (default os.Getenv).
	Getenv func(string) string
	// Now is the clock of the runtime, the handlers, the API and the stores (default time.Now).
	Now func() time.Time
	// Tools are the in-process tools registered beside the data-defined ones (the demo's
	// with --demo).
	Tools []tool.Tool
	// Hooks are the runtime's fault points (nil in production builds).
	Hooks engine.Hooks
	// Workers bounds the segments executing at once (default engine.DefaultWorkers); the
	// pool polls for queued runs only after StartWorkers.
	Workers int
	// Lease, ReapInterval and PollInterval are the runtime's scheduling (its defaults apply
	// when zero).
	Lease        time.Duration
	ReapInterval time.Duration
	PollInterval time.Duration
	// ExpireInterval is how often the expirer looks for due pauses (engine's default when 0).
	ExpireInterval time.Duration
	// ElicitationHolds bounds the calls the runtime holds open while a person answers their
	// server's request for input (engine.Config.ElicitationHolds: 0 its default, negative none).
	ElicitationHolds int
	// RetentionInterval is how often the retention sweeper StartWorkers runs makes a pass
	// (retention.DefaultInterval when 0).
	RetentionInterval time.Duration
	// Chain configures the audit chainer StartWorkers runs (its Store, Now and Logger are
	// filled in); its checkpoint signer is read from Getenv (auditchain.SignerFromEnv).
	Chain auditchain.Config
	// SecureCookies marks the session cookie Secure (__Host-) and sends HSTS.
	SecureCookies bool
	// TrustedProxies are the peers whose X-Forwarded-For names the client.
	TrustedProxies []*net.IPNet
	// MaxInFlight is the admission gate's slots, shared by the pages and the API: 0 is
	// admission.Default; a negative value builds no gate (benchmarks measure its cost).
	MaxInFlight int
	// RequestTimeout is the deadline of each request's work (default DefaultRequestTimeout);
	// long-lived requests (package waiters) are not under it.
	RequestTimeout time.Duration
	// MaxWaiters bounds the long-lived requests (long-polls, event streams) held at once (0:
	// waiters.DefaultMax), and
	// WakeInterval is the period of the database poll that wakes them (0:
	// waiters.DefaultInterval): it bounds the delay of other processes' changes, as the
	// runtime's own transitions make the poll run at once.
	MaxWaiters   int
	WakeInterval time.Duration
	// WrapCatalog, when set, wraps the catalog the runtime and the handlers share, and
	// WrapAccounts the accounts sign-in and session checks use: tests inject store failures.
	WrapCatalog  func(runtime.Catalog) runtime.Catalog
	WrapAccounts func(handlers.Accounts) handlers.Accounts
	// Notify configures the notification dispatcher StartWorkers runs.
	Notify NotifyConfig
	// TYPO3, when its Site is set, runs the desk beside a TYPO3 site (--typo3): the site's
	// backend accounts sign in (package typo3/accounts).
	TYPO3 TYPO3Config
	// SignOn, when its Provider is set, signs people in with it; New fills in its Identities.
	SignOn handlers.SignOn
	// SessionIdle and SessionMax shorten the sessions' idle timeout and absolute lifetime
	// (0: handlers.DefaultIdleTimeout and handlers.DefaultLifetime, which are also their
	// maximums: New refuses longer ones).
	SessionIdle time.Duration
	SessionMax  time.Duration
	// MFA configures two-factor sign-in; secrets are sealed with Keys (without them enrolment
	// is refused, and RequireMFA is an error).
	MFA MFAConfig
}

// TYPO3Config is the TYPO3 site the desk runs beside (--typo3 and its flags).
type TYPO3Config struct {
	// Site is a pool on the site's database that renames no table (db.Open without
	// BesideTYPO3), for reading be_users, be_groups and the extension's runs; nil: not beside
	// TYPO3.
	Site *sql.DB
	// Roles maps TYPO3 backend groups to runsdesk roles (--typo3-roles).
	Roles roles.Mapping
	// AdminsAs is the role TYPO3 admins have at least (--typo3-admins-as).
	AdminsAs runtime.Role
	// BackendURL is the site's backend address, linked from the extension's runs ("": none).
	BackendURL string
}

// MFAConfig is two-factor sign-in's configuration (--require-mfa, --mfa-always).
type MFAConfig struct {
	// Require lists the roles that must enrol a second factor.
	Require []runtime.Role
	// Always asks for the code after single sign-on even when the provider did MFA.
	Always bool
}

// App is the wired application. Build it with New; serve it with Serve; stop it with Close.
type App struct {
	// Handler serves the web UI, the JSON API, /metrics, /readyz and /healthz, each request
	// but the long-lived ones under Config.RequestTimeout.
	Handler http.Handler
	Runtime *engine.Runtime
	Store   *db.Store
	// Gate is the admission gate of the pages and the API (nil when MaxInFlight < 0).
	Gate *admission.Gate
	// Waiters holds the long-lived requests of the pages and the API.
	Waiters *waiters.Hall

	srv        *http.Server
	janitor    *sessionJanitor
	workers    *Workers
	dispatcher *notify.Dispatcher
	sweeper    *retention.Sweeper
	chainer    *auditchain.Chainer
}

// New builds the application on cfg.DB and starts its expired-session cleanup; the worker
// pool waits for StartWorkers. On error nothing is left running.
func New(ctx context.Context, cfg Config) (*App, error) {
	if cfg.DB == nil {
		return nil, errors.New("app: Config.DB is required")
	}
	log := logger(cfg)
	store, catalog := stores(cfg)
	chainer, err := newChainer(cfg, store)
	if err != nil {
		return nil, err
	}
	desk := metrics.New(metrics.Config{Source: store, Outbox: store, Rules: store, Queue: store, Logger: log.With("component", "metrics"), Now: cfg.Now})
	hall := waiters.New(waiters.Config{Source: store, Desk: store, Max: cfg.MaxWaiters, Interval: cfg.WakeInterval,
		Logger: log.With("component", "waiters")})
	rt := newRuntime(cfg, store, catalog, desk, hall.Nudge)
	dispatcher, err := newDispatcher(cfg, store, rt, desk)
	if err != nil {
		hall.Close()
		rt.Close()
		return nil, err
	}
	handler, gate, err := newHandler(ctx, cfg, store, catalog, rt, desk, hall)
	if err != nil {
		hall.Close()
		rt.Close()
		return nil, err
	}
	a := &App{Handler: withSessionAccount(handler), Runtime: rt, Store: store, Gate: gate, Waiters: hall,
		dispatcher: dispatcher, sweeper: newSweeper(cfg, store), chainer: chainer}
	a.srv = &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.With("component", "http.server").Handler(), slog.LevelWarn),
	}
	a.janitor = startSessionJanitor(cfg.DB, sessionCleanup, log.With("component", "sessions"))
	return a, nil
}

// NewRuntime builds the runtime alone, for commands that serve no HTTP (worker, reap,
// cancel). Nothing runs until StartWorkers; the caller closes it.
func NewRuntime(cfg Config) *engine.Runtime {
	store, catalog := stores(cfg)
	return newRuntime(cfg, store, catalog, nil, nil)
}

// Serve serves the application on ln until Close; it then returns http.ErrServerClosed.
func (a *App) Serve(ln net.Listener) error { return a.srv.Serve(ln) }

// StartWorkers starts the runtime's worker pool and reaper, the notification dispatcher, the
// retention sweeper and the audit chainer; Close stops them.
func (a *App) StartWorkers() {
	a.workers = StartWorkers(a.Runtime, a.dispatcher, a.sweeper, a.chainer)
}

// NewSweeper builds the retention sweeper of a process that serves no HTTP (worker), on a
// store of cfg.DB; StartWorkers runs it.
func NewSweeper(cfg Config) *retention.Sweeper {
	store, _ := stores(cfg)
	return newSweeper(cfg, store)
}

func newSweeper(cfg Config, store *db.Store) *retention.Sweeper {
	return retention.New(store, cfg.RetentionInterval, cfg.Now, logger(cfg).With("component", "retention"))
}

// NewChainer builds the audit chainer of a process that serves no HTTP (worker), on a store
// of cfg.DB; StartWorkers runs it. It fails when the audit signing key does not parse.
func NewChainer(cfg Config) (*auditchain.Chainer, error) {
	store, _ := stores(cfg)
	return newChainer(cfg, store)
}

func newChainer(cfg Config, store *db.Store) (*auditchain.Chainer, error) {
	c := cfg.Chain
	c.Store, c.Now, c.Logger = store, cfg.Now, logger(cfg).With("component", "auditchain")
	if cfg.Getenv != nil {
		signer, err := auditchain.SignerFromEnv(cfg.Getenv)
		if err != nil {
			return nil, fmt.Errorf("app: %w", err)
		}
		c.Signer = signer
	}
	return auditchain.New(c), nil
}

// Close stops the application in order: the long-lived requests are ended (a long-poll
// answers the run as it is), the HTTP server stops accepting requests and lets those in
// flight finish until ctx ends (then cuts them off and returns the error), the workers stop
// (their runs go back to the queue), and the session cleanup ends.
func (a *App) Close(ctx context.Context) error {
	a.Waiters.Close()
	err := a.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, a.srv.Close())
	}
	if a.workers != nil {
		a.workers.Stop()
	} else {
		a.Runtime.Close()
	}
	a.janitor.stop()
	return err
}

// requestTimeout is cfg.RequestTimeout, or DefaultRequestTimeout when unset.
func requestTimeout(cfg Config) time.Duration {
	if cfg.RequestTimeout <= 0 {
		return DefaultRequestTimeout
	}
	return cfg.RequestTimeout
}

func logger(cfg Config) *slog.Logger {
	if cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return cfg.Logger
}

// stores returns the store on cfg.DB and the catalog the runtime and the handlers share.
func stores(cfg Config) (*db.Store, runtime.Catalog) {
	store := db.New(cfg.DB, db.WithKeys(cfg.Keys), db.WithBatches(cfg.Batches))
	var catalog runtime.Catalog = store
	if cfg.WrapCatalog != nil {
		catalog = cfg.WrapCatalog(catalog)
	}
	return store, catalog
}

// newRuntime builds the runtime; observer counts its deadline steps and times its decisions
// (nil: a process that serves no metrics), and changed is told of each transition it commits
// (the hall's Nudge, so this process's held requests learn of it at once; nil: a process that
// holds none).
func newRuntime(cfg Config, store *db.Store, catalog runtime.Catalog, observer engine.Observer, changed func()) *engine.Runtime {
	return engine.New(engine.Config{
		ExpireInterval: cfg.ExpireInterval,
		Observer:       observer,
		Store:          store,
		Catalog:        catalog,
		Tools:          cfg.Tools,
		Getenv:         cfg.Getenv,
		Now:            cfg.Now,
		Logger:         logger(cfg).With("component", "runtime"),
		Workers:        cfg.Workers,
		Lease:          cfg.Lease,
		ReapInterval:   cfg.ReapInterval,
		PollInterval:   cfg.PollInterval,
		Hooks:          cfg.Hooks,
		Rules:          store,
		Changed:        changed,

		ElicitationHolds: cfg.ElicitationHolds,
	})
}

// newHandler builds the web UI with the JSON API and the MCP server mounted; the pages and
// the API share one admission gate, the MCP server authenticates as the API does, and every
// process on the database shares the sign-in form's key.
func newHandler(ctx context.Context, cfg Config, store *db.Store, catalog runtime.Catalog, rt *engine.Runtime,
	desk *metrics.Metrics, hall *waiters.Hall) (http.Handler, *admission.Gate, error) {
	log := logger(cfg)
	pool := cfg.DB
	accounts, err := db.NewAccounts(pool, cfg.Now, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("app: %w", err)
	}
	var signIn handlers.Accounts = accounts
	if cfg.TYPO3.Site != nil {
		site := backend.New(cfg.TYPO3.Site, cfg.TYPO3.Roles, cfg.TYPO3.AdminsAs)
		signIn = typo3accounts.New(accounts, db.NewIdentities(pool, cfg.Now), site, cfg.Now, log.With("component", "typo3"))
	}
	if cfg.WrapAccounts != nil {
		signIn = cfg.WrapAccounts(signIn)
	}
	loginKey, err := db.Secret(ctx, pool, "login_form")
	if err != nil {
		return nil, nil, fmt.Errorf("app: %w", err)
	}
	var gate *admission.Gate
	if cfg.MaxInFlight >= 0 {
		gate = admission.New(cfg.MaxInFlight)
	}
	audit := db.NewAudit(pool, cfg.Now)
	signOn := cfg.SignOn
	if signOn.Provider != nil {
		signOn.Identities = ssodb.NewStore(db.NewIdentities(pool, cfg.Now))
	}
	twoFactor := handlers.MFA{Factors: db.NewFactors(pool, cfg.Keys, cfg.Now), Require: cfg.MFA.Require, Always: cfg.MFA.Always}
	mailer, err := newMailer(cfg.Notify)
	if err != nil {
		return nil, nil, err
	}
	if mailer != nil {
		twoFactor.Alerts = notify.NewSecurityMail(mailer, cfg.Notify.PublicURL, cfg.Now)
	}
	people, err := db.NewAdmin(pool, cfg.Keys, cfg.Now)
	if err != nil {
		return nil, nil, fmt.Errorf("app: %w", err)
	}
	jsonAPI := api.New(api.Config{
		Runtime: rt,
		Tokens:  db.NewServiceAccounts(pool, cfg.Now),
		Audit:   audit,
		Logger:  log.With("component", "api"),
		Now:     cfg.Now,
		Gate:    gate,
		Waiters: hall,
		Queue:   store,
	})
	e, err := handlers.New(handlers.Config{
		Runtime:       rt,
		Catalog:       catalog,
		Directory:     accounts,
		Accounts:      signIn,
		Admin:         admin.New(people, cfg.Now),
		Audit:         audit,
		Throttle:      db.NewLoginThrottle(pool, db.DefaultLoginLimits()),
		Drafts:        store,
		Presence:      store,
		Queue:         store,
		Notifications: store,
		Applied:       applied.New(applied.Config{Store: store, Getenv: cfg.Getenv}),
		API:           jsonAPI,
		MCP:           mcpserver.New(mcpserver.Config{Runtime: rt, Guard: jsonAPI, Waiters: hall, Logger: log.With("component", "mcp")}),
		Metrics:       desk,
		Ready: metrics.Readyz(metrics.ReadyConfig{
			Ping:    pool.PingContext,
			Pending: func(ctx context.Context) (int, error) { return db.Pending(ctx, pool) },
			Logger:  log.With("component", "readyz"),
		}),
		Sessions:        sessionManager(cfg),
		SessionIndex:    db.NewSessionIndex(pool),
		Logger:          log.With("component", "http"),
		NoAccessLog:     cfg.NoAccessLog,
		SecureCookies:   cfg.SecureCookies,
		Now:             cfg.Now,
		LoginFormKey:    loginKey,
		TrustedProxies:  cfg.TrustedProxies,
		Gate:            gate,
		SignOn:          signOn,
		MFA:             twoFactor,
		TYPO3Runs:       typo3Runs(cfg.TYPO3),
		TYPO3BackendURL: cfg.TYPO3.BackendURL,
		Waiters:         hall,
		RequestTimeout:  requestTimeout(cfg),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("app: build the web handlers: %w", err)
	}
	return e, gate, nil
}

// typo3Runs reads the TYPO3 extension's runs beside a TYPO3 site; nil (no such pages) when
// not beside one.
func typo3Runs(cfg TYPO3Config) handlers.TYPO3Runs {
	if cfg.Site == nil {
		return nil
	}
	return extruns.New(cfg.Site)
}

// sessionManager is the session manager of cfg's idle timeout and lifetime; the store lets an
// unchanged session's expiry lag by at most a thirtieth of the idle timeout (a minute at 30m).
func sessionManager(cfg Config) *scs.SessionManager {
	idle, lifetime := handlers.DefaultIdleTimeout, handlers.DefaultLifetime
	if cfg.SessionIdle > 0 {
		idle = cfg.SessionIdle
	}
	if cfg.SessionMax > 0 {
		lifetime = cfg.SessionMax
	}
	sm := handlers.NewSessionManager(db.NewSessionStore(cfg.DB, min(db.DefaultSessionExpirySlack, idle/30)))
	sm.IdleTimeout, sm.Lifetime = idle, lifetime
	return sm
}
