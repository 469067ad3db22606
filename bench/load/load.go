// Package load drives a fixed number of concurrent clients for a fixed time and summarises
// the latencies: percentiles, maximum, throughput and errors. Run is a closed loop (each
// client calls back to back, so it measures throughput under saturation); Paced is an open
// loop (each client calls on a fixed schedule, latency counted from the scheduled start).
package load

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Result summarises one load run.
type Result struct {
	Requests, Errors int
	P50, P99, Max    time.Duration
	// PerSecond is the achieved rate: completed requests over Elapsed.
	PerSecond float64
	Elapsed   time.Duration
	// FirstError is the first error seen, for the report.
	FirstError error
	// Offered is the scheduled rate of a paced run in requests per second (0: closed loop).
	Offered float64
	// Missed counts the calls of a paced run scheduled within its duration but not started
	// before it ended, because their client was still behind.
	Missed int
}

// String formats r for a log line; a paced run adds its offered rate and missed calls.
func (r Result) String() string {
	s := fmt.Sprintf("n=%d err=%d p50=%s p99=%s max=%s rps=%.0f", r.Requests, r.Errors,
		Ms(r.P50), Ms(r.P99), Ms(r.Max), r.PerSecond)
	if r.Offered > 0 {
		s += fmt.Sprintf(" offered=%.0f/s missed=%d", r.Offered, r.Missed)
	}
	return s
}

// Ms formats d in milliseconds with two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// Op is one client's call; client is its index, from 0.
type Op func(ctx context.Context, client int) error

// tally is one client's latencies and errors.
type tally struct {
	lat   []time.Duration
	errs  int
	first error
}

func (t *tally) record(d time.Duration, err error) {
	t.lat = append(t.lat, d)
	if err != nil {
		t.errs++
		if t.first == nil {
			t.first = err
		}
	}
}

// Run calls op from clients goroutines in a loop (each call timed) until d has passed, and
// returns the summary. Calls started before then run to their end and count, so a call
// slower than d is still measured. op gets its client index; an error counts and the loop
// goes on. Cancelling ctx stops the loop early.
func Run(ctx context.Context, clients int, d time.Duration, op Op) Result {
	deadline := time.Now().Add(d)
	tallies := make([]tally, clients)
	start := time.Now()
	each(clients, func(c int) {
		for ctx.Err() == nil && time.Now().Before(deadline) {
			t := time.Now()
			err := op(ctx, c)
			tallies[c].record(time.Since(t), err)
		}
	})
	return summarise(tallies, time.Since(start))
}

// each runs f(0) … f(n-1) concurrently and waits for all of them.
func each(n int, f func(c int)) {
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() { f(c) })
	}
	wg.Wait()
}

// summarise merges the clients' tallies into a Result over elapsed.
func summarise(tallies []tally, elapsed time.Duration) Result {
	r := Result{Elapsed: elapsed}
	var all []time.Duration
	for _, t := range tallies {
		all = append(all, t.lat...)
		r.Errors += t.errs
		if r.FirstError == nil {
			r.FirstError = t.first
		}
	}
	r.Requests = len(all)
	if len(all) == 0 {
		return r
	}
	slices.Sort(all)
	r.P50 = all[len(all)*50/100]
	r.P99 = all[min(len(all)-1, len(all)*99/100)]
	r.Max = all[len(all)-1]
	r.PerSecond = float64(len(all)) / elapsed.Seconds()
	return r
}

// Percentile formats the p-th fraction (0 to 1) of sorted latencies in milliseconds ("-"
// when there are none).
func Percentile(sorted []time.Duration, p float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	return Ms(sorted[min(len(sorted)-1, int(float64(len(sorted))*p))])
}
