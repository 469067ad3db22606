package main

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"runsdesk/app"
	"runsdesk/runtime"
)

// runRunsAssign assigns a waiting run to a person, or releases it: runs assign UUID USERNAME
// [--force], runs assign UUID --release [--force]. It acts as the operator at the console
// (runtime.ConsoleActor), who may force the change of a run someone else holds. Exit 0 when
// the run is as asked, 1 when refused (the reason on stderr), 2 on a usage error.
func runRunsAssign(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("runs assign", "UUID USERNAME|--release [--force] [flags]")
	var dbc database
	var release, force bool
	f.bind.database(&dbc)
	f.bind.Bool(&release, "release")
	f.bind.Bool(&force, "force")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() == 0:
		return f.fail("the run's uuid is required: runsdesk runs assign UUID USERNAME|--release")
	case release && f.NArg() != 1:
		return f.fail("--release takes no username")
	case !release && f.NArg() != 2:
		return f.fail("a run's uuid and one username, or --release: runsdesk runs assign UUID USERNAME|--release")
	}
	id := f.Arg(0)
	if _, err := uuid.Parse(id); err != nil {
		return f.fail("%q is not a run uuid", id)
	}
	a := runtime.Assignment{Force: force}
	if !release {
		a.To = f.Arg(1)
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("runs assign", "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf("runs assign", "%v", err)
	}
	rt := app.NewRuntime(appConfig(c, conn, log, false, 0, leasing{}))
	defer rt.Close()
	run, err := rt.Assign(ctx, runtime.ConsoleActor(), id, a)
	if err != nil {
		return c.failf("runs assign", "%v", err)
	}
	if run.Assignee == 0 {
		fmt.Fprintf(c.stdout, "Run %s is assigned to nobody.\n", id)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "Run %s is assigned to %s.\n", id, run.AssigneeName)
	return exitOK
}
