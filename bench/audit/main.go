// Command audit measures the audit trail at size: it seeds a desk of its own with -rows audit
// rows (actors, actions, outcomes and runs spread over a year), appends them all to the audit
// chain (db.Store.AppendChain) and recomputes it (auditchain.Verify), timing both, then loads
// filtered pages of /audit from -clients signed-in admins for -duration each (-mode http) or
// db.Audit.ListAudit directly (-mode store), reporting p50, p99, pages per second and the
// statements each page sent. The goal: p99 ≤ 25 ms at 1M rows and 32 clients.
//
//	go run ./bench/audit -rows 1000000 -clients 32 -duration 10s
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/auditchain"
)

type options struct {
	rows, clients int
	duration      time.Duration
	mode          string
	chain         bool
	interval      time.Duration
	server        benchcmd.Server
}

func main() { benchcmd.Main("audit", parseFlags, run) }

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("audit", flag.ContinueOnError)
	f.IntVar(&o.rows, "rows", 1000000, "audit rows of the desk (added when the desk has fewer)")
	f.IntVar(&o.clients, "clients", 32, "concurrent clients")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "load time per scenario")
	f.DurationVar(&o.interval, "interval", 0, "pace each client to one page per interval (0: a closed loop, as fast as the server answers)")
	f.BoolVar(&o.chain, "chain", true, "append the unchained rows to the audit chain and verify it, timing both (false: only the pages)")
	f.StringVar(&o.mode, "mode", "http", "http (GET /audit as signed-in admins) or store (db.Audit.ListAudit)")
	o.server.Flags(f, benchcmd.PrivateDataDir("audit"), 1024)
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if o.mode != "http" && o.mode != "store" {
		return o, errors.New("audit: -mode must be http or store")
	}
	return o, nil
}

const (
	actors  = 200
	runs    = 100000
	spacing = 30 // seconds between seeded rows
)

func run(ctx context.Context, o options) error {
	env, log, err := o.server.Start(ctx, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer env.Close()
	fmt.Printf("# %s\n", env.Settings(ctx))
	// A desk of its own (1,000 runs, 3 % waiting: a name no other bench uses) for its admins.
	desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindExpiry, Runs: 1000, WaitingPercent: 3})
	if err != nil {
		return err
	}
	pool, err := db.Open(ctx, desk.DSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	now := time.Now()
	if err := seedAudit(ctx, env, desk, o.rows, now); err != nil {
		return err
	}
	if o.chain {
		if err := chainAndVerify(ctx, db.New(pool), now); err != nil {
			return err
		}
	}
	var uid int64
	if err := pool.QueryRowContext(ctx, `SELECT MAX(uid) FROM tx_runsdesk_audit`).Scan(&uid); err != nil {
		return err
	}
	day := now.Add(-time.Duration(o.rows/2*spacing) * time.Second).UTC().Format(time.DateOnly) // mid-way through the seeded year
	scenarios := []struct{ name, query string }{
		{"first", ""},
		{"actor", "actor=person7"},
		{"action+outcome", "action=login&outcome=failure"},
		{"run", "run=" + runUUID(4242)},
		{"day", "since=" + day + "&until=" + day},
		{"actor+action", "actor=person3&action=comment"},
		{"deep", fmt.Sprintf("before=%d", uid/2)},
	}
	var op func(query string) (load.Op, error)
	switch o.mode {
	case "http":
		app, err := benchapp.Start(ctx, benchapp.Options{DSN: desk.DSN, Logger: log})
		if err != nil {
			return err
		}
		defer app.Close()
		clients, err := benchapp.SignIn(ctx, []string{app.URL}, o.clients)
		if err != nil {
			return err
		}
		op = func(query string) (load.Op, error) {
			path := "/audit?" + query
			status, body, err := clients[0].Get(ctx, path)
			if err != nil || status != http.StatusOK || !strings.Contains(string(body), `data-testid="audit-row"`) {
				return nil, fmt.Errorf("GET %s: %d %v", path, status, err)
			}
			return func(ctx context.Context, c int) error {
				status, _, err := clients[c].Get(ctx, path)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("GET %s: status %d", path, status)
				}
				return err
			}, nil
		}
	case "store":
		audit := db.NewAudit(pool, nil)
		op = func(query string) (load.Op, error) {
			f, err := filterOf(query)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, _ int) error {
				_, err := audit.ListAudit(ctx, f)
				return err
			}, nil
		}
	}
	fmt.Printf("%-16s %8s %10s %10s %10s %8s %14s\n", "scenario", "clients", "p50", "p99", "max", "pages/s", "statements/pg")
	for _, sc := range scenarios {
		do, err := op(sc.query)
		if err != nil {
			return err
		}
		load.Run(ctx, 1, time.Second, do)
		q0 := benchcmd.Statements(ctx, env.Admin())
		var res load.Result
		if o.interval > 0 {
			res = load.Paced(ctx, o.clients, o.interval, o.duration, do)
		} else {
			res = load.Run(ctx, o.clients, o.duration, do)
		}
		stmts := float64(benchcmd.Statements(ctx, env.Admin())-q0-1) / float64(max(res.Requests, 1))
		fmt.Printf("%-16s %8d %10s %10s %10s %8.0f %14.2f  errors=%d %v\n", sc.name, o.clients, load.Ms(res.P50), load.Ms(res.P99), load.Ms(res.Max),
			res.PerSecond, stmts, res.Errors, res.FirstError)
	}
	return nil
}

// chainAndVerify appends every unchained row to the chain, then recomputes the whole chain,
// printing the time and rate of each.
func chainAndVerify(ctx context.Context, store *db.Store, now time.Time) error {
	started := time.Now()
	head, n, err := store.AppendChain(ctx, now.Unix(), now.Unix())
	if err != nil {
		return err
	}
	fmt.Printf("chain: appended %d rows in %s (%.0f rows/s), head seq %d\n", n, time.Since(started).Round(time.Millisecond), float64(n)/time.Since(started).Seconds(), head.Seq)
	_, vkey, _ := auditchain.GenerateKey()
	verifier, err := auditchainVerifier(vkey)
	if err != nil {
		return err
	}
	started = time.Now()
	rep, err := auditchain.Verify(ctx, store, verifier, auditchain.Options{GapCutoff: now.Add(-time.Minute).Unix()})
	if err != nil {
		return err
	}
	fmt.Printf("verify: seq %d–%d in %s (%.0f rows/s), problems %v\n", rep.From, rep.To, time.Since(started).Round(time.Millisecond),
		float64(rep.To-rep.From+1)/time.Since(started).Seconds(), rep.Problems)
	return nil
}

// seedAudit adds audit rows to the desk until it has rows, written 30 s apart up to now.
func seedAudit(ctx context.Context, env *benchenv.Env, desk *benchenv.Desk, rows int, now time.Time) error {
	bulk, err := sql.Open("mysql", env.DSN(desk.Name, true))
	if err != nil {
		return err
	}
	defer bulk.Close()
	var have int
	if err := bulk.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_audit`).Scan(&have); err != nil {
		return err
	}
	const batch = 2000
	// Values the seeded rows take, by row number.
	actions := []string{"approval", "login", "assignment", "comment", "vote", "apply", "user_disable", "retention"}
	outcomes := []string{"success", "success", "success", "success", "success", "success", "success", "success", "denied", "failure"}
	started := time.Now()
	for i := have; i < rows; i += batch {
		var b strings.Builder
		b.WriteString(`INSERT INTO tx_runsdesk_audit (crdate, actor_uid, actor_name, ip, action, run_uuid, outcome, reason) VALUES `)
		var args []any
		for j := i; j < min(i+batch, rows); j++ {
			if j > i {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			run := ""
			if j%3 == 0 {
				run = runUUID(j % runs)
			}
			args = append(args, now.Unix()-int64(rows-j)*spacing, j%actors+1, fmt.Sprintf("person%d", j%actors), "192.0.2.1",
				actions[j%len(actions)], run, outcomes[j%len(outcomes)], fmt.Sprintf("seeded row %d", j))
		}
		if _, err := bulk.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("seed audit rows: %w", err)
		}
		if (i+batch)%100000 == 0 {
			fmt.Fprintf(os.Stderr, "  seeded %d of %d audit rows (%s)\n", i+batch, rows, time.Since(started).Round(time.Second))
		}
	}
	_, err = bulk.ExecContext(ctx, `ANALYZE TABLE tx_runsdesk_audit`)
	return err
}

// runUUID is the uuid of seeded run n.
func runUUID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// filterOf is the store's filter of a /audit query (its dates in UTC, until inclusive).
func filterOf(query string) (runtime.AuditFilter, error) {
	v, err := url.ParseQuery(query)
	if err != nil {
		return runtime.AuditFilter{}, err
	}
	f := runtime.AuditFilter{Actor: v.Get("actor"), Action: v.Get("action"), RunUUID: v.Get("run"), Outcome: v.Get("outcome"), Limit: 26}
	if s := v.Get("since"); s != "" {
		t, _ := time.Parse(time.DateOnly, s)
		f.Since = t.Unix()
	}
	if s := v.Get("until"); s != "" {
		t, _ := time.Parse(time.DateOnly, s)
		f.Until = t.Add(24 * time.Hour).Unix()
	}
	if s := v.Get("before"); s != "" {
		_, err := fmt.Sscan(s, &f.Before)
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// auditchainVerifier is the verifier of vkey (no checkpoint is signed here: the bench times
// the recomputation).
func auditchainVerifier(vkey string) (note.Verifier, error) { return note.NewVerifier(vkey) }
