package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
)

// row is one line of the result table.
type row struct {
	runs             int
	mode, scenario   string
	res              load.Result
	rssIdle, rssPeak int64
	bytesPerResponse int
}

// scenario is one kind of inbox request, as an operation of a load client.
type scenario struct {
	name string
	op   func(ctx context.Context, client int) error
	// bytes is the size of one response (http mode), for the report.
	bytes int
}

func measure(ctx context.Context, o options, desk *benchenv.Desk, log *slog.Logger) ([]row, error) {
	app, err := benchapp.Start(ctx, benchapp.Options{DSN: desk.DSN, Logger: log})
	if err != nil {
		return nil, err
	}
	defer app.Close()
	goruntime.GC()
	idle, err := load.RSS(0)
	if err != nil {
		return nil, err
	}
	fmt.Printf("# desk %s: app serving on %s, RSS idle %s\n", desk.Name, app.URL, load.MiB(idle))
	var all []scenario
	modes := map[string][]scenario{}
	if o.mode != "http" {
		sc, err := runtimeScenarios(ctx, app, desk)
		if err != nil {
			return nil, err
		}
		modes["runtime"] = sc
	}
	if o.mode != "runtime" {
		sc, err := httpScenarios(ctx, o, app)
		switch {
		case err == nil:
			modes["http"] = sc
		case o.mode == "http":
			return nil, err
		default:
			fmt.Printf("# http mode skipped: %v\n", err)
		}
	}
	var rows []row
	for _, mode := range []string{"runtime", "http"} {
		all = modes[mode]
		for _, sc := range all {
			r, err := runScenario(ctx, o, desk, mode, sc, idle)
			if err != nil {
				return nil, err
			}
			fmt.Printf("runs=%d mode=%s scenario=%s %s rss_peak=%s\n", r.runs, mode, sc.name, r.res, load.MiB(r.rssPeak))
			if r.res.FirstError != nil {
				fmt.Printf("#   first error: %v\n", r.res.FirstError)
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

func runScenario(ctx context.Context, o options, desk *benchenv.Desk, mode string, sc scenario, idle int64) (row, error) {
	if o.cpuprof != "" {
		if err := os.MkdirAll(o.cpuprof, 0o755); err != nil {
			return row{}, fmt.Errorf("cpuprofile: %w", err)
		}
		f, err := os.Create(filepath.Join(o.cpuprof, fmt.Sprintf("inbox-%d-%s-%s.pprof", desk.Seed.Runs, mode, sc.name)))
		if err != nil {
			return row{}, fmt.Errorf("cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return row{}, fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	load.Run(ctx, o.clients, min(2*time.Second, o.duration), sc.op)
	peak := load.SamplePeak(0, 50*time.Millisecond)
	res := load.Run(ctx, o.clients, o.duration, sc.op)
	return row{runs: desk.Seed.Runs, mode: mode, scenario: sc.name, res: res, rssIdle: idle,
		rssPeak: peak.Stop(), bytesPerResponse: sc.bytes}, nil
}

func printTable(rows []row) {
	fmt.Println()
	fmt.Println("| runs | mode | scenario | requests | p50 | p99 | max | req/s | errors | response | RSS idle | RSS peak |")
	fmt.Println("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		size := "-"
		if r.bytesPerResponse > 0 {
			size = fmt.Sprintf("%.1f KiB", float64(r.bytesPerResponse)/1024)
		}
		fmt.Printf("| %d | %s | %s | %d | %s | %s | %s | %.0f | %d | %s | %s | %s |\n", r.runs, r.mode, r.scenario,
			r.res.Requests, load.Ms(r.res.P50), load.Ms(r.res.P99), load.Ms(r.res.Max), r.res.PerSecond,
			r.res.Errors, size, load.MiB(r.rssIdle), load.MiB(r.rssPeak))
	}
}
