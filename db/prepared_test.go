package db

import (
	"testing"
	"time"

	"runsdesk/runtime"
)

// TestHotStatementsArePreparedOnce: the statements of a decision's path (the run read, the
// claim's transaction, the settle) run as prepared statements once prepared: each text is
// prepared once per connection (in the background, the first time it is asked for; that
// first run is sent plain) and then only executed, and returns what the plain statement
// returns.
func TestHotStatementsArePreparedOnce(t *testing.T) {
	dsn := newMigrated(t)
	rec := &recorder{}
	pool := openRecording(t, dsn+"&interpolateParams=true", rec) // as Open: plain statements are not prepared

	pool.SetMaxOpenConns(1)
	s := New(pool)
	hot := []string{sqlRunByUUID, sqlClaimForResume, sqlInsertDecision, sqlFinishOwned}
	decide := func(r runtime.Run) {
		t.Helper()
		read, err := s.FindByUUID(t.Context(), r.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if read.UID != r.UID || read.Status != runtime.StatusWaitingInput || read.SuspendedState != r.SuspendedState || read.PendingTools != "ask" {
			t.Fatalf("FindByUUID = %+v, want the waiting run %+v", read, r)
		}
		c := resumeClaim(read, "resume:h:1", "k")
		if _, _, err := s.Commit(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(t.Context(), r.UID, c.Resume.Lease.Owner, runtime.Settlement{Status: runtime.StatusCompleted, Reason: "completed"}, now1,
			stepEvents(r.UID)...); err != nil {
			t.Fatal(err)
		}
		wantEvents(t, s, r.UID, runtime.EventApproval, runtime.EventTool, runtime.EventLLM)
	}
	first := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	second := waitingRun(t, s, runtime.StatusWaitingInput, t0+2, "ask")
	decide(first)
	deadline := time.Now().Add(10 * time.Second)
	for _, q := range hot {
		for rec.preparesOf(q) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	rec.reset()
	decide(second)
	ran := map[string]int{}
	for _, q := range rec.take() {
		if q.prepared {
			ran[q.query]++
		}
	}
	for _, q := range hot {
		if n := rec.preparesOf(q); n != 1 {
			t.Errorf("prepared %d times on one connection, want 1: %.70s", n, q)
		}
		if ran[q] != 1 {
			t.Errorf("ran prepared %d times in the second decision, want 1: %.70s", ran[q], q)
		}
	}
}
