package db

import (
	"context"
	"slices"
	"testing"

	"runsdesk/runtime"
)

// TestMetricsQueries: counts per status, waiting times and leases match the rows.
func TestMetricsQueries(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	queuedRun(t, s)
	runningRun(t, s, "w:2")
	waitingRun(t, s, runtime.StatusWaitingInput, t0+5, "x")
	counts, err := s.CountByStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts["queued"] != 1 || counts["running"] != 1 || counts["waiting_for_input"] != 1 {
		t.Fatalf("counts = %v", counts)
	}
	if since := waitingSince(t, s); len(since) != 1 || since[0] != t0+5 {
		t.Fatalf("waiting since = %v", since)
	}
	n, err := s.CountLeased(ctx)
	if err != nil || n != 1 {
		t.Fatalf("leased = %d, %v", n, err)
	}
}

// TestWaitingAges: the histogram counted in SQL equals the one the metrics used to build from
// every suspended_at (age max(now - t, 0), bucket le is ≤), bounds and the future included;
// with no waiting run every count and the sum are zero.
func TestWaitingAges(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	bounds := []int64{60, 300, 3600}
	now := t0 + 10_000
	cumulative, sum, err := s.WaitingAges(ctx, now, bounds)
	if err != nil || !slices.Equal(cumulative, []int64{0, 0, 0, 0}) || sum != 0 {
		t.Fatalf("no waiting runs: %v, %d, %v", cumulative, sum, err)
	}
	queuedRun(t, s)
	for i, at := range []int64{now, now - 60, now - 61, now - 300, now - 3600, now - 3601, now - 9000, now + 5} {
		status := []runtime.Status{runtime.StatusWaitingApproval, runtime.StatusWaitingInput}[i%2]
		waitingRun(t, s, status, at, "x")
	}
	wantCum, wantSum := bucketInGo(waitingSince(t, s), now, bounds)
	cumulative, sum, err = s.WaitingAges(ctx, now, bounds)
	if err != nil || !slices.Equal(cumulative, wantCum) || sum != wantSum {
		t.Fatalf("WaitingAges = %v, %d, %v; from the rows %v, %d", cumulative, sum, err, wantCum, wantSum)
	}
	if !slices.Equal(wantCum, []int64{3, 5, 6, 8}) || wantSum != 60+61+300+3600+3601+9000 {
		t.Fatalf("fixture changed: %v, %d", wantCum, wantSum)
	}
}

// waitingSince returns suspended_at of every waiting run, the rows the histogram counts.
func waitingSince(t *testing.T, s *Store) []int64 {
	t.Helper()
	since, err := queryAll(t.Context(), s.db, scanInt64, `SELECT suspended_at FROM tx_nrllm_agentrun WHERE suspended_at > 0`)
	if err != nil {
		t.Fatal(err)
	}
	return since
}

// bucketInGo is the previous implementation: every row shipped, bucketed here.
func bucketInGo(since []int64, now int64, bounds []int64) ([]int64, int64) {
	cum := make([]int64, len(bounds)+1)
	var sum int64
	for _, at := range since {
		age := max(now-at, 0)
		sum += age
		for i, b := range bounds {
			if age <= b {
				cum[i]++
			}
		}
		cum[len(bounds)]++
	}
	return cum, sum
}
