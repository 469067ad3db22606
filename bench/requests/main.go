// Command requests measures how agents that run elsewhere reach the desk's people: -calls
// held MCP request_approval calls on one server process (its RSS, the time from a person's
// decision to its held call's answer, CPU per held call), and the request path over HTTP
// (POST /api/v1/requests, a person's approval on the run page, the long-poll's answer)
// against the raw-SQL floor of the same statements, side by side in one process, in rounds
// (goals: RSS ≤ 200 MiB and p99 ≤ 500 ms with 500 held calls; floor ÷ path ≤ 2.0×).
//
// The held phase serves the application in a child process (this command with -serve), so
// the server's RSS and CPU are its own, apart from the MCP clients'; the path phases run the
// application in this process, as bench/submit does, with its round trips counted.
//
//	go run ./bench/requests -calls 500 -duration 6s -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
)

// options are the command's flags.
type options struct {
	phases   []string
	calls    int
	runs     int
	gap      time.Duration
	quiet    time.Duration
	wake     time.Duration
	duration time.Duration
	rounds   int
	clients  int
	people   int
	server   benchcmd.Server
	serve    string
	verbose  bool
}

// The phases: held MCP calls, the request path over HTTP and its floor.
const (
	phaseHeld  = "held"
	phaseHTTP  = "http"
	phaseFloor = "floor"
)

func main() {
	if err := benchcmd.RaiseFileLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "requests:", err)
	}
	benchcmd.Main("requests", parseFlags, run)
}

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("requests", flag.ContinueOnError)
	phases := f.String("phases", "held,floor,http", "phases: held (MCP calls held on a child server), then floor and http alternating each round")
	f.IntVar(&o.calls, "calls", 500, "MCP request_approval calls held at once (one service account each)")
	f.IntVar(&o.runs, "runs", 10000, "runs on the desk (10 % waiting), besides the requests")
	f.DurationVar(&o.gap, "gap", 20*time.Millisecond, "pause between a person's decisions of the held calls")
	f.DurationVar(&o.quiet, "quiet", 20*time.Second, "quiet time measured with and without the calls held (a held call checks its token every 15 s)")
	f.DurationVar(&o.wake, "wake-interval", 0, "serve's --wake-interval (0: its default, 500ms)")
	f.DurationVar(&o.duration, "duration", 6*time.Second, "load time per path phase")
	f.IntVar(&o.rounds, "rounds", 3, "how often each path phase runs, alternating")
	f.IntVar(&o.clients, "clients", 256, "concurrent agents of the path phases (enough that the long-polls' waits for the hall's poll do not bound the rate)")
	f.IntVar(&o.people, "people", 16, "signed-in people deciding the path's requests, each one at a time")
	o.server.Flags(f, benchenv.DefaultDataDir(), 1024)
	f.BoolVar(&o.verbose, "v", false, "log the application's warnings")
	f.StringVar(&o.serve, "serve", "", "internal: serve the desk at this DSN and print its URL")
	if err := f.Parse(args); err != nil {
		return o, err
	}
	for _, p := range strings.Split(*phases, ",") {
		switch p {
		case phaseHeld, phaseHTTP, phaseFloor:
			o.phases = append(o.phases, p)
		default:
			return o, fmt.Errorf("-phases: unknown phase %q", p)
		}
	}
	if o.calls < 1 || o.clients < 1 || o.people < 1 || o.rounds < 1 {
		return o, fmt.Errorf("-calls, -clients, -people and -rounds must be positive")
	}
	return o, nil
}

func run(ctx context.Context, o options) error {
	if o.serve != "" {
		return benchapp.ServeChild(ctx, benchapp.Options{DSN: o.serve, MaxWaiters: o.calls + 100, WakeInterval: o.wake})
	}
	level := slog.LevelError
	if o.verbose {
		level = slog.LevelWarn
	}
	env, log, err := o.server.Start(ctx, level)
	if err != nil {
		return err
	}
	defer env.Close()
	d, err := newDesk(ctx, env, o)
	if err != nil {
		return err
	}
	defer d.close()
	fmt.Printf("# %s\n# requests: %d held calls, %d path clients, %d people, %s per phase, %d rounds, GOMAXPROCS=%d, %s, load average %s\n",
		env.Settings(ctx), o.calls, o.clients, o.people, o.duration, o.rounds, goruntime.GOMAXPROCS(0), goruntime.Version(), benchcmd.LoadAverage())
	var path []string
	for _, p := range o.phases {
		if p == phaseHeld {
			if err := held(ctx, o, d); err != nil {
				return err
			}
			continue
		}
		path = append(path, p)
	}
	if len(path) == 0 {
		return nil
	}
	b, err := newPathBench(ctx, o, env, d, log)
	if err != nil {
		return err
	}
	defer b.close()
	results, err := benchcmd.Rounds(o.rounds, path, func(p string, round int) (result, error) { return b.phase(ctx, p, round) })
	if err != nil {
		return err
	}
	printTable(results)
	return nil
}

// since is the time from t, for the log lines.
func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }
