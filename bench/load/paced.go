package load

import (
	"context"
	"time"
)

// clock is the time source of one paced client: the wall clock, or a test's virtual one.
type clock interface {
	Now() time.Time
	// SleepUntil returns at t, or earlier when ctx ends; at once when t has passed.
	SleepUntil(ctx context.Context, t time.Time)
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) SleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// Paced is an open loop: each of clients calls op on its own fixed schedule, one call every
// interval (clients/interval calls per second in all), for d. Client c's first call is due
// c·interval/clients after the start, so the clients do not fire in lockstep. A call's
// latency runs from its scheduled start, not from when it actually started, so a server
// that falls behind is charged for the wait instead of slowing the clients down (no
// coordinated omission). A client makes one call at a time: when a call overruns, the next
// one starts at once, still measured from its own scheduled time. Calls due before d has
// passed but not started by then are not made; Result.Missed counts them. Calls started run
// to their end and count. Result.Offered is the scheduled rate, Result.PerSecond the
// achieved one. Cancelling ctx stops the schedule early. interval must be positive.
func Paced(ctx context.Context, clients int, interval, d time.Duration, op Op) Result {
	clocks := make([]clock, clients)
	for c := range clocks {
		clocks[c] = wallClock{}
	}
	return paced(ctx, time.Now(), clocks, interval, d, op)
}

// paced runs Paced from start with one clock per client; Elapsed runs to the latest
// client's end.
func paced(ctx context.Context, start time.Time, clocks []clock, interval, d time.Duration, op Op) Result {
	clients := len(clocks)
	tallies := make([]tally, clients)
	ends := make([]time.Time, clients)
	missed := make([]int, clients)
	each(clients, func(c int) {
		due := schedule(start, interval, d, c, clients)
		made := 0
		for _, at := range due {
			if ctx.Err() != nil || !clocks[c].Now().Before(start.Add(d)) {
				break
			}
			clocks[c].SleepUntil(ctx, at)
			if ctx.Err() != nil {
				break
			}
			err := op(ctx, c)
			tallies[c].record(clocks[c].Now().Sub(at), err)
			made++
		}
		missed[c] = len(due) - made
		ends[c] = clocks[c].Now()
	})
	end := start
	for _, e := range ends {
		if e.After(end) {
			end = e
		}
	}
	r := summarise(tallies, end.Sub(start))
	r.Offered = float64(clients) / interval.Seconds()
	for _, m := range missed {
		r.Missed += m
	}
	return r
}

// schedule returns the due times of client c of clients: every interval from its offset
// c·interval/clients after start, while before start+d.
func schedule(start time.Time, interval, d time.Duration, c, clients int) []time.Time {
	var due []time.Time
	for at := interval * time.Duration(c) / time.Duration(clients); at < d; at += interval {
		due = append(due, start.Add(at))
	}
	return due
}
