package main

import (
	"fmt"
	"sort"

	"runsdesk/bench/load"
)

// printTable prints every phase and round, then each phase's best round and its ratios to the
// best of the floors (floor and floor-transitions) that ran.
func printTable(rs []result) {
	fmt.Println()
	fmt.Println("| phase | round | settled | time | settled/s | call p50 | call p99 | call errors | statements/run | round trips/run | commits/run | writes/run | CPU/run app | CPU/run db |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	best, cpu := map[string]float64{}, map[string]float64{}
	for _, r := range rs {
		if c := (r.appCPU + r.dbCPU).Seconds(); c > 0 && (cpu[r.phase] == 0 || c < cpu[r.phase]) {
			cpu[r.phase] = c
		}
		fmt.Printf("| %s | %d | %d | %.1f s | %.0f | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %s | %s |\n", r.phase, r.round, r.settled,
			r.total.Seconds(), r.perSecond, load.Ms(r.res.P50), load.Ms(r.res.P99), r.res.Errors,
			r.statements, r.trips, r.commits, r.writes, load.Ms(r.appCPU), load.Ms(r.dbCPU))
		best[r.phase] = max(best[r.phase], r.perSecond)
	}
	names := make([]string, 0, len(best))
	for n := range best {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Println()
	for _, n := range names {
		fmt.Printf("%s: best %.0f settled/s", n, best[n])
		for _, f := range []string{"floor", "floor-transitions"} {
			if best[f] > 0 && n != f {
				fmt.Printf(", %s/%s = %.2f×", f, n, best[f]/best[n])
			}
		}
		fmt.Println()
	}
	suspendRatio(rs)
	quorumRatio(rs, best)
	for _, n := range []string{"runtime", "http"} {
		if best[n] > 0 && best[n+fullSuffix] > 0 {
			fmt.Printf("privacy full: %s/%s = %.2f× (metadata's rate over full's), CPU per run (app + db, best round) %s/%s = %.2f×\n",
				n, n+fullSuffix, best[n]/best[n+fullSuffix], n+fullSuffix, n, cpu[n+fullSuffix]/max(cpu[n], 1e-9))
		}
	}
}

// suspendRatio prints how much one notification adds to a suspend: the best rounds' rates
// and mean Suspend call times of suspend over suspend-notify.
func suspendRatio(rs []result) {
	rate, call := map[string]float64{}, map[string]float64{}
	for _, r := range rs {
		if r.suspendCall == 0 {
			continue
		}
		rate[r.phase] = max(rate[r.phase], r.perSecond)
		if c := r.suspendCall.Seconds(); call[r.phase] == 0 || c < call[r.phase] {
			call[r.phase] = c
		}
	}
	if rate[phaseSuspend] > 0 && rate[phaseSuspendNotify] > 0 {
		fmt.Printf("suspend with one notification: rate suspend/suspend-notify = %.2f×, Suspend call suspend-notify/suspend = %.2f×\n",
			rate[phaseSuspend]/rate[phaseSuspendNotify], call[phaseSuspendNotify]/call[phaseSuspend])
	}
}

// quorumRatio prints what a run two approvals decide costs beside one a single decision
// settles: floor/quorum2 against twice floor/http (the goal: at most that), and what the
// first vote alone (quorum2-first) sends per vote, fewest of its rounds.
func quorumRatio(rs []result, best map[string]float64) {
	if best["floor"] > 0 && best["http"] > 0 && best[phaseQuorum2] > 0 {
		two, one := best["floor"]/best[phaseQuorum2], best["floor"]/best["http"]
		fmt.Printf("two approvals: floor/%s = %.2f× against floor/http = %.2f× (%.2f× the single decision; goal ≤ 2×)\n",
			phaseQuorum2, two, one, two/one)
	}
	var stmts, trips float64
	for _, r := range rs {
		if r.phase == phaseQuorum2First && r.settled > 0 && (stmts == 0 || r.statements < stmts) {
			stmts, trips = r.statements, r.trips
		}
	}
	if stmts > 0 {
		fmt.Printf("a vote that does not decide (%s): %.1f statements in %.1f round trips\n", phaseQuorum2First, stmts, trips)
	}
}
