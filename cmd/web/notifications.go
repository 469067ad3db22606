package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"runsdesk/db"
)

// notificationsListed bounds how many notifications one listing prints.
const notificationsListed = 200

// runNotificationsList prints the most recent notifications of the outbox, newest first
// (with --failed only those given up): id, run, event, channel, state, attempts, when it was
// written, when it is next due or was sent, and the last failure's reason. Secrets are never
// stored, so never printed.
func runNotificationsList(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("notifications list", "[--failed] [flags]")
	var dbc database
	var failed bool
	f.bind.database(&dbc)
	f.bind.Bool(&failed, "failed")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	return onMigratedDatabase(ctx, c, f, "notifications list", dbc, func(conn *conn) int {
		ns, err := db.New(conn.pool).Notifications(ctx, failed, notificationsListed)
		if err != nil {
			return c.failf("notifications list", "%v", err)
		}
		if len(ns) == 0 {
			fmt.Fprintln(c.stdout, map[bool]string{false: "No notifications.", true: "No failed notifications."}[failed])
			return exitOK
		}
		w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, strings.Join([]string{"ID", "RUN", "EVENT", "CHANNEL", "STATE", "ATTEMPTS", "CREATED", "DUE/SENT", "LAST ERROR"}, "\t"))
		for _, n := range ns {
			at := when(n.DueAt)
			if n.SentAt > 0 {
				at = when(n.SentAt)
			}
			fmt.Fprintln(w, strings.Join([]string{n.MessageID(), n.RunUUID, string(n.Event), n.Rule.Channel, n.State,
				strconv.Itoa(n.Attempts), when(n.OccurredAt), at, n.LastError}, "\t"))
		}
		if err := w.Flush(); err != nil {
			return c.failf("notifications list", "%v", err)
		}
		return exitOK
	})
}
