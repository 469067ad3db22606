package main

import (
	"context"
	"fmt"

	"runsdesk/app"
)

// runReap runs one reaper pass and prints its report.
func runReap(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("reap", "[--limit N] [flags]")
	var dbc database
	var limit int
	var demoTools bool
	f.bind.database(&dbc)
	f.bind.Int(&limit, "limit")
	f.bind.Bool(&demoTools, "demo")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case limit < 1:
		return f.fail("--limit must be at least 1, got %d", limit)
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("reap", "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf("reap", "%v", err)
	}
	rt := app.NewRuntime(appConfig(c, conn, log, demoTools, 0, leasing{}))
	defer rt.Close()
	rep, err := rt.Reap(ctx, limit)
	if err != nil {
		return c.failf("reap", "%v", err)
	}
	fmt.Fprintln(c.stdout, rep.String())
	return exitOK
}
