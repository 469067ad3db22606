// Command submit measures sustained input submissions per second on a desk whose waiting
// runs all wait for the refund details form of configuration bench-input (whose script
// completes right after the form): through HTTP (session, CSRF, coercion and validation,
// claim, decision, event; the continuation runs on the worker pool with the scripted model
// and the in-process tool, then settles), through Runtime.SubmitInput directly, and the
// raw-SQL floor of the same transitions (claim UPDATE, decision INSERT, event INSERT at
// MAX+1, settle UPDATE) issued with database/sql, and that floor with the continuation's
// tool and llm events written in the settle's transaction (floor-events: the rows the real
// path leaves), and the floor of all three transitions the real path commits (floor-transitions:
// claim, checkpoint after the tool call and settle, each with its event in its transaction),
// side by side in one process, in rounds. The suspend and suspend-notify phases (not run by
// default: -phases suspend,suspend-notify) measure the store's suspend without and with one
// notification configured (suspend.go). The runtime-full and http-full phases (not run by
// default) are runtime and http with bench-input at privacy: full, each step's content kept
// beside its event; the table gives their ratio to the metadata phases. The quorum2 and
// quorum2-first phases (not run by default) decide runs that need two approvals by two
// people's votes over HTTP, and cast the first vote alone (quorum.go).
//
// A phase's rate counts only runs that settled: after the load stops, the phase waits for the
// worker pool to finish what was claimed and divides by the whole time.
//
//	go run ./bench/submit -duration 10s -rounds 2
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"strings"
	"time"

	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/runtime/engine"
)

type options struct {
	runs     int
	duration time.Duration
	rounds   int
	clients  int
	workers  int
	phases   []string
	server   benchcmd.Server
	cpuprof  string
	verbose  bool
	// maxInFlight is benchapp.Options.MaxInFlight.
	maxInFlight int
	// spread are DSNs of further Galera nodes: the http phase's clients are spread round-robin
	// over one application per node (RUNSDESK_DSN's node first).
	spread []string
	// seal builds the applications with a fresh key and seals the desk's stored state first.
	seal bool
}

func main() { benchcmd.Main("submit", parseFlags, run) }

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("submit", flag.ContinueOnError)
	f.IntVar(&o.runs, "runs", 60000, "waiting runs to seed (each phase consumes what it submits)")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "load time per phase")
	f.IntVar(&o.rounds, "rounds", 2, "how often each phase runs, alternating")
	f.IntVar(&o.clients, "clients", 8, "concurrent submitters")
	f.IntVar(&o.workers, "workers", engine.DefaultWorkers, "worker pool slots (default: serve's)")
	f.IntVar(&o.maxInFlight, "max-in-flight", 0, "serve's --max-in-flight: requests building responses at once (0: serve's default, 4 per CPU; -1: no admission gate)")
	phases := f.String("phases", "floor,floor-events,floor-transitions,runtime,http", "phases to run, in order, each round")
	o.server.Flags(f, benchenv.DefaultDataDir(), 1024)
	f.StringVar(&o.cpuprof, "cpuprofile", "", "directory for one CPU profile per phase and round")
	f.BoolVar(&o.verbose, "v", false, "log the application's warnings")
	f.BoolVar(&o.seal, "seal", false, "seal run state at rest (a fresh RUNSDESK_KEYS key); the seeded desk is sealed before the phases")
	spread := f.String("spread", "", "comma-separated DSNs (no database) of further Galera nodes: the http phase spreads its clients over one application per node")
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if *spread != "" {
		o.spread = strings.Split(*spread, ",")
	}
	for _, p := range strings.Split(*phases, ",") {
		switch p {
		case "floor", "floor-events", "floor-transitions", "runtime", "http", "runtime" + fullSuffix, "http" + fullSuffix, phaseSuspend, phaseSuspendNotify,
			phaseQuorum2, phaseQuorum2First:
			o.phases = append(o.phases, p)
		default:
			return o, fmt.Errorf("-phases: unknown phase %q", p)
		}
	}
	return o, nil
}

func run(ctx context.Context, o options) error {
	level := slog.LevelError
	if o.verbose {
		level = slog.LevelWarn
	}
	env, log, err := o.server.Start(ctx, level)
	if err != nil {
		return err
	}
	defer env.Close()
	kind := benchenv.KindSubmit
	if o.quorum() {
		kind = benchenv.KindQuorum
	}
	desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: kind, Runs: o.runs, Fresh: true})
	if err != nil {
		return err
	}
	fmt.Printf("# %s\n", env.Settings(ctx))
	fmt.Printf("# submit: %d clients, %d workers, %s per phase, %d rounds, GOMAXPROCS=%d, %s, load average %s\n",
		o.clients, o.workers, o.duration, o.rounds, goruntime.GOMAXPROCS(0), goruntime.Version(), benchcmd.LoadAverage())
	fmt.Printf("# desk %s: %d runs waiting for input, %d for two approvals, seeded in %s\n", desk.Name, desk.Seed.Input, desk.Seed.Approval,
		desk.Seed.Elapsed.Round(time.Millisecond))
	b, err := newBench(ctx, o, env, desk, log)
	if err != nil {
		return err
	}
	defer b.close()
	results, err := benchcmd.Rounds(o.rounds, o.phases, func(p string, round int) (result, error) { return b.phase(ctx, p, round) })
	if err != nil {
		return err
	}
	printTable(results)
	return nil
}
