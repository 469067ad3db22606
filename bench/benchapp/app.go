// Package benchapp runs the whole web application in-process for the benchmarks, built by
// app.New as `runsdesk serve` builds it (with the demo's in-process tools), and serves it on a
// loopback port; and it gives load clients that sign in with their own cookie jar.
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

	"runsdesk/app"
	"runsdesk/bench/benchenv"
	"runsdesk/cmd/web/gc"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/seal"
	"runsdesk/typo3/roles"
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
	// RequestTimeout is serve's --request-timeout (0: its default).
	RequestTimeout time.Duration
	// Keys seal the run state the application writes, as RUNSDESK_KEYS does (nil: in clear).
	Keys *seal.Keyring
	// MaxWaiters is serve's --max-waiters: the long-polls and event streams held at once (0:
	// its default).
	MaxWaiters int
	// WakeInterval is serve's --wake-interval: the period of the poll that wakes the
	// long-lived requests (0: its default).
	WakeInterval time.Duration
	// RoundTrips, when set, counts the round trips of the application's connections to the
	// database (both pools).
	RoundTrips *RoundTrips
	// TYPO3 serves a desk beside a TYPO3 site (benchenv.DeskOptions.TYPO3) as `serve --typo3`
	// does: both pools rename runsdesk's tables (db.BesideTYPO3), a third reads the site's,
	// and sign-in tries runsdesk's own accounts, then TYPO3's (no group mapped to a role).
	TYPO3 bool
}

// App is the running application.
type App struct {
	*app.App
	// URL is the base URL, http://127.0.0.1:PORT.
	URL  string
	Pool *sql.DB
	// batches is the pool of the store's batched transitions.
	batches *sql.DB
	// site reads a TYPO3 site's tables (Options.TYPO3; nil otherwise).
	site *sql.DB

	served chan error
}

// Start builds the application on o.DSN and serves it on 127.0.0.1 at a free port. Like serve,
// it applies the desk's garbage collector settings to this process (gc.Tune).
func Start(ctx context.Context, o Options) (*App, error) {
	gc.Tune(os.Getenv)
	dsn := o.DSN
	if o.RoundTrips != nil {
		var err error
		if dsn, err = o.RoundTrips.dsn(dsn); err != nil {
			return nil, err
		}
	}
	b := &App{served: make(chan error, 1)}
	if err := b.open(ctx, dsn, o.TYPO3); err != nil {
		return nil, err
	}
	var typo3 app.TYPO3Config
	if b.site != nil {
		typo3 = app.TYPO3Config{Site: b.site, Roles: roles.Mapping{}, AdminsAs: runtime.RoleAdmin}
	}
	a, err := app.New(ctx, app.Config{DB: b.Pool, Batches: b.batches, Logger: o.Logger, Tools: benchenv.Tools(),
		Workers: max(o.Workers, 1), PollInterval: 50 * time.Millisecond,
		MaxInFlight: o.MaxInFlight, RequestTimeout: o.RequestTimeout, Keys: o.Keys, MaxWaiters: o.MaxWaiters, WakeInterval: o.WakeInterval,
		TYPO3: typo3})
	if err != nil {
		_ = b.closePools()
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = a.Close(ctx)
		_ = b.closePools()
		return nil, fmt.Errorf("benchapp: listen: %w", err)
	}
	b.App, b.URL = a, "http://"+ln.Addr().String()
	go func() { b.served <- a.Serve(ln) }()
	if o.Workers > 0 {
		a.StartWorkers()
	}
	return b, nil
}

// open opens the application's pools on dsn, beside a TYPO3 site when typo3 is set; on an
// error none stays open.
func (b *App) open(ctx context.Context, dsn string, typo3 bool) error {
	var layout []db.OpenOption
	if typo3 {
		layout = []db.OpenOption{db.BesideTYPO3()}
	}
	var err error
	if b.Pool, err = db.Open(ctx, dsn, layout...); err != nil {
		return fmt.Errorf("benchapp: %w", err)
	}
	if b.batches, err = db.OpenBatches(ctx, dsn, layout...); err != nil {
		return errors.Join(fmt.Errorf("benchapp: %w", err), b.closePools())
	}
	if typo3 {
		if b.site, err = db.Open(ctx, dsn); err != nil {
			return errors.Join(fmt.Errorf("benchapp: site: %w", err), b.closePools())
		}
	}
	return nil
}

// closePools closes the pools open sets.
func (b *App) closePools() error {
	var err error
	for _, p := range []*sql.DB{b.batches, b.site, b.Pool} {
		if p != nil {
			err = errors.Join(err, p.Close())
		}
	}
	return err
}

// Close stops serving, stops the worker pool (waiting for running segments) and closes the
// pools.
func (b *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := b.App.Close(ctx)
	if serveErr := <-b.served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return errors.Join(err, b.closePools())
}
