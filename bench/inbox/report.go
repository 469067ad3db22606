package main

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"runsdesk/bench/load"
)

// printTable prints every measurement, then for each mode, scenario and client count the
// best p99 per desk size (the round least disturbed by other load) and the spread between
// the sizes.
func printTable(rows []row) {
	paced := rows[0].res.Offered > 0
	fmt.Println()
	if paced {
		fmt.Println("| round | runs | mode | scenario | clients | requests | p50 | p99 | max | req/s achieved / offered | missed | errors | response | CPU/req app | CPU/req db | allocs/req | statements/req |")
		fmt.Println("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	} else {
		fmt.Println("| round | runs | mode | scenario | clients | requests | p50 | p99 | max | req/s | errors | response | CPU/req app | CPU/req db | allocs/req | statements/req |")
		fmt.Println("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, r := range rows {
		size := "-"
		if r.bytesPerResponse > 0 {
			size = fmt.Sprintf("%.1f KiB", float64(r.bytesPerResponse)/1024)
		}
		missed := ""
		if paced {
			missed = fmt.Sprintf(" %d |", r.res.Missed)
		}
		fmt.Printf("| %d | %d | %s | %s | %d | %d | %s | %s | %s | %s |%s %d | %s | %s | %s | %.0f | %.2f |\n", r.round, r.runs, r.mode,
			r.scenario, r.clients, r.res.Requests, load.Ms(r.res.P50), load.Ms(r.res.P99), load.Ms(r.res.Max),
			rate(r.res), missed, r.res.Errors, size, load.Ms(r.appCPU), load.Ms(r.dbCPU), r.allocs, r.statements)
	}
	printSummary(rows)
}

// rate is the achieved request rate, with the offered one after it for a paced run.
func rate(r load.Result) string {
	if r.Offered > 0 {
		return fmt.Sprintf("%.0f / %.0f", r.PerSecond, r.Offered)
	}
	return fmt.Sprintf("%.0f", r.PerSecond)
}

type summaryKey struct {
	mode, scenario string
	clients        int
}

func printSummary(rows []row) {
	var keys []summaryKey
	var sizes []int
	best := map[summaryKey]map[int]row{}
	for _, r := range rows {
		k := summaryKey{r.mode, r.scenario, r.clients}
		if best[k] == nil {
			best[k] = map[int]row{}
			keys = append(keys, k)
		}
		if !slices.Contains(sizes, r.runs) {
			sizes = append(sizes, r.runs)
		}
		if b, ok := best[k][r.runs]; !ok || r.res.P99 < b.res.P99 {
			best[k][r.runs] = r
		}
	}
	slices.Sort(sizes)
	rateHead := "req/s"
	if rows[0].res.Offered > 0 {
		rateHead = "req/s achieved / offered"
	}
	fmt.Println()
	head := "| mode | scenario | clients |"
	sep := "|---|---|---:|"
	for _, n := range sizes {
		head += fmt.Sprintf(" p50 / p99 @ %d runs | %s | CPU/req |", n, rateHead)
		sep += "---:|---:|---:|"
	}
	fmt.Println(head + " p99 largest / smallest |")
	fmt.Println(sep + "---:|")
	for _, k := range keys {
		line := fmt.Sprintf("| %s | %s | %d |", k.mode, k.scenario, k.clients)
		var lo, hi time.Duration
		for i, n := range sizes {
			r, ok := best[k][n]
			if !ok {
				line += " - | - | - |"
				continue
			}
			line += fmt.Sprintf(" %s / %s | %s | %s |", load.Ms(r.res.P50), load.Ms(r.res.P99), rate(r.res),
				load.Ms(r.appCPU+r.dbCPU))
			if i == 0 {
				lo = r.res.P99
			}
			hi = r.res.P99
		}
		ratio := "-"
		if lo > 0 {
			ratio = fmt.Sprintf("%.2f", float64(hi)/float64(lo))
		}
		fmt.Println(line + " " + ratio + " |")
	}
	printVersusFirst(keys, best)
}

// printVersusFirst prints, for each desk size, mode and client count, every other page's best
// p99 divided by the first page's (the unfiltered inbox measured in the same run), beside
// the two pages' application CPU and statements per request.
func printVersusFirst(keys []summaryKey, best map[summaryKey]map[int]row) {
	header := false
	for _, k := range keys {
		first := summaryKey{k.mode, scenarioFirst, k.clients}
		if k.scenario == scenarioFirst || best[first] == nil {
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(best[k])) {
			r := best[k][n]
			f, ok := best[first][n]
			if !ok || f.res.P99 == 0 {
				continue
			}
			if !header {
				fmt.Println()
				fmt.Println("| runs | mode | scenario | clients | p99 / p99 of first | CPU/req app (first) | statements/req (first) |")
				fmt.Println("|---:|---|---|---:|---:|---:|---:|")
				header = true
			}
			fmt.Printf("| %d | %s | %s | %d | %.2f | %s (%s) | %.2f (%.2f) |\n", n, k.mode, k.scenario, k.clients,
				float64(r.res.P99)/float64(f.res.P99), load.Ms(r.appCPU), load.Ms(f.appCPU), r.statements, f.statements)
		}
	}
}

func printMemory(m memory) {
	fmt.Println()
	fmt.Printf("memory (%d runs, one application in this process, load clients included): RSS idle %s, peak %s under %s\n",
		m.runs, load.MiB(m.idle), load.MiB(m.peak), m.res)
}
