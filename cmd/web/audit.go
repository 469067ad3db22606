package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/auditchain"
)

// auditListed is how many audit rows one listing prints, newest first (db.MaxAuditPage).
const auditListed = db.MaxAuditPage

// runAuditList prints the most recent rows of the audit trail the filters select, newest
// first: id, time, actor, address, action, run, outcome, reason and chain sequence; as a
// table, JSON, CSV or JSON Lines. The listing is itself audited (audit_list).
func runAuditList(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("audit list", "[--since T] [--until T] [--actor A] [--action A] [--run UUID] [--outcome O] [--format table|json|csv|jsonl] [flags]")
	var dbc database
	var format, since, until string
	var filter runtime.AuditFilter
	f.bind.database(&dbc)
	f.bind.Choice(&format, "format", auditFormats...)
	f.bind.String(&since, "since")
	f.bind.String(&until, "until")
	f.bind.String(&filter.Actor, "actor")
	f.bind.String(&filter.Action, "action")
	f.bind.String(&filter.RunUUID, "run")
	f.bind.String(&filter.Outcome, "outcome")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	now := time.Now()
	var err error
	if filter.Since, err = auditTime(since, now); err != nil {
		return f.fail("--since: %v", err)
	}
	if filter.Until, err = auditTime(until, now); err != nil {
		return f.fail("--until: %v", err)
	}
	filter.Limit = auditListed
	return onMigratedDatabase(ctx, c, f, "audit list", dbc, func(conn *conn) int {
		d := &desk{c: c, name: "audit list", audit: db.NewAudit(conn.pool, nil)}
		rows, err := d.audit.ListAudit(ctx, filter)
		if err != nil {
			return d.fail("%v", err)
		}
		if err := d.record(ctx, "success", auditFilterReason(filter, len(rows))); err != nil {
			return d.fail("%v", err)
		}
		return printList(c, "audit list", format, auditListing, rows)
	})
}

// auditFilterReason is the reason of the audit row of a listing: how many rows it returned
// and its filters.
func auditFilterReason(f runtime.AuditFilter, n int) string {
	return strings.TrimSpace(fmt.Sprintf("%d rows %s", n, f))
}

// auditTime parses --since or --until: empty (0, no bound), a duration back from now (24h),
// a date (2026-01-31, UTC midnight) or an RFC 3339 time.
func auditTime(s string, now time.Time) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d).Unix(), nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), nil
		}
	}
	return 0, fmt.Errorf("%q is neither a duration (24h), a date (2026-01-31) nor an RFC 3339 time", s)
}

// auditListing is how audit list prints an audit row; the actor's uid is 0 for service
// accounts and anonymous callers, the chain sequence 0 while the row is not chained yet.
var auditListing = listing[runtime.AuditEntry]{noun: "audit rows", fields: []field[runtime.AuditEntry]{
	{header: "ID", key: "id", cell: func(e runtime.AuditEntry) string { return strconv.FormatInt(e.UID, 10) }, value: func(e runtime.AuditEntry) any { return e.UID }},
	{header: "TIME", key: "time", cell: func(e runtime.AuditEntry) string { return when(e.Time) }, value: func(e runtime.AuditEntry) any { return jsonTime(e.Time) }},
	{header: "ACTOR", key: "actor", cell: func(e runtime.AuditEntry) string { return orDash(e.ActorName) }, value: func(e runtime.AuditEntry) any { return orNull(e.ActorName) }},
	{key: "actor_uid", value: func(e runtime.AuditEntry) any { return e.ActorUID }},
	{header: "IP", key: "ip", cell: func(e runtime.AuditEntry) string { return orDash(e.IP) }, value: func(e runtime.AuditEntry) any { return orNull(e.IP) }},
	{header: "ACTION", key: "action", cell: func(e runtime.AuditEntry) string { return e.Action }},
	{header: "RUN", key: "run", cell: func(e runtime.AuditEntry) string { return orDash(e.RunUUID) }, value: func(e runtime.AuditEntry) any { return orNull(e.RunUUID) }},
	{header: "OUTCOME", key: "outcome", cell: func(e runtime.AuditEntry) string { return e.Outcome }},
	{header: "REASON", key: "reason", cell: func(e runtime.AuditEntry) string { return e.Reason }},
	{key: "chain_seq", value: func(e runtime.AuditEntry) any { return e.ChainSeq }},
}}

// orDash is s, or "-" for an empty table cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runAuditKeygen prints a new ed25519 key pair for signing the audit chain's checkpoints.
func runAuditKeygen(_ context.Context, c *cli, args []string) int {
	f := c.newFlags("audit keygen", "")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	skey, vkey, err := auditchain.GenerateKey()
	if err != nil {
		return c.failf("audit keygen", "%v", err)
	}
	fmt.Fprintf(c.stdout, "RUNSDESK_AUDIT_KEY=%s\nRUNSDESK_AUDIT_VERIFIER_KEY=%s\n", skey, vkey)
	fmt.Fprintln(c.stderr, "Give RUNSDESK_AUDIT_KEY (or a file named by RUNSDESK_AUDIT_KEY_FILE) to every serve and worker, and keep it out of the database and its backups; give the verifier key to whoever runs `runsdesk audit verify`.")
	return exitOK
}

// runAuditVerify recomputes the audit chain and checks every checkpoint's signature: exit 0
// printing the verified range, or 1 naming the first row that does not match, the last good
// checkpoint, a truncation and the rows missing from the chain. The run is itself audited.
func runAuditVerify(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("audit verify", "[--from SEQ] [--checkpoints FILE] [flags]")
	var dbc database
	var from int
	var file string
	var lag time.Duration
	f.bind.database(&dbc)
	f.bind.Int(&from, "from")
	f.bind.String(&file, "checkpoints")
	f.bind.Duration(&lag, "audit-lag")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case from < 1:
		return f.fail("--from must be at least 1, got %d", from)
	case lag < time.Second:
		return f.fail("--audit-lag must be at least 1s, got %s", lag)
	}
	verifier, err := auditchain.VerifierFromEnv(c.getenv)
	if err != nil {
		return c.failf("audit verify", "%v", err)
	}
	opts := auditchain.Options{From: int64(from), GapCutoff: time.Now().Add(-2 * lag).Unix()}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return c.failf("audit verify", "--checkpoints: %v", err)
		}
		opts.Notes = auditchain.SplitNotes(string(b))
	}
	return onMigratedDatabase(ctx, c, f, "audit verify", dbc, func(conn *conn) int {
		d := &desk{c: c, name: "audit verify", audit: db.NewAudit(conn.pool, nil)}
		rep, err := auditchain.Verify(ctx, db.New(conn.pool), verifier, opts)
		if err != nil {
			return d.fail("%v", err)
		}
		outcome, summary := "success", fmt.Sprintf("verified seq %d–%d", rep.From, rep.To)
		if !rep.OK() {
			outcome, summary = "failure", rep.Problems[0].String()
		}
		if err := d.record(ctx, outcome, summary); err != nil {
			return d.fail("%v", err)
		}
		printVerifyReport(c, rep)
		if !rep.OK() {
			return exitFailure
		}
		return exitOK
	})
}

// printVerifyReport writes rep: the range, the checkpoints, then each problem (to stderr).
func printVerifyReport(c *cli, rep auditchain.Report) {
	if rep.To >= rep.From {
		fmt.Fprintf(c.stdout, "audit chain seq %d–%d recomputed (%d rows)", rep.From, rep.To, rep.To-rep.From+1)
	} else {
		fmt.Fprintf(c.stdout, "audit chain: no rows from seq %d", rep.From)
	}
	fmt.Fprintf(c.stdout, "; %d signed checkpoint(s) valid\n", len(rep.Checkpoints))
	if rep.LastGood != nil {
		fmt.Fprintf(c.stdout, "last good checkpoint: seq %d signed %s\n", rep.LastGood.Seq, time.Unix(rep.LastGood.Time, 0).UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintln(c.stdout, "last good checkpoint: none")
	}
	if rep.OK() {
		covered := int64(0)
		if rep.LastGood != nil {
			covered = rep.LastGood.Seq
		}
		if rep.To > covered {
			fmt.Fprintf(c.stdout, "rows after seq %d are not covered by a checkpoint yet: their removal from the end could not be told\n", covered)
		}
		fmt.Fprintln(c.stdout, "OK")
		return
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(c.stderr, "runsdesk audit verify: %s\n", p)
	}
}
