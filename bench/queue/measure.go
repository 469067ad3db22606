package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"runsdesk/bench/benchcmd"
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
	// reads are the server's row reads per request by index (Handler_read_key + _next) and
	// from temporary tables and scans (Handler_read_rnd_next): counts no other load moves.
	indexReads, scanReads float64
}

// String is the measurement as one log line.
func (r row) String() string {
	return fmt.Sprintf("round=%d runs=%d mode=%s clients=%d %s cpu/req app=%s db=%s statements/req=%.2f index-reads/req=%.0f scan-reads/req=%.0f load=%s",
		r.round, r.runs, r.mode, r.clients, r.res, load.Ms(r.appCPU), load.Ms(r.dbCPU), r.statements, r.indexReads, r.scanReads, benchcmd.LoadAverage())
}

// measure warms mode on t for a second, then drives it from clients for o.duration.
func measure(ctx context.Context, o options, env *benchenv.Env, t *target, mode string, clients int) row {
	f := op(t, mode)
	load.Run(ctx, 1, min(time.Second, o.duration), f)
	dbPID := env.ServerPID()
	app0, db0, stmts0, reads0 := load.CPUOrZero(0), load.CPUOrZero(dbPID), benchcmd.Statements(ctx, env.Admin()), handlerReads(ctx, env)
	res := load.Run(ctx, clients, o.duration, f)
	r := row{runs: t.desk.Seed.Runs, clients: clients, mode: mode, res: res}
	if res.Requests > 0 {
		n := time.Duration(res.Requests)
		r.appCPU = (load.CPUOrZero(0) - app0) / n
		if dbPID > 0 {
			r.dbCPU = (load.CPUOrZero(dbPID) - db0) / n
		}
		r.statements = float64(benchcmd.Statements(ctx, env.Admin())-stmts0-1) / float64(n)
		reads := handlerReads(ctx, env)
		r.indexReads = float64(reads[0]-reads0[0]) / float64(n)
		r.scanReads = float64(reads[1]-reads0[1]) / float64(n)
	}
	if res.FirstError != nil {
		fmt.Printf("#   first error: %v\n", res.FirstError)
	}
	return r
}

// handlerReads are the server's row reads by index (Handler_read_key + Handler_read_next) and
// by scan (Handler_read_rnd_next: temporary tables, table scans) so far; zeros when they cannot
// be read. SHOW STATUS itself reads a few rows by scan.
func handlerReads(ctx context.Context, env *benchenv.Env) [2]int64 {
	var out [2]int64
	rows, err := env.Admin().QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_key', 'Handler_read_next', 'Handler_read_rnd_next')`)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if rows.Scan(&name, &n) != nil {
			return [2]int64{}
		}
		if name == "Handler_read_rnd_next" {
			out[1] += n
		} else {
			out[0] += n
		}
	}
	return out
}

// report prints, for each mode and client count, each size's best round (the least p99: the
// round least disturbed by other load) with its p50, CPU per request, statements and row reads;
// then the largest desk's figures over the smallest's (the goal: 0.75–1.25), the CPU as the
// least per request any round measured.
func report(rows []row, o options) {
	type key struct {
		mode    string
		clients int
	}
	best := map[key]map[int]row{}
	cpu := map[key]map[int]time.Duration{}
	var keys []key
	for _, r := range rows {
		k := key{r.mode, r.clients}
		if best[k] == nil {
			best[k], cpu[k] = map[int]row{}, map[int]time.Duration{}
			keys = append(keys, k)
		}
		if b, ok := best[k][r.runs]; !ok || r.res.P99 < b.res.P99 {
			best[k][r.runs] = r
		}
		if c, ok := cpu[k][r.runs]; r.res.Requests > 0 && (!ok || r.appCPU+r.dbCPU < c) {
			cpu[k][r.runs] = r.appCPU + r.dbCPU
		}
	}
	sizes := slices.Clone(o.sizes)
	slices.Sort(sizes)
	fmt.Println()
	fmt.Println("| mode | clients | runs | p50 | p99 | req/s | CPU/req app + db (least) | statements/req | index reads/req | scan reads/req | errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range keys {
		for _, n := range sizes {
			r, ok := best[k][n]
			if !ok {
				continue
			}
			fmt.Printf("| %s | %d | %d | %s | %s | %.0f | %s | %.2f | %.0f | %.0f | %d |\n", k.mode, k.clients, n, load.Ms(r.res.P50),
				load.Ms(r.res.P99), r.res.PerSecond, load.Ms(cpu[k][n]), r.statements, r.indexReads, r.scanReads, r.res.Errors)
		}
	}
	small, large := sizes[0], sizes[len(sizes)-1]
	fmt.Println()
	fmt.Printf("| mode | clients | %d / %d runs: p50 | p99 | CPU/req | index reads/req |\n", large, small)
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	for _, k := range keys {
		s, ok1 := best[k][small]
		l, ok2 := best[k][large]
		if !ok1 || !ok2 {
			continue
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s |\n", k.mode, k.clients, ratio(float64(l.res.P50), float64(s.res.P50)),
			ratio(float64(l.res.P99), float64(s.res.P99)), ratio(float64(cpu[k][large]), float64(cpu[k][small])), ratio(l.indexReads, s.indexReads))
	}
}
