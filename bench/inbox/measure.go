package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
)

// modeOrder is the order modes run in.
var modeOrder = []string{"store", "runtime", "http"}

// row is one measurement: a desk, mode, scenario, client count and round.
type row struct {
	desk             deskKey
	clients, round   int
	mode, scenario   string
	res              load.Result
	bytesPerResponse int
	// appCPU and dbCPU are the CPU time of this process and of the database server per
	// request: unlike latency, they hardly depend on what else loads the machine.
	appCPU, dbCPU time.Duration
	// allocs (heap allocations of this process) and statements (sent to the server by any
	// client) per request do not depend on it at all.
	allocs, statements float64
}

// scenario is one kind of inbox request, as an operation of a load client.
type scenario struct {
	name string
	op   func(ctx context.Context, client int) error
	// bytes is the size of one response (http mode), for the report.
	bytes int
}

// target is one desk with its application and scenarios per mode.
type target struct {
	desk *benchenv.Desk
	app  *benchapp.App
	// others are the desk's applications on the -spread nodes (http mode).
	others []*benchapp.App
	modes  map[string][]scenario
}

// startTargets starts one application per desk, all in this process, and prepares each
// mode's scenarios (http only where GET /runs answers, unless -mode http demands it).
func startTargets(ctx context.Context, o options, desks []*benchenv.Desk, log *slog.Logger) ([]*target, error) {
	var ts []*target
	for _, d := range desks {
		app, err := benchapp.Start(ctx, benchapp.Options{DSN: d.DSN, Logger: log, MaxInFlight: o.maxInFlight, TYPO3: d.TYPO3})
		if err != nil {
			closeTargets(ts)
			return nil, err
		}
		t := &target{desk: d, app: app, modes: map[string][]scenario{}}
		ts = append(ts, t)
		deep, err := deepCursor(ctx, app, d)
		if err != nil {
			closeTargets(ts)
			return nil, err
		}
		for _, mode := range []string{"store", "runtime"} {
			if o.modes[mode] {
				t.modes[mode] = runtimeScenarios(app, d, deep, mode == "store", o.scenarios)
			}
		}
		if !o.modes["http"] {
			continue
		}
		bases := []string{app.URL}
		for _, dsn := range o.spread {
			other, err := benchapp.StartOn(ctx, benchapp.Options{Logger: log, MaxInFlight: o.maxInFlight, TYPO3: d.TYPO3}, dsn, d.Name)
			if err != nil {
				closeTargets(ts)
				return nil, err
			}
			t.others = append(t.others, other)
			bases = append(bases, other.URL)
		}
		sc, err := httpScenarios(ctx, o, bases, deep)
		switch {
		case err == nil:
			t.modes["http"] = sc
		case !o.modes["auto"]:
			closeTargets(ts)
			return nil, err
		default:
			fmt.Printf("# http mode skipped on %s: %v\n", d.Name, err)
		}
	}
	return ts, nil
}

func closeTargets(ts []*target) {
	for _, t := range ts {
		for _, a := range append([]*benchapp.App{t.app}, t.others...) {
			if err := a.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "inbox: close:", err)
			}
		}
	}
}

// measureAll runs every mode, scenario and client count on every desk side by side: the
// desks take turns for each combination, so load from elsewhere on the machine hits them
// alike, and the whole sweep repeats o.rounds times.
func measureAll(ctx context.Context, o options, env *benchenv.Env, ts []*target, dbPID int) ([]row, error) {
	var rows []row
	for round := 1; round <= o.rounds; round++ {
		for _, mode := range modeOrder {
			for i := range o.scenarios {
				for _, clients := range o.clients {
					for _, t := range ts {
						scs := t.modes[mode]
						if i >= len(scs) {
							continue
						}
						if err := env.Quiesce(ctx); err != nil {
							return nil, err
						}
						r, err := runScenario(ctx, o, env, t.desk, mode, scs[i], clients, dbPID)
						if err != nil {
							return nil, err
						}
						r.round = round
						fmt.Printf("round=%d runs=%d layout=%s mode=%s scenario=%s clients=%d %s cpu/req app=%s db=%s allocs/req=%.0f statements/req=%.2f load=%s\n",
							round, r.desk.runs, r.desk.layout(), mode, r.scenario, clients, r.res, load.Ms(r.appCPU), load.Ms(r.dbCPU), r.allocs, r.statements, benchcmd.LoadAverage())
						if r.res.FirstError != nil {
							fmt.Printf("#   first error: %v\n", r.res.FirstError)
						}
						rows = append(rows, r)
						if ctx.Err() != nil {
							return rows, errors.New("interrupted")
						}
					}
				}
			}
		}
	}
	return rows, nil
}

func runScenario(ctx context.Context, o options, env *benchenv.Env, desk *benchenv.Desk, mode string, sc scenario, clients, dbPID int) (row, error) {
	stop, err := startProfile(o, fmt.Sprintf("inbox-%d-%s-%s-%s-%d.pprof", desk.Seed.Runs, layoutName(desk.TYPO3), mode, sc.name, clients))
	if err != nil {
		return row{}, err
	}
	defer stop()
	load.Run(ctx, 1, min(time.Second, o.duration), sc.op)
	app0, db0, allocs0, stmts0 := load.CPUOrZero(0), load.CPUOrZero(dbPID), mallocs(), benchcmd.Statements(ctx, env.Admin())
	res := o.drive(ctx, clients, sc.op)
	r := row{desk: deskKey{runs: desk.Seed.Runs, typo3: desk.TYPO3}, clients: clients, mode: mode, scenario: sc.name, res: res,
		bytesPerResponse: sc.bytes}
	if res.Requests > 0 {
		n := time.Duration(res.Requests)
		r.appCPU = (load.CPUOrZero(0) - app0) / n
		if dbPID > 0 {
			r.dbCPU = (load.CPUOrZero(dbPID) - db0) / n
		}
		r.allocs = float64(mallocs()-allocs0) / float64(n)
		r.statements = float64(benchcmd.Statements(ctx, env.Admin())-stmts0-1) / float64(n)
	}
	return r, nil
}

// mallocs is the number of heap allocations this process made so far.
func mallocs() uint64 {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.Mallocs
}

// drive loads op from clients for o.duration: paced every o.interval per client when it is
// set, else in a closed loop.
func (o options) drive(ctx context.Context, clients int, op load.Op) load.Result {
	if o.interval > 0 {
		return load.Paced(ctx, clients, o.interval, o.duration, op)
	}
	return load.Run(ctx, clients, o.duration, op)
}

// pacing describes the load loop for the report.
func (o options) pacing() string {
	if o.interval > 0 {
		return fmt.Sprintf("paced: one request per client every %s", o.interval)
	}
	return "closed loop"
}

func startProfile(o options, name string) (func(), error) {
	if o.cpuprof == "" {
		return func() {}, nil
	}
	return benchcmd.CPUProfile(o.cpuprof, name)
}

// memory is the resident memory of the process serving one desk alone.
type memory struct {
	runs       int
	idle, peak int64
	res        load.Result
}

// measureMemory serves t's desk alone in this process: RSS after start-up and a GC (idle),
// then the peak RSS while the largest client count loads the first inbox page (http if
// available, else runtime). The load clients live in this process too, so both figures are
// upper bounds of what `serve` alone would hold.
func measureMemory(ctx context.Context, o options, desk *benchenv.Desk, log *slog.Logger) (memory, error) {
	ts, err := startTargets(ctx, o, []*benchenv.Desk{desk}, log)
	if err != nil {
		return memory{}, err
	}
	defer closeTargets(ts)
	t := ts[0]
	scs := t.modes["http"]
	if len(scs) == 0 {
		scs = t.modes["runtime"]
	}
	if len(scs) == 0 {
		return memory{}, errors.New("memory: neither http nor runtime mode is enabled")
	}
	debug.FreeOSMemory()
	time.Sleep(time.Second)
	idle, err := load.RSS(0)
	if err != nil {
		return memory{}, err
	}
	clients := 0
	for _, c := range o.clients {
		clients = max(clients, c)
	}
	sampler := load.SamplePeak(0, 20*time.Millisecond)
	res := o.drive(ctx, clients, scs[0].op)
	return memory{runs: desk.Seed.Runs, idle: idle, peak: sampler.Stop(), res: res}, nil
}
