// Command retention measures one retention pass (db.Store.SweepRetention) removing a slice of
// terminal runs at several desk sizes: for each size it seeds a fresh desk (bench/seed: 1 %
// waiting, the rest finished over 14 days), gives every finished run an output and three
// events, sets the configurations' `retention: runs` so that the oldest tenth of the finished
// runs has expired, and times the pass that removes them with their events, outputs, calls and
// notifications (decision and audit rows cleared). A pass must cost the same per removed run at
// every size (±25 %): it reads only the expired runs, on KEY retention.
//
//	go run ./bench/retention -runs 10000,1000000
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
	"runsdesk/db"
)

type options struct {
	sizes  []int
	server benchcmd.Server
}

func main() { benchcmd.Main("retention", parseFlags, run) }

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("retention", flag.ContinueOnError)
	sizes := f.String("runs", "10000,1000000", "comma-separated desk sizes; each pass removes a tenth of its finished runs")
	o.server.Flags(f, benchcmd.PrivateDataDir("retention"), 0)
	if err := f.Parse(args); err != nil {
		return o, err
	}
	var err error
	o.sizes, err = benchcmd.Numbers("runs", *sizes, 1000)
	return o, err
}

// result is one size's pass.
type result struct {
	size, removed int
	events        int64
	wall, cpu     time.Duration
	statements    int64
	// work is the server's counters over the pass (counters).
	work map[string]float64
}

// counters are the server status variables the pass's work is measured by.
var counters = []string{"Innodb_rows_read", "Handler_read_key", "Handler_read_next", "Handler_delete", "Handler_update", "Innodb_buffer_pool_reads"}

func run(ctx context.Context, o options) error {
	env, _, err := o.server.Start(ctx, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := eagerFlushing(ctx, env); err != nil {
		fmt.Fprintln(os.Stderr, "retention: dirty pages are flushed lazily:", err)
	}
	var results []result
	for _, size := range o.sizes {
		r, err := measure(ctx, env, size)
		if err != nil {
			return fmt.Errorf("%d runs: %w", size, err)
		}
		results = append(results, r)
	}
	fmt.Println()
	fmt.Printf("%-10s %9s %9s %10s %12s %14s %16s   per removed run: %s\n", "runs", "removed", "events", "pass ms", "statements", "CPU ms app+db", "CPU µs per run",
		strings.Join(counters, ", "))
	for _, r := range results {
		var work []string
		for _, c := range counters {
			work = append(work, strconv.FormatFloat(r.work[c]/float64(r.removed), 'f', 1, 64))
		}
		fmt.Printf("%-10d %9d %9d %10.1f %12d %14.1f %16.1f   %s\n", r.size, r.removed, r.events, ms(r.wall), r.statements, ms(r.cpu), perRun(r),
			strings.Join(work, ", "))
	}
	if len(results) > 1 {
		first, last := results[0], results[len(results)-1]
		fmt.Printf("CPU per removed run %d / %d runs: %.2f; pass time per removed run: %.2f\n", last.size, first.size,
			perRun(last)/perRun(first), (ms(last.wall)/float64(last.removed))/(ms(first.wall)/float64(first.removed)))
	}
	return nil
}

// measure seeds a fresh desk of size runs, expires its oldest tenth of finished runs and
// times the pass, with the server's work of it until the server is idle again.
func measure(ctx context.Context, env *benchenv.Env, size int) (result, error) {
	r := result{size: size}
	desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindExpiry, Runs: size, WaitingPercent: 1, Fresh: true,
		Progress: benchcmd.SeedProgress(size)})
	if err != nil {
		return r, err
	}
	pool, err := db.Open(ctx, desk.DSN)
	if err != nil {
		return r, err
	}
	defer pool.Close()
	if err := prepare(ctx, pool); err != nil {
		return r, err
	}
	var finished int
	if err := pool.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE finished_at > 0`).Scan(&finished); err != nil {
		return r, err
	}
	var cutoff int64
	if err := pool.QueryRowContext(ctx, `SELECT finished_at FROM tx_nrllm_agentrun WHERE finished_at > 0 ORDER BY finished_at, uid LIMIT 1 OFFSET ?`,
		finished/10).Scan(&cutoff); err != nil {
		return r, fmt.Errorf("find the slice: %w", err)
	}
	now := time.Now()
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_configuration SET retention_runs = ?`, now.Unix()-cutoff); err != nil {
		return r, err
	}
	server := env.ServerPID()
	if server == 0 {
		server = -1
	}
	settle(ctx, pool, server)
	before, err := benchcmd.Status(ctx, pool, counters)
	if err != nil {
		return r, err
	}
	app0, db0 := load.CPUOrZero(0), load.CPUOrZero(server)
	t0 := time.Now()
	rep, err := db.New(pool).SweepRetention(ctx, now, false)
	if err != nil {
		return r, err
	}
	r.wall = time.Since(t0)
	// The server purges the removed rows in the background, partly after the pass: its CPU
	// until it is idle again counts (the idle second that ends settle is not subtracted).
	settle(ctx, pool, server)
	r.cpu = load.CPUOrZero(0) - app0 + load.CPUOrZero(server) - db0
	after, err := benchcmd.Status(ctx, pool, counters)
	if err != nil {
		return r, err
	}
	r.work = map[string]float64{}
	for _, c := range counters {
		r.work[c] = after[c] - before[c]
	}
	r.removed, r.events, r.statements = int(rep.Runs), rep.Events, rep.Statements
	if r.removed == 0 {
		return r, fmt.Errorf("the pass removed no run (%+v)", rep)
	}
	fmt.Fprintf(os.Stderr, "  %d runs: removed %d of %d finished runs in %s\n", size, r.removed, finished, r.wall.Round(time.Millisecond))
	return r, nil
}

// eagerFlushing makes the server write dirty pages as soon as it can, so settle can wait for
// none to be left.
func eagerFlushing(ctx context.Context, env *benchenv.Env) error {
	pool, err := sql.Open("mysql", env.DSN("", false))
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = pool.ExecContext(ctx, `SET GLOBAL innodb_max_dirty_pages_pct = 0`)
	return err
}

// prepare gives every finished run an output and three events, and analyses the tables.
func prepare(ctx context.Context, pool *sql.DB) error {
	for _, q := range []string{
		`INSERT INTO tx_runsdesk_run_output (run, output_text, finished_at)
			SELECT uid, REPEAT('The refund was issued. ', 8), finished_at FROM tx_nrllm_agentrun WHERE finished_at > 0`,
		`INSERT INTO tx_nrllm_agentrun_event (run, sequence, kind, payload, crdate)
			SELECT r.uid, 100 + k.n, 'model', '{"contentLength":42}', r.finished_at
			FROM tx_nrllm_agentrun r JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2) k WHERE r.finished_at > 0`,
		`ANALYZE TABLE tx_nrllm_agentrun, tx_nrllm_agentrun_event, tx_runsdesk_run_output, tx_runsdesk_decision, tx_runsdesk_audit`,
	} {
		if _, err := pool.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	return nil
}

// settle waits, at most two minutes, until the server has written every dirty page and purged
// every removed row (so a pass neither pays for the seeding's writes nor leaves its own
// unpaid), then until it spends under 2 % of a CPU for a second.
func settle(ctx context.Context, pool *sql.DB, server int) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var name string
		var dirty, history float64
		errD := pool.QueryRowContext(ctx, `SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'`).Scan(&name, &dirty)
		errH := pool.QueryRowContext(ctx, `SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'`).Scan(&name, &history)
		if errD != nil || errH != nil || (dirty < 50 && history < 50) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	if server <= 0 {
		return
	}
	for time.Now().Before(deadline) {
		before := load.CPUOrZero(server)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		if load.CPUOrZero(server)-before < 20*time.Millisecond {
			return
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func perRun(r result) float64 { return float64(r.cpu.Microseconds()) / float64(r.removed) }
