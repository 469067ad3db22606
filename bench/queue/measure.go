package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
)

// row is one measurement: a desk size, mode, client count and round, with the CPU time of this
// process and of the database server per request and the statements sent per request (the
// server's Questions counter), which hardly or not at all depend on other load.
type row struct {
	runs, clients, round int
	mode                 string
	res                  load.Result
	appCPU, dbCPU        time.Duration
	statements           float64
}

// String is the measurement as one log line.
func (r row) String() string {
	return fmt.Sprintf("round=%d runs=%d mode=%s clients=%d %s cpu/req app=%s db=%s statements/req=%.2f load=%s",
		r.round, r.runs, r.mode, r.clients, r.res, load.Ms(r.appCPU), load.Ms(r.dbCPU), r.statements, loadAverage())
}

// measure warms mode on t for a second, then drives it from clients for o.duration.
func measure(ctx context.Context, o options, env *benchenv.Env, t *target, mode string, clients int) row {
	f := op(t, mode)
	load.Run(ctx, 1, min(time.Second, o.duration), f)
	dbPID := env.ServerPID()
	app0, db0, stmts0 := load.CPUOrZero(0), load.CPUOrZero(dbPID), statements(ctx, env)
	res := load.Run(ctx, clients, o.duration, f)
	r := row{runs: t.desk.Seed.Runs, clients: clients, mode: mode, res: res}
	if res.Requests > 0 {
		n := time.Duration(res.Requests)
		r.appCPU = (load.CPUOrZero(0) - app0) / n
		if dbPID > 0 {
			r.dbCPU = (load.CPUOrZero(dbPID) - db0) / n
		}
		r.statements = float64(statements(ctx, env)-stmts0-1) / float64(n)
	}
	if res.FirstError != nil {
		fmt.Printf("#   first error: %v\n", res.FirstError)
	}
	return r
}

// statements is the server's count of statements clients sent (status Questions, this read
// included), 0 when it cannot be read.
func statements(ctx context.Context, env *benchenv.Env) int64 {
	var name string
	var n int64
	if err := env.Admin().QueryRowContext(ctx, `SHOW GLOBAL STATUS LIKE 'Questions'`).Scan(&name, &n); err != nil {
		return 0
	}
	return n
}

// report prints, for each mode and client count, each size's best p99 (the round least
// disturbed by other load) with its p50, CPU per request and statements, and the largest
// desk's p99 and CPU over the smallest's (the goal: 0.75–1.25).
func report(rows []row, o options) {
	type key struct {
		mode    string
		clients int
	}
	best := map[key]map[int]row{}
	var keys []key
	for _, r := range rows {
		k := key{r.mode, r.clients}
		if best[k] == nil {
			best[k] = map[int]row{}
			keys = append(keys, k)
		}
		if b, ok := best[k][r.runs]; !ok || r.res.P99 < b.res.P99 {
			best[k][r.runs] = r
		}
	}
	sizes := slices.Clone(o.sizes)
	slices.Sort(sizes)
	fmt.Println()
	fmt.Println("| mode | clients | runs | p50 | p99 | req/s | CPU/req app + db | statements/req | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range keys {
		for _, n := range sizes {
			r, ok := best[k][n]
			if !ok {
				continue
			}
			fmt.Printf("| %s | %d | %d | %s | %s | %.0f | %s | %.2f | %d |\n", k.mode, k.clients, n, load.Ms(r.res.P50),
				load.Ms(r.res.P99), r.res.PerSecond, load.Ms(r.appCPU+r.dbCPU), r.statements, r.res.Errors)
		}
	}
	fmt.Println()
	fmt.Printf("| mode | clients | p99 %d / %d runs | CPU/req %d / %d runs |\n", sizes[len(sizes)-1], sizes[0], sizes[len(sizes)-1], sizes[0])
	fmt.Println("|---|---:|---:|---:|")
	for _, k := range keys {
		small, ok1 := best[k][sizes[0]]
		large, ok2 := best[k][sizes[len(sizes)-1]]
		if !ok1 || !ok2 || small.res.P99 == 0 || small.appCPU+small.dbCPU == 0 {
			continue
		}
		fmt.Printf("| %s | %d | %.2f | %.2f |\n", k.mode, k.clients, float64(large.res.P99)/float64(small.res.P99),
			float64(large.appCPU+large.dbCPU)/float64(small.appCPU+small.dbCPU))
	}
}
