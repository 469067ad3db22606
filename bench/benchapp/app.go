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
	"runsdesk/seal"
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
}

// App is the running application.
type App struct {
	*app.App
	// URL is the base URL, http://127.0.0.1:PORT.
	URL  string
	Pool *sql.DB
	// batches is the pool of the store's batched transitions.
	batches *sql.DB

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
	pool, err := db.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	batches, err := db.OpenBatches(ctx, dsn)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	a, err := app.New(ctx, app.Config{DB: pool, Batches: batches, Logger: o.Logger, Tools: benchenv.Tools(),
		Workers: max(o.Workers, 1), PollInterval: 50 * time.Millisecond,
		MaxInFlight: o.MaxInFlight, RequestTimeout: o.RequestTimeout, Keys: o.Keys, MaxWaiters: o.MaxWaiters, WakeInterval: o.WakeInterval})
	if err != nil {
		pool.Close()
		batches.Close()
		return nil, fmt.Errorf("benchapp: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = a.Close(ctx)
		pool.Close()
		batches.Close()
		return nil, fmt.Errorf("benchapp: listen: %w", err)
	}
	b := &App{App: a, URL: "http://" + ln.Addr().String(), Pool: pool, batches: batches, served: make(chan error, 1)}
	go func() { b.served <- a.Serve(ln) }()
	if o.Workers > 0 {
		a.StartWorkers()
	}
	return b, nil
}

// Close stops serving, stops the worker pool (waiting for running segments) and closes the
// pool.
func (b *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := b.App.Close(ctx)
	if serveErr := <-b.served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if b.batches != nil {
		err = errors.Join(err, b.batches.Close())
	}
	return errors.Join(err, b.Pool.Close())
}
