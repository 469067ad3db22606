// Package load drives a fixed number of concurrent clients for a fixed time and summarises
// the latencies: percentiles, maximum, throughput and errors.
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
	PerSecond        float64
	Elapsed          time.Duration
	// FirstError is the first error seen, for the report.
	FirstError error
}

// String formats r for a log line.
func (r Result) String() string {
	return fmt.Sprintf("n=%d err=%d p50=%s p99=%s max=%s rps=%.0f", r.Requests, r.Errors,
		Ms(r.P50), Ms(r.P99), Ms(r.Max), r.PerSecond)
}

// Ms formats d in milliseconds with two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// Run calls op from clients goroutines in a loop (each call timed) until d has passed, and
// returns the summary. Calls started before then run to their end and count, so a call
// slower than d is still measured. op gets its client index; an error counts and the loop
// goes on. Cancelling ctx stops the loop early.
func Run(ctx context.Context, clients int, d time.Duration, op func(ctx context.Context, client int) error) Result {
	deadline := time.Now().Add(d)
	lat := make([][]time.Duration, clients)
	errs := make([]int, clients)
	first := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t := time.Now()
				err := op(ctx, c)
				lat[c] = append(lat[c], time.Since(t))
				if err != nil {
					errs[c]++
					if first[c] == nil {
						first[c] = err
					}
				}
			}
		}()
	}
	wg.Wait()
	r := Result{Elapsed: time.Since(start)}
	var all []time.Duration
	for c := range clients {
		all = append(all, lat[c]...)
		r.Errors += errs[c]
		if r.FirstError == nil {
			r.FirstError = first[c]
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
	r.PerSecond = float64(len(all)) / r.Elapsed.Seconds()
	return r
}
