package main

import (
	"context"
	"fmt"

	"runsdesk/app"
	"runsdesk/cmd/web/gc"
)

// runWorker runs the worker pool and reaper without HTTP until SIGINT or SIGTERM.
func runWorker(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("worker", "[flags]")
	var dbc database
	var workers int
	var noMigrate, demoTools bool
	var lease leasing
	var notif notifying
	f.bind.database(&dbc)
	f.bind.Int(&workers, "workers")
	f.bind.Bool(&noMigrate, "no-migrate")
	f.bind.Bool(&demoTools, "demo")
	f.bind.leasing(&lease)
	f.bind.notifying(&notif)
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case workers < 1:
		return f.fail("--workers must be at least 1, got %d", workers)
	case lease.check() != nil:
		return f.fail("%v", lease.check())
	case notif.check() != nil:
		return f.fail("%v", notif.check())
	}
	gc.Tune(c.getenv)
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("worker", "%v", err)
	}
	defer conn.close(log)
	if err := prepareSchema(ctx, conn, noMigrate); err != nil {
		return c.failf("worker", "%v", err)
	}
	cfg := appConfig(c, conn, log, demoTools, workers, lease)
	cfg.Notify = notif.config(lease.PollInterval)
	rt := app.NewRuntime(cfg)
	dispatcher, err := app.NewDispatcher(cfg, rt)
	if err != nil {
		rt.Close()
		return c.failf("worker", "%v", err)
	}
	chainer, err := app.NewChainer(cfg)
	if err != nil {
		rt.Close()
		return c.failf("worker", "%v", err)
	}
	w := app.StartWorkers(rt, dispatcher, app.NewSweeper(cfg), chainer)
	log.Info("worker started", "workers", workers)
	fmt.Fprintf(c.stdout, "runsdesk worker: %d worker(s) running; stop with Ctrl-C.\n", workers)
	<-ctx.Done()
	log.Info("worker stopping")
	w.Stop()
	return exitOK
}

// prepareSchema applies pending migrations, or with noMigrate only checks that none is
// pending.
func prepareSchema(ctx context.Context, conn *conn, noMigrate bool) error {
	if noMigrate {
		return conn.migrated(ctx)
	}
	if err := conn.migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
