// Package benchapp runs the whole web application in-process for the benchmarks, wired as
// `runsdesk serve` wires it (handlers.New with MySQL sessions, accounts, audit, throttle, API,
// metrics, readyz; a runtime with the demo's in-process tools), and serves it on a loopback
// port; and it gives load clients that sign in with their own cookie jar.
package benchapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"runsdesk/bench/benchenv"
	"runsdesk/cmd/web/gc"
	"runsdesk/db"
	"runsdesk/handlers"
	"runsdesk/handlers/admission"
	"runsdesk/handlers/api"
	"runsdesk/handlers/metrics"
	"runsdesk/runtime/engine"
)

// Options configures Start.
type Options struct {
	// DSN of the desk's database.
	DSN string
	// Workers, when positive, starts the runtime's worker pool with that many slots.
	Workers int
	// Logger receives the application's logs (default: discarded).
	Logger *slog.Logger
	// MaxInFlight is serve's --max-in-flight: 0 is its default (admission.Default), a
	// negative value serves without an admission gate.
	MaxInFlight int
}

// App is the running application.
type App struct {
	// URL is the base URL, http://127.0.0.1:PORT.
	URL     string
	Runtime *engine.Runtime
	Pool    *sql.DB
	Store   *db.Store

	srv      *http.Server
	served   chan error
	stopPool context.CancelFunc
	poolDone chan struct{}
}

// Start builds the application on o.DSN and serves it on 127.0.0.1 at a free port. Like serve,
// it applies the desk's garbage collector settings to this process (gc.Tune).
func Start(ctx context.Context, o Options) (*App, error) {
	gc.Tune(os.Getenv)
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pool, err := db.Open(ctx, o.DSN)
	if err != nil {
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	store := db.New(pool)
	workers := max(o.Workers, 1)
	rt := engine.New(engine.Config{Store: store, Catalog: store, Tools: benchenv.Tools(),
		Logger: log, Workers: workers, PollInterval: 50 * time.Millisecond})
	a := &App{Runtime: rt, Pool: pool, Store: store, served: make(chan error, 1)}
	var gate *admission.Gate
	if o.MaxInFlight >= 0 {
		gate = admission.New(o.MaxInFlight)
	}
	handler, err := newHandler(pool, store, rt, gate, log)
	if err != nil {
		rt.Close()
		pool.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		rt.Close()
		pool.Close()
		return nil, fmt.Errorf("benchapp: listen: %w", err)
	}
	a.URL = "http://" + ln.Addr().String()
	a.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { a.served <- a.srv.Serve(ln) }()
	if o.Workers > 0 {
		var poolCtx context.Context
		poolCtx, a.stopPool = context.WithCancel(context.Background())
		a.poolDone = make(chan struct{})
		go func() {
			defer close(a.poolDone)
			_ = rt.Run(poolCtx)
		}()
	}
	return a, nil
}

func newHandler(pool *sql.DB, store *db.Store, rt *engine.Runtime, gate *admission.Gate, log *slog.Logger) (http.Handler, error) {
	accounts, err := db.NewAccounts(pool, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	audit := db.NewAudit(pool, nil)
	desk := metrics.New(metrics.Config{Source: store, Logger: log})
	e, err := handlers.New(handlers.Config{
		Runtime: rt, Catalog: store, Directory: accounts, Accounts: accounts, Audit: audit,
		Throttle: db.NewLoginThrottle(pool, db.DefaultLoginLimits()),
		API: api.New(api.Config{Runtime: rt, Tokens: db.NewServiceAccounts(pool, nil), Audit: audit,
			Decisions: desk, Logger: log}),
		Metrics: desk,
		Ready: metrics.Readyz(metrics.ReadyConfig{Ping: pool.PingContext,
			Pending: func(ctx context.Context) (int, error) { return db.Pending(ctx, pool) }, Logger: log}),
		Sessions: handlers.NewSessionManager(db.NewSessionStore(pool, db.DefaultSessionExpirySlack)),
		Logger:   log,
		Gate:     gate,
	})
	if err != nil {
		return nil, fmt.Errorf("benchapp: build the web handlers: %w", err)
	}
	return e, nil
}

// Close stops serving, stops the worker pool (waiting for running segments) and closes the
// pool.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := a.srv.Shutdown(ctx)
	if serveErr := <-a.served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if a.stopPool != nil {
		a.stopPool()
		<-a.poolDone
	} else {
		a.Runtime.Close()
	}
	return errors.Join(err, a.Pool.Close())
}
