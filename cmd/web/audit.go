package main

import (
	"context"
	"strconv"

	"runsdesk/db"
)

// auditListed is how many audit rows one listing prints, newest first (db.RecentAudit's most).
const auditListed = 1000

// runAuditList prints the most recent rows of the audit trail, newest first: id, time, actor,
// address, action, run, outcome and reason; as a table, JSON, CSV or JSON Lines.
func runAuditList(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("audit list", "[--format table|json|csv|jsonl] [flags]")
	var dbc database
	var format string
	f.bind.database(&dbc)
	f.bind.Choice(&format, "format", auditFormats...)
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	return onMigratedDatabase(ctx, c, f, "audit list", dbc, func(conn *conn) int {
		rows, err := db.NewAudit(conn.pool, nil).RecentAudit(ctx, auditListed)
		if err != nil {
			return c.failf("audit list", "%v", err)
		}
		return printList(c, "audit list", format, auditListing, rows)
	})
}

// auditListing is how audit list prints an audit row; the actor's uid is 0 for service
// accounts and anonymous callers.
var auditListing = listing[db.AuditEntry]{noun: "audit rows", fields: []field[db.AuditEntry]{
	{header: "ID", key: "id", cell: func(e db.AuditEntry) string { return strconv.FormatInt(e.UID, 10) }, value: func(e db.AuditEntry) any { return e.UID }},
	{header: "TIME", key: "time", cell: func(e db.AuditEntry) string { return when(e.Time) }, value: func(e db.AuditEntry) any { return jsonTime(e.Time) }},
	{header: "ACTOR", key: "actor", cell: func(e db.AuditEntry) string { return orDash(e.ActorName) }, value: func(e db.AuditEntry) any { return orNull(e.ActorName) }},
	{key: "actor_uid", value: func(e db.AuditEntry) any { return e.ActorUID }},
	{header: "IP", key: "ip", cell: func(e db.AuditEntry) string { return orDash(e.IP) }, value: func(e db.AuditEntry) any { return orNull(e.IP) }},
	{header: "ACTION", key: "action", cell: func(e db.AuditEntry) string { return e.Action }},
	{header: "RUN", key: "run", cell: func(e db.AuditEntry) string { return orDash(e.RunUUID) }, value: func(e db.AuditEntry) any { return orNull(e.RunUUID) }},
	{header: "OUTCOME", key: "outcome", cell: func(e db.AuditEntry) string { return e.Outcome }},
	{header: "REASON", key: "reason", cell: func(e db.AuditEntry) string { return e.Reason }},
}}

// orDash is s, or "-" for an empty table cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
