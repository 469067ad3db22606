// Command inbox measures the inbox at several desk sizes: for each size it prepares (or
// reuses) a seeded desk, starts the whole application in-process on a loopback port, signs in
// one client per load goroutine, and for each scenario (first page, filtered page, deep
// keyset page; with -scenarios also the Mine tab and the assignee filter) runs the load for a fixed time and prints p50, p99, max and requests per
// second, with the process's resident memory idle and at its peak under load.
//
// Three modes: "store" calls Store.ListWaiting and Store.CountWaiting (the SQL alone);
// "runtime" calls Runtime.Inbox and Runtime.Counts (what the page does before rendering:
// the SQL plus decoding each pause); "http" requests GET /runs through the router, sessions
// and templates. The default, "auto", runs all three, http only where GET /runs exists.
//
// With -typo3 every size is also built beside a TYPO3 site (benchenv.DeskOptions.TYPO3:
// runsdesk's runs in its own renamed tables, the site's tx_nrllm_agentrun holding as many of
// the nr-llm extension's runs) and served as `serve --typo3` serves it; both layouts are
// measured in turn, and the report adds each page's figures beside TYPO3 over its own
// layout's.
//
//	go run ./bench/inbox -runs 1000,100000,1000000 -duration 15s
//	go run ./bench/inbox -runs 1000000 -mode http -clients 32 -typo3
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
)

// options are the command's flags.
type options struct {
	sizes    []int
	duration time.Duration
	interval time.Duration
	clients  []int
	modes    map[string]bool
	server   benchcmd.Server
	fresh    bool
	seedOnly bool
	cpuprof  string
	filter   string
	// scenarios are the pages measured, in scenarioNames' order.
	scenarios []string
	rounds    int
	memory    bool
	verbose   bool
	// maxInFlight is benchapp.Options.MaxInFlight.
	maxInFlight int
	// spread are DSNs of further Galera nodes: the http mode's clients are spread round-robin
	// over one application per node (RUNSDESK_DSN's node first).
	spread []string
	// typo3 measures every size in both layouts: its own and beside a TYPO3 site.
	typo3 bool
}

func main() { benchcmd.Main("inbox", parseFlags, run) }

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("inbox", flag.ContinueOnError)
	sizes := f.String("runs", "1000,100000,1000000", "comma-separated desk sizes (runs seeded, 10% waiting)")
	f.DurationVar(&o.duration, "duration", 15*time.Second, "load time per scenario")
	clients := f.String("clients", "1,32", "comma-separated numbers of concurrent signed-in clients")
	f.DurationVar(&o.interval, "interval", 0, "paced open loop: each client sends one request every interval, latency counted from the scheduled start (0: closed loop, back to back)")
	modes := f.String("mode", "auto", "comma-separated: store, runtime, http; auto = all three, http only where GET /runs exists")
	o.server.Flags(f, benchenv.DefaultDataDir(), 1024)
	f.BoolVar(&o.fresh, "fresh", false, "seed again even if a seeded desk exists")
	f.BoolVar(&o.seedOnly, "seed-only", false, "prepare the desks and stop")
	f.StringVar(&o.cpuprof, "cpuprofile", "", "directory for one CPU profile per size, mode and scenario")
	f.StringVar(&o.filter, "filter", "kind=input&configuration=refunds", "query string of the filtered page (http mode)")
	scenarios := f.String("scenarios", "first,filtered,deep", "comma-separated pages to measure: first, filtered, deep, mine (the Mine tab, ?assigned=me), assignee (?assignee=bench-reviewer, a colleague's runs)")
	f.IntVar(&o.rounds, "rounds", 2, "how often the whole sweep repeats (the summary keeps each size's best p99)")
	f.IntVar(&o.maxInFlight, "max-in-flight", 0, "serve's --max-in-flight: requests building responses at once (0: serve's default, 4 per CPU; -1: no admission gate)")
	spread := f.String("spread", "", "comma-separated DSNs (no database) of further Galera nodes: the http mode spreads its clients over one application per node")
	f.BoolVar(&o.memory, "memory", false, "instead of the latency sweep, measure this process's RSS serving the largest desk, idle and under load")
	f.BoolVar(&o.verbose, "v", false, "log the server's start and the application's warnings")
	f.BoolVar(&o.typo3, "typo3", false, "also build every size beside a TYPO3 site (runsdesk's runs in tx_runsdesk_run, as many extension runs in the site's tx_nrllm_agentrun) and measure both layouts in turn, with their ratio")
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if *spread != "" {
		o.spread = strings.Split(*spread, ",")
	}
	if o.interval < 0 {
		return o, fmt.Errorf("-interval: %s is negative", o.interval)
	}
	var err error
	if o.sizes, err = benchcmd.Numbers("runs", *sizes, 1); err != nil {
		return o, err
	}
	if o.clients, err = benchcmd.Numbers("clients", *clients, 1); err != nil {
		return o, err
	}
	for _, name := range scenarioNames {
		if slices.Contains(strings.Split(*scenarios, ","), name) {
			o.scenarios = append(o.scenarios, name)
		}
	}
	for _, s := range strings.Split(*scenarios, ",") {
		if !slices.Contains(scenarioNames, s) {
			return o, fmt.Errorf("-scenarios: %q is not one of %s", s, strings.Join(scenarioNames, ", "))
		}
	}
	o.modes = map[string]bool{}
	for _, m := range strings.Split(*modes, ",") {
		switch m {
		case "auto":
			o.modes["store"], o.modes["runtime"], o.modes["http"], o.modes["auto"] = true, true, true, true
		case "store", "runtime", "http":
			o.modes[m] = true
		default:
			return o, fmt.Errorf("-mode: %q is not store, runtime, http or auto", m)
		}
	}
	return o, nil
}

func run(ctx context.Context, o options) error {
	logLevel := slog.LevelError
	if o.verbose {
		logLevel = slog.LevelInfo
	}
	env, log, err := o.server.Start(ctx, logLevel)
	if err != nil {
		return err
	}
	defer env.Close()
	fmt.Printf("# %s\n", env.Settings(ctx))
	fmt.Printf("# inbox: %v clients, %s, %s per scenario, GOMAXPROCS=%d, %s, load average %s\n",
		o.clients, o.pacing(), o.duration, runtime.GOMAXPROCS(0), runtime.Version(), benchcmd.LoadAverage())
	var desks []*benchenv.Desk
	layouts := []bool{false}
	if o.typo3 {
		layouts = append(layouts, true)
	}
	for _, n := range o.sizes {
		for _, typo3 := range layouts {
			desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindInbox, Runs: n, Fresh: o.fresh,
				Progress: progress("runs", n), TYPO3: typo3, SiteProgress: progress("extension runs in the site's table", n)})
			if err != nil {
				return err
			}
			reportDesk(desk)
			desks = append(desks, desk)
		}
	}
	if o.seedOnly {
		return nil
	}
	if o.memory {
		m, err := measureMemory(ctx, o, desks[len(desks)-1], log)
		if err != nil {
			return err
		}
		printMemory(m)
		return nil
	}
	ts, err := startTargets(ctx, o, desks, log)
	if err != nil {
		return err
	}
	dbPID := env.ServerPID()
	if dbPID == 0 {
		dbPID = -1
	}
	rows, err := measureAll(ctx, o, env, ts, dbPID)
	closeTargets(ts)
	if len(rows) > 0 {
		printTable(rows)
	}
	return err
}

func progress(what string, total int) func(int) {
	last := time.Now()
	return func(done int) {
		if time.Since(last) > 5*time.Second || done == total {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "seeding: %d/%d %s\n", done, total, what)
		}
	}
}

func reportDesk(d *benchenv.Desk) {
	how := fmt.Sprintf("seeded in %s", d.Seed.Elapsed.Round(time.Millisecond))
	if d.Reused {
		how = fmt.Sprintf("reused (seeded in %s)", d.Seed.Elapsed.Round(time.Millisecond))
	}
	fmt.Printf("# desk %s: %d runs, %d waiting for approval, %d waiting for input, %d events; %s\n",
		d.Name, d.Seed.Runs, d.Seed.Approval, d.Seed.Input, d.Seed.Events, how)
	if d.TYPO3 {
		fmt.Printf("#   beside a TYPO3 site whose tx_nrllm_agentrun holds %d extension runs, %d waiting for approval, %d for input (seeded in %s)\n",
			d.Site.Runs, d.Site.Approval, d.Site.Input, d.Site.Elapsed.Round(time.Millisecond))
	}
}
