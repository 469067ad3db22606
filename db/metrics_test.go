package db

import (
	"context"
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
	since, err := s.WaitingSince(ctx)
	if err != nil || len(since) != 1 || since[0] != t0+5 {
		t.Fatalf("waiting since = %v, %v", since, err)
	}
	n, err := s.CountLeased(ctx)
	if err != nil || n != 1 {
		t.Fatalf("leased = %d, %v", n, err)
	}
}
