// Command expiry measures one expirer pass (Runtime.Expire: the due-pause scan and 100
// expiries) at several desk sizes where every run waits: for each size it prepares (or
// reuses) a desk of waiting runs, gives every pause a deadline a month away, and then, round
// by round, makes 100 of them due and times the pass that expires them (action cancel: the
// ExpirePause transition with its decision, event and audit row, so the pass measures the
// expirer, not a model) and, alone, the scan that finds them (FindDue). A pass must cost the
// same at every size: the scan reads only due rows on KEY wait_due.
//
//	go run ./bench/expiry -runs 1000,100000,1000000 -rounds 5
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"runsdesk/app"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
	"runsdesk/db"
	"runsdesk/runtime/engine"
)

type options struct {
	sizes  []int
	due    int
	rounds int
	server benchcmd.Server
	fresh  bool
}

func main() { benchcmd.Main("expiry", parseFlags, run) }

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("expiry", flag.ContinueOnError)
	sizes := f.String("runs", "1000,100000,1000000", "comma-separated desk sizes (every run waiting)")
	f.IntVar(&o.due, "due", 100, "pauses made due before each pass")
	f.IntVar(&o.rounds, "rounds", 5, "passes per size")
	o.server.Flags(f, benchcmd.PrivateDataDir("expiry"), 0)
	f.BoolVar(&o.fresh, "fresh", false, "seed again even if a seeded desk exists")
	if err := f.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.sizes, err = benchcmd.Numbers("runs", *sizes, 1); err != nil {
		return o, err
	}
	if o.due < 1 || o.due > 100 || o.rounds < 1 {
		return o, fmt.Errorf("-due must be 1..100 and -rounds at least 1")
	}
	return o, nil
}

// result is one size's measurements, in milliseconds per pass (median and range).
type result struct {
	size       int
	pass, scan []float64
	// cpu is the CPU time per pass of this process and the database server together.
	cpu             []float64
	expiredPerRound int
	// work is the server's counters per pass (median of the rounds): rows InnoDB read, index
	// reads, pages read from disk, statements.
	work map[string][]float64
}

// counters are the server status variables a pass's work is measured by: the private server
// runs only this benchmark, so their deltas are the pass's, whatever else loads the machine.
var counters = []string{"Innodb_rows_read", "Handler_read_key", "Handler_read_next", "Innodb_buffer_pool_reads", "Questions"}

func run(ctx context.Context, o options) error {
	env, log, err := o.server.Start(ctx, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer env.Close()
	var desks []*deskBench
	for _, size := range o.sizes {
		d, err := prepare(ctx, o, env, size, log)
		if err != nil {
			return fmt.Errorf("%d runs: %w", size, err)
		}
		defer d.close()
		desks = append(desks, d)
	}
	for round := range o.rounds {
		for _, d := range desks {
			if err := d.pass(ctx, o, env, round); err != nil {
				return fmt.Errorf("%d runs: %w", d.r.size, err)
			}
		}
	}
	results := make([]result, len(desks))
	for i, d := range desks {
		results[i] = d.r
	}
	fmt.Println()
	report(results)
	return nil
}

// deskBench is one desk under measurement: its pool, a runtime on it and its results.
type deskBench struct {
	pool  *sql.DB
	rt    *engine.Runtime
	store *db.Store
	r     result
}

func (d *deskBench) close() {
	d.rt.Close()
	d.pool.Close()
}

// prepare seeds (or reuses) the desk of size runs, gives every pause a distant deadline and
// reads the run table and each of its indexes once, so every size is measured with its rows
// in the buffer pool (a desk that fits its pool) and the rounds of all sizes can alternate.
func prepare(ctx context.Context, o options, env *benchenv.Env, size int, log *slog.Logger) (*deskBench, error) {
	desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindExpiry, Runs: size, WaitingPercent: 100, Fresh: o.fresh,
		Progress: benchcmd.SeedProgress(size)})
	if err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, desk.DSN)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ?, remind_at = 0, escalate_at = 0,
		escalated = 0, wait_policy = '{"action":"cancel"}' WHERE status IN ('waiting_for_approval', 'waiting_for_input')`, now+30*86400, now+30*86400); err != nil {
		return nil, fmt.Errorf("give every pause a deadline: %w", err)
	}
	if _, err := pool.ExecContext(ctx, `ANALYZE TABLE tx_nrllm_agentrun`); err != nil {
		return nil, err
	}
	if err := warm(ctx, pool); err != nil {
		return nil, err
	}
	rt := app.NewRuntime(app.Config{DB: pool, Tools: benchenv.Tools(), Logger: log, Workers: 1})
	return &deskBench{pool: pool, rt: rt, store: db.New(pool), r: result{size: size, work: map[string][]float64{}}}, nil
}

// warm reads every index of the run table once (the primary key with the stored payloads).
func warm(ctx context.Context, pool *sql.DB) error {
	rows, err := pool.QueryContext(ctx, `SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tx_nrllm_agentrun'`)
	if err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("warm: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	var sum int64
	if err := pool.QueryRowContext(ctx, `SELECT COALESCE(SUM(LENGTH(suspended_state) + LENGTH(queued_request)), 0) FROM tx_nrllm_agentrun`).Scan(&sum); err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	for _, n := range names {
		if n == "PRIMARY" {
			continue
		}
		if err := pool.QueryRowContext(ctx, "SELECT COUNT(*) FROM tx_nrllm_agentrun FORCE INDEX (`"+n+"`)").Scan(&sum); err != nil {
			return fmt.Errorf("warm %s: %w", n, err)
		}
	}
	return nil
}

// pass makes o.due pauses due and times one expirer pass over them (round counts from 0).
func (d *deskBench) pass(ctx context.Context, o options, env *benchenv.Env, round int) error {
	pool, rt, store, r := d.pool, d.rt, d.store, &d.r
	due := time.Now().Unix() - 1
	res, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ?
		WHERE status IN ('waiting_for_approval', 'waiting_for_input') AND wait_due > ? LIMIT ?`, due, due, due, o.due)
	if err != nil {
		return fmt.Errorf("make pauses due: %w", err)
	}
	if n, _ := res.RowsAffected(); int(n) != o.due {
		return fmt.Errorf("round %d: only %d pauses left to make due (earlier passes expired the rest; seed again with -fresh)", round, n)
	}
	t0 := time.Now()
	found, err := store.FindDue(ctx, time.Now().Unix(), o.due)
	if err != nil {
		return err
	}
	r.scan = append(r.scan, ms(time.Since(t0)))
	if len(found) != o.due {
		return fmt.Errorf("round %d: the scan found %d due pauses, want %d", round, len(found), o.due)
	}
	before, err := benchcmd.Status(ctx, pool, counters)
	if err != nil {
		return err
	}
	server := env.ServerPID()
	if server == 0 {
		server = -1
	}
	app0, db0 := load.CPUOrZero(0), load.CPUOrZero(server)
	t0 = time.Now()
	rep, err := rt.Expire(ctx, o.due)
	if err != nil {
		return err
	}
	r.pass = append(r.pass, ms(time.Since(t0)))
	r.cpu = append(r.cpu, ms(load.CPUOrZero(0)-app0+load.CPUOrZero(server)-db0))
	after, err := benchcmd.Status(ctx, pool, counters)
	if err != nil {
		return err
	}
	for _, c := range counters {
		r.work[c] = append(r.work[c], after[c]-before[c])
	}
	r.expiredPerRound = rep.Expired
	if rep.Expired != o.due {
		return fmt.Errorf("round %d: expired %d, want %d (%+v)", round, rep.Expired, o.due, rep)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// report prints one line per size and, for several, the ratio of the largest size's median
// pass to the smallest's.
func report(rs []result) {
	fmt.Printf("%-10s %8s %22s %12s %9s %9s   per pass: %s\n", "runs", "rounds", "pass ms (median, range)", "CPU ms (app+db)", "scan ms", "expired", strings.Join(counters, ", "))
	for _, r := range rs {
		var work []string
		for _, c := range counters {
			work = append(work, strconv.FormatFloat(median(r.work[c]), 'f', 0, 64))
		}
		fmt.Printf("%-10d %8d %8.1f (%5.1f–%5.1f) %12.1f %9.2f %9d   %s\n", r.size, len(r.pass), median(r.pass), slices.Min(r.pass), slices.Max(r.pass),
			median(r.cpu), median(r.scan), r.expiredPerRound, strings.Join(work, ", "))
	}
	if len(rs) > 1 {
		first, last := rs[0], rs[len(rs)-1]
		fmt.Printf("pass median %d / %d runs: %.2f; CPU: %.2f; scan: %.2f\n", last.size, first.size, median(last.pass)/median(first.pass),
			median(last.cpu)/median(first.cpu), median(last.scan)/median(first.scan))
	}
}
