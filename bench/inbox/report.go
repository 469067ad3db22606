package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"runsdesk/bench/load"
)

// deskKey names a measured desk: its size and layout.
type deskKey struct {
	runs  int
	typo3 bool
}

// layout is the desk's layout for the report: "own" or "typo3" (beside a TYPO3 site).
func (k deskKey) layout() string { return layoutName(k.typo3) }

// String names the desk in the summary's headings.
func (k deskKey) String() string {
	if k.typo3 {
		return fmt.Sprintf("%d runs beside TYPO3", k.runs)
	}
	return fmt.Sprintf("%d runs", k.runs)
}

// compare orders desks by size, the own layout first.
func (k deskKey) compare(o deskKey) int {
	if k.runs != o.runs {
		return k.runs - o.runs
	}
	switch {
	case k.typo3 == o.typo3:
		return 0
	case o.typo3:
		return -1
	}
	return 1
}

func layoutName(typo3 bool) string {
	if typo3 {
		return "typo3"
	}
	return "own"
}

// printTable prints every measurement, then for each mode, scenario and client count the
// best p99 per desk (the round least disturbed by other load) and the spread between the
// sizes, each page's figures over the first page's and, with -typo3, each desk's beside
// TYPO3 over its own layout's.
func printTable(rows []row) {
	paced := rows[0].res.Offered > 0
	fmt.Println()
	if paced {
		fmt.Println("| round | runs | layout | mode | scenario | clients | requests | p50 | p99 | max | req/s achieved / offered | missed | errors | response | CPU/req app | CPU/req db | allocs/req | statements/req |")
		fmt.Println("|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	} else {
		fmt.Println("| round | runs | layout | mode | scenario | clients | requests | p50 | p99 | max | req/s | errors | response | CPU/req app | CPU/req db | allocs/req | statements/req |")
		fmt.Println("|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
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
		fmt.Printf("| %d | %d | %s | %s | %s | %d | %d | %s | %s | %s | %s |%s %d | %s | %s | %s | %.0f | %.2f |\n", r.round, r.desk.runs, r.desk.layout(), r.mode,
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
	var sizes []deskKey
	best := map[summaryKey]map[deskKey]row{}
	for _, r := range rows {
		k := summaryKey{r.mode, r.scenario, r.clients}
		if best[k] == nil {
			best[k] = map[deskKey]row{}
			keys = append(keys, k)
		}
		if !slices.Contains(sizes, r.desk) {
			sizes = append(sizes, r.desk)
		}
		if b, ok := best[k][r.desk]; !ok || r.res.P99 < b.res.P99 {
			best[k][r.desk] = r
		}
	}
	slices.SortFunc(sizes, deskKey.compare)
	rateHead := "req/s"
	if rows[0].res.Offered > 0 {
		rateHead = "req/s achieved / offered"
	}
	fmt.Println()
	head := "| mode | scenario | clients |"
	sep := "|---|---|---:|"
	for _, n := range sizes {
		head += fmt.Sprintf(" p50 / p99 @ %s | %s | CPU/req |", n, rateHead)
		sep += "---:|---:|---:|"
	}
	fmt.Println(head + " p99 largest / smallest |")
	fmt.Println(sep + "---:|")
	for _, k := range keys {
		line := fmt.Sprintf("| %s | %s | %d |", k.mode, k.scenario, k.clients)
		var lo, hi time.Duration
		for _, n := range sizes {
			r, ok := best[k][n]
			if !ok {
				line += " - | - | - |"
				continue
			}
			line += fmt.Sprintf(" %s / %s | %s | %s |", load.Ms(r.res.P50), load.Ms(r.res.P99), rate(r.res),
				load.Ms(r.appCPU+r.dbCPU))
			if n.typo3 {
				continue
			}
			if lo == 0 {
				lo = r.res.P99
			}
			hi = r.res.P99
		}
		fmt.Println(line + " " + ratio(hi, lo) + " |")
	}
	printVersusFirst(keys, best)
	printBesideTYPO3(keys, rows)
}

// printVersusFirst prints, for each desk size, mode and client count, every other page's best
// p99 divided by the first page's (the unfiltered inbox measured in the same run), beside
// the two pages' application CPU and statements per request.
func printVersusFirst(keys []summaryKey, best map[summaryKey]map[deskKey]row) {
	header := false
	for _, k := range keys {
		first := summaryKey{k.mode, scenarioFirst, k.clients}
		if k.scenario == scenarioFirst || best[first] == nil {
			continue
		}
		for _, n := range slices.SortedFunc(maps.Keys(best[k]), deskKey.compare) {
			r := best[k][n]
			f, ok := best[first][n]
			if !ok || f.res.P99 == 0 {
				continue
			}
			if !header {
				fmt.Println()
				fmt.Println("| runs | layout | mode | scenario | clients | p99 / p99 of first | CPU/req app (first) | statements/req (first) |")
				fmt.Println("|---:|---|---|---|---:|---:|---:|---:|")
				header = true
			}
			fmt.Printf("| %d | %s | %s | %s | %d | %.2f | %s (%s) | %.2f (%.2f) |\n", n.runs, n.layout(), k.mode, k.scenario, k.clients,
				float64(r.res.P99)/float64(f.res.P99), load.Ms(r.appCPU), load.Ms(f.appCPU), r.statements, f.statements)
		}
	}
}

// printBesideTYPO3 prints, for each desk size measured in both layouts, mode, page and
// client count, the figures beside a TYPO3 site over those of runsdesk's own layout. The two
// desks are measured back to back in each round, so each round gives one ratio of
// application CPU and of p99 under the same load from elsewhere; the table lists them with
// their median, beside the medians of both layouts' own figures over the rounds.
func printBesideTYPO3(keys []summaryKey, rows []row) {
	type pairKey struct {
		summaryKey
		runs, round int
	}
	own := map[pairKey]row{}
	for _, r := range rows {
		if !r.desk.typo3 {
			own[pairKey{summaryKey{r.mode, r.scenario, r.clients}, r.desk.runs, r.round}] = r
		}
	}
	type pairs struct{ own, beside []row }
	byDesk := map[summaryKey]map[int]*pairs{}
	for _, r := range rows {
		k := summaryKey{r.mode, r.scenario, r.clients}
		o, ok := own[pairKey{k, r.desk.runs, r.round}]
		if !r.desk.typo3 || !ok {
			continue
		}
		if byDesk[k] == nil {
			byDesk[k] = map[int]*pairs{}
		}
		if byDesk[k][r.desk.runs] == nil {
			byDesk[k][r.desk.runs] = &pairs{}
		}
		p := byDesk[k][r.desk.runs]
		p.own, p.beside = append(p.own, o), append(p.beside, r)
	}
	header := false
	for _, k := range keys {
		for _, n := range slices.Sorted(maps.Keys(byDesk[k])) {
			p := byDesk[k][n]
			if !header {
				fmt.Println()
				fmt.Println("| runs | mode | scenario | clients | rounds | CPU/req app: TYPO3 / own (medians) | TYPO3 ÷ own, round by round (median) | CPU/req db: TYPO3 / own | statements/req: TYPO3 / own | p50 / p99 TYPO3 (medians) | p50 / p99 own (medians) | p99 TYPO3 ÷ own, round by round (median) |")
				fmt.Println("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
				header = true
			}
			var cpuRatios, p99Ratios []float64
			for i := range p.own {
				cpuRatios = append(cpuRatios, quotient(p.beside[i].appCPU, p.own[i].appCPU))
				p99Ratios = append(p99Ratios, quotient(p.beside[i].res.P99, p.own[i].res.P99))
			}
			pick := func(rs []row, f func(row) time.Duration) string {
				var ds []float64
				for _, r := range rs {
					ds = append(ds, float64(f(r)))
				}
				return load.Ms(time.Duration(median(ds)))
			}
			app := func(r row) time.Duration { return r.appCPU }
			dbCPU := func(r row) time.Duration { return r.dbCPU }
			p50 := func(r row) time.Duration { return r.res.P50 }
			p99 := func(r row) time.Duration { return r.res.P99 }
			fmt.Printf("| %d | %s | %s | %d | %d | %s / %s | %s (%.2f) | %s / %s | %.2f / %.2f | %s / %s | %s / %s | %s (%.2f) |\n",
				n, k.mode, k.scenario, k.clients, len(p.own),
				pick(p.beside, app), pick(p.own, app), ratios(cpuRatios), median(cpuRatios),
				pick(p.beside, dbCPU), pick(p.own, dbCPU), statements(p.beside), statements(p.own),
				pick(p.beside, p50), pick(p.beside, p99), pick(p.own, p50), pick(p.own, p99),
				ratios(p99Ratios), median(p99Ratios))
		}
	}
}

// statements is the median of rs's statements per request.
func statements(rs []row) float64 {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, r.statements)
	}
	return median(xs)
}

// ratios lists xs to two places.
func ratios(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(out, ", ")
}

// median is the middle of xs (the mean of the middle two for an even count; 0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quotient is a / b (0 when b is zero).
func quotient(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// ratio is a / b to two places, "-" when b is zero.
func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func printMemory(m memory) {
	fmt.Println()
	fmt.Printf("memory (%d runs, one application in this process, load clients included): RSS idle %s, peak %s under %s\n",
		m.runs, load.MiB(m.idle), load.MiB(m.peak), m.res)
}
