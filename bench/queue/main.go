// Command queue measures the queue's health (GET /queue, db.Store.QueueHealth) on desks of
// several sizes that hold the same waiting runs and the same decisions in the last week, so
// that what differs is only the runs (and older decisions) stored: its cost should follow the
// waiting runs and the week's decisions, not the desk's size (goal: p99 and CPU at the largest
// desk within ±25 % of the smallest's, at most 8 statements per page).
//
// Each desk is seeded once (benchenv, kind queue) and shaped on every start: the waiting runs
// beyond -waiting are finished, the seeded decisions moved out of the week, and -decisions
// decisions of the week (people, rules, service accounts, expiries, with their pause's start)
// and -failed failed notifications written afresh. Two modes: "store" calls
// Store.QueueHealth with the per-person figures (the SQL alone), "http" requests GET /queue as
// the bench admin through router, session and templates.
//
//	go run ./bench/queue -runs 1000,1000000 -duration 5s -clients 1,8 -rounds 2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
)

// options are the command's flags.
type options struct {
	sizes     []int
	clients   []int
	modes     []string
	waiting   int
	decisions int
	failed    int
	duration  time.Duration
	rounds    int
	server    benchcmd.Server
	fresh     bool
}

func main() { benchcmd.Main("queue", parseFlags, run) }

func parseFlags(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("queue", flag.ContinueOnError)
	sizes := f.String("runs", "1000,1000000", "comma-separated desk sizes (runs stored)")
	clients := f.String("clients", "1,8", "comma-separated numbers of concurrent clients")
	modes := f.String("mode", "store,http", "comma-separated: store, http")
	f.IntVar(&o.waiting, "waiting", 500, "waiting runs on every desk (at most half of the smallest desk)")
	f.IntVar(&o.decisions, "decisions", 5000, "decisions in the last 7 days on every desk")
	f.IntVar(&o.failed, "failed", 50, "failed notifications in the last 7 days on every desk")
	f.DurationVar(&o.duration, "duration", 5*time.Second, "load time per measurement")
	f.IntVar(&o.rounds, "rounds", 2, "how often the whole sweep repeats (the summary keeps each size's best p99)")
	o.server.Flags(f, benchenv.DefaultDataDir(), 1024)
	f.BoolVar(&o.fresh, "fresh", false, "seed again even if a seeded desk exists")
	if err := f.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.sizes, err = benchcmd.Numbers("runs", *sizes, 1); err != nil {
		return o, err
	}
	if o.clients, err = benchcmd.Numbers("clients", *clients, 1); err != nil {
		return o, err
	}
	for _, m := range strings.Split(*modes, ",") {
		if m != "store" && m != "http" {
			return o, fmt.Errorf("-mode: %q is not store or http", m)
		}
		o.modes = append(o.modes, m)
	}
	switch {
	case o.waiting <= 0 || 2*o.waiting > minOf(o.sizes):
		return o, fmt.Errorf("-waiting %d: must be positive and at most half of the smallest desk", o.waiting)
	case o.decisions < 0 || o.failed < 0 || o.rounds <= 0:
		return o, errors.New("-decisions, -failed and -rounds must not be negative (rounds: positive)")
	}
	return o, nil
}

func minOf(ns []int) int {
	m := ns[0]
	for _, n := range ns {
		m = min(m, n)
	}
	return m
}

// target is one shaped desk with its application.
type target struct {
	desk *benchenv.Desk
	app  *benchapp.App
	// clients are signed in as the bench admin (http mode).
	clients []*benchapp.Client
}

func run(ctx context.Context, o options) error {
	env, log, err := o.server.Start(ctx, slog.LevelError)
	if err != nil {
		return err
	}
	defer env.Close()
	fmt.Printf("# %s\n", env.Settings(ctx))
	fmt.Printf("# queue: %d waiting runs, %d decisions and %d failed notifications in the week on every desk; %v clients, %s per measurement, load average %s\n",
		o.waiting, o.decisions, o.failed, o.clients, o.duration, benchcmd.LoadAverage())
	var ts []*target
	defer func() {
		for _, t := range ts {
			if err := t.app.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "queue: close:", err)
			}
		}
	}()
	for _, n := range o.sizes {
		percent := min(100, max(1, (100*o.waiting+n-1)/n))
		d, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindQueue, Runs: n, WaitingPercent: percent, Fresh: o.fresh})
		if err != nil {
			return err
		}
		app, err := benchapp.Start(ctx, benchapp.Options{DSN: d.DSN, Logger: log})
		if err != nil {
			return err
		}
		t := &target{desk: d, app: app}
		ts = append(ts, t)
		took := time.Now()
		if err := shape(ctx, app.Pool, o, time.Now().Unix()); err != nil {
			return fmt.Errorf("shape %s: %w", d.Name, err)
		}
		fmt.Printf("# desk %s: %d runs (reused %v), shaped in %s\n", d.Name, d.Seed.Runs, d.Reused, time.Since(took).Round(time.Millisecond))
		if slicesContain(o.modes, "http") {
			if t.clients, err = benchapp.SignIn(ctx, []string{app.URL}, maxOf(o.clients)); err != nil {
				return err
			}
		}
	}
	var rows []row
	for round := 1; round <= o.rounds; round++ {
		for _, mode := range o.modes {
			for _, clients := range o.clients {
				for _, t := range ts {
					if err := env.Quiesce(ctx); err != nil {
						return err
					}
					r := measure(ctx, o, env, t, mode, clients)
					r.round = round
					fmt.Println(r)
					rows = append(rows, r)
					if ctx.Err() != nil {
						return errors.New("interrupted")
					}
				}
			}
		}
	}
	report(rows, o)
	return nil
}

func maxOf(ns []int) int {
	m := ns[0]
	for _, n := range ns {
		m = max(m, n)
	}
	return m
}

func slicesContain(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// op is one call of mode on t: the store's read with the people, or the page as the admin.
func op(t *target, mode string) load.Op {
	if mode == "store" {
		return func(ctx context.Context, _ int) error {
			h, err := t.app.Store.QueueHealth(ctx, time.Now().Unix(), true)
			if err == nil && len(h.Rows) < 2 {
				err = errors.New("no configuration row")
			}
			return err
		}
	}
	return func(ctx context.Context, c int) error {
		status, _, err := t.clients[c].Get(ctx, "/queue")
		if err == nil && status != 200 {
			err = fmt.Errorf("GET /queue: status %d", status)
		}
		return err
	}
}
