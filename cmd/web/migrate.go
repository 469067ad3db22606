package main

import (
	"context"
	"fmt"

	"runsdesk/db"
)

// runMigrate applies every pending migration and reports how many it applied.
func runMigrate(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("migrate", "[flags]")
	var dbc database
	f.bind.database(&dbc)
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("migrate", "%v", err)
	}
	defer conn.close(log)
	before, err := db.Pending(ctx, conn.pool)
	if err != nil {
		return c.failf("migrate", "read the migration state: %v", err)
	}
	if err := conn.migrate(ctx); err != nil {
		return c.failf("migrate", "%v", err)
	}
	fmt.Fprintf(c.stdout, "Database migrated: %d migration(s) applied, none pending.\n", before)
	return exitOK
}
