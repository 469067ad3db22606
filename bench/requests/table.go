package main

import (
	"fmt"

	"runsdesk/bench/load"
)

// printTable prints every path phase and round, then the best rounds' ratio floor ÷ http.
func printTable(rs []result) {
	fmt.Println()
	fmt.Println("| phase | round | decided | decided/s | call p50 | call p99 | call errors | statements/request | round trips/request | commits/request | CPU/request app | CPU/request db | decision → answer p50, p99 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	best := map[string]float64{}
	for _, r := range rs {
		fmt.Printf("| %s | %d | %d | %.0f | %s | %s | %d | %.1f | %.1f | %.1f | %s | %s | %s, %s |\n", r.phase, r.round, r.decided, r.perSecond,
			load.Ms(r.res.P50), load.Ms(r.res.P99), r.res.Errors, r.statements, r.trips, r.commits, load.Ms(r.appCPU), load.Ms(r.dbCPU), load.Percentile(r.waits, 0.5), load.Percentile(r.waits, 0.99))
		best[r.phase] = max(best[r.phase], r.perSecond)
	}
	fmt.Println()
	if best[phaseFloor] > 0 && best[phaseHTTP] > 0 {
		fmt.Printf("floor/http = %.2f× (best rounds: floor %.0f, http %.0f decided/s; goal ≤ 2.0×)\n",
			best[phaseFloor]/best[phaseHTTP], best[phaseFloor], best[phaseHTTP])
	}
}
