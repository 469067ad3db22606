package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"runsdesk/app"
	"runsdesk/runtime"
)

// cliCancelActor is the identity `runsdesk cancel` acts as: a service account with the cancel
// scope only (upstream's cli:nrllm:agent:cancel).
func cliCancelActor() runtime.Actor {
	return runtime.Actor{Name: "cli:runsdesk:cancel", Role: runtime.RoleService, Scopes: []string{runtime.ScopeCancel}}
}

// runCancel cancels one run: exit 0 when cancelled, 1 when the run is unknown or already
// finished, 2 without a uuid.
func runCancel(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("cancel", "UUID [flags]")
	var dbc database
	var demoTools bool
	f.bind.database(&dbc)
	f.bind.Bool(&demoTools, "demo")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() == 0:
		return f.fail("the run's uuid is required: runsdesk cancel UUID")
	case f.NArg() > 1:
		return f.fail("one uuid only, got %d arguments", f.NArg())
	}
	id := f.Arg(0)
	if _, err := uuid.Parse(id); err != nil {
		return f.fail("%q is not a run uuid", id)
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("cancel", "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf("cancel", "%v", err)
	}
	rt := app.NewRuntime(appConfig(c, conn, log, demoTools, 0, leasing{}))
	defer rt.Close()
	_, err = rt.Cancel(ctx, cliCancelActor(), id)
	var re *runtime.Error
	switch {
	case errors.As(err, &re) && (re.Code == runtime.CodeRunNotFound || re.Code == runtime.CodeRunNotCancellable):
		return c.failf("cancel", "run %s: unknown or already finished", id)
	case err != nil:
		return c.failf("cancel", "%v", err)
	}
	fmt.Fprintf(c.stdout, "Run %s cancelled.\n", id)
	return exitOK
}
