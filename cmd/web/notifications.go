package main

import (
	"cmp"
	"context"
	"strconv"

	"runsdesk/db"
	"runsdesk/runtime"
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
	var format string
	f.bind.database(&dbc)
	f.bind.Bool(&failed, "failed")
	f.bind.Choice(&format, "format", listFormats...)
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
		l := notificationListing
		if failed {
			l.noun = "failed notifications"
		}
		return printList(c, "notifications list", format, l, ns)
	})
}

// notificationListing is how notifications list prints a notification; DUE/SENT is when it
// was sent, else when it is next due.
var notificationListing = listing[runtime.Notification]{noun: "notifications", fields: []field[runtime.Notification]{
	{header: "ID", key: "id", cell: runtime.Notification.MessageID},
	{header: "RUN", key: "run", cell: func(n runtime.Notification) string { return n.RunUUID }},
	{header: "EVENT", key: "event", cell: func(n runtime.Notification) string { return string(n.Event) }},
	{header: "CHANNEL", key: "channel", cell: func(n runtime.Notification) string { return n.Rule.Channel }},
	{header: "STATE", key: "state", cell: func(n runtime.Notification) string { return n.State }},
	{header: "ATTEMPTS", key: "attempts", cell: func(n runtime.Notification) string { return strconv.Itoa(n.Attempts) }, value: func(n runtime.Notification) any { return n.Attempts }},
	{header: "CREATED", key: "created", cell: func(n runtime.Notification) string { return when(n.OccurredAt) }, value: func(n runtime.Notification) any { return jsonTime(n.OccurredAt) }},
	{header: "DUE/SENT", cell: func(n runtime.Notification) string { return when(cmp.Or(n.SentAt, n.DueAt)) }},
	{key: "due", value: func(n runtime.Notification) any { return jsonTime(n.DueAt) }},
	{key: "sent", value: func(n runtime.Notification) any { return jsonTime(n.SentAt) }},
	{header: "LAST ERROR", key: "last_error", cell: func(n runtime.Notification) string { return n.LastError }, value: func(n runtime.Notification) any { return orNull(n.LastError) }},
}}
