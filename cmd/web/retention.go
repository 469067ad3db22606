package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"runsdesk/db"
	"runsdesk/runtime/retention"
)

// runRetention runs one retention pass (db.Store.SweepRetention) and prints what it removed,
// or with --dry-run what it would remove.
func runRetention(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("retention run", "[--dry-run] [flags]")
	var dbc database
	var dryRun bool
	f.bind.database(&dbc)
	f.bind.Bool(&dryRun, "dry-run")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	return onMigratedDatabase(ctx, c, f, "retention run", dbc, func(conn *conn) int {
		rep, err := db.New(conn.pool).SweepRetention(ctx, time.Now(), dryRun)
		if errors.Is(err, retention.ErrBusy) {
			return c.failf("retention run", "%v; try again when it ended", err)
		}
		if err != nil {
			return c.failf("retention run", "%v", err)
		}
		fmt.Fprintln(c.stdout, retentionSummary(rep))
		return exitOK
	})
}

// retentionSummary is rep as the command prints it.
func retentionSummary(rep retention.Report) string {
	head, remove, clear := "retention", "removed", "cleared"
	if rep.DryRun {
		head, remove, clear = "retention (dry run)", "would remove", "would clear"
	}
	return fmt.Sprintf("%s: %s %d output(s), %d transcript row(s), %d run(s) with %d event(s); %s %d decision(s) and %d audit row(s)",
		head, remove, rep.Outputs, rep.Transcripts, rep.Runs, rep.Events, clear, rep.Decisions, rep.Audits)
}
