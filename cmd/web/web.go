package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"runsdesk/db"
	"runsdesk/handlers"
	"runsdesk/handlers/admission"
	"runsdesk/handlers/api"
	"runsdesk/handlers/metrics"
	"runsdesk/runtime/engine"
)

// Server limits of serve.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	sessionCleanup    = 5 * time.Minute
)

// webOptions are serve's settings of the web layer.
type webOptions struct {
	secure         bool         // --secure-cookies, resolved
	maxInFlight    int          // --max-in-flight (0: admission.Default)
	trustedProxies []*net.IPNet // --trusted-proxies, parsed
}

// newWebHandler wires the web UI and the JSON API on conn and rt; the pages and the API share
// one admission gate, and every process on the database shares the sign-in form's key. The
// returned stop function ends the expired-session cleanup.
func newWebHandler(ctx context.Context, conn *conn, rt *engine.Runtime, o webOptions, log *slog.Logger) (http.Handler, func(), error) {
	accounts, err := db.NewAccounts(conn.pool, nil, 0)
	if err != nil {
		return nil, nil, err
	}
	loginKey, err := db.Secret(ctx, conn.pool, "login_form")
	if err != nil {
		return nil, nil, err
	}
	audit := db.NewAudit(conn.pool, nil)
	store := db.New(conn.pool)
	desk := metrics.New(metrics.Config{Source: store, Logger: log.With("component", "metrics")})
	sessionStore := db.NewSessionStore(conn.pool, db.DefaultSessionExpirySlack)
	gate := admission.New(o.maxInFlight)
	e, err := handlers.New(handlers.Config{
		Runtime:   rt,
		Catalog:   store,
		Directory: accounts,
		Accounts:  accounts,
		Audit:     audit,
		Throttle:  db.NewLoginThrottle(conn.pool, db.DefaultLoginLimits()),
		API: api.New(api.Config{
			Runtime:   rt,
			Tokens:    db.NewServiceAccounts(conn.pool, nil),
			Audit:     audit,
			Decisions: desk,
			Logger:    log.With("component", "api"),
			Gate:      gate,
		}),
		Metrics: desk,
		Ready: metrics.Readyz(metrics.ReadyConfig{
			Ping:    conn.pool.PingContext,
			Pending: func(ctx context.Context) (int, error) { return db.Pending(ctx, conn.pool) },
			Logger:  log.With("component", "readyz"),
		}),
		Sessions:       handlers.NewSessionManager(sessionStore),
		Logger:         log.With("component", "http"),
		SecureCookies:  o.secure,
		LoginFormKey:   loginKey,
		TrustedProxies: o.trustedProxies,
		Gate:           gate,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("build the web handlers: %w", err)
	}
	janitor := startSessionJanitor(conn.pool, sessionCleanup, log.With("component", "sessions"))
	return e, janitor.stop, nil
}

// newHTTPServer returns the server for handler, with timeouts on every phase of a request.
func newHTTPServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.With("component", "http.server").Handler(), slog.LevelWarn),
	}
}
