package db

import (
	"context"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// maxReads counts the MAX(sequence) reads among the recorded statements.
func maxReads(qs []recordedQuery) int {
	n := 0
	for _, q := range qs {
		if strings.Contains(q.query, "MAX(sequence)") {
			n++
		}
	}
	return n
}

// TestContinuationAppendsWithoutReadingMax: after a claim, the claimer's checkpoints and its
// settle append their events at the sequences that follow the claim's event without reading
// MAX(sequence); the events are dense.
func TestContinuationAppendsWithoutReadingMax(t *testing.T) {
	dsn := newDatabase(t)
	if err := Migrate(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	pool := openRecording(t, dsn, rec)
	s := New(pool)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	appendEvents(t, s, r.UID, 2)
	c := resumeClaim(r, "resume:h:1", "k")
	if _, _, err := s.ClaimForResume(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	rec.reset()
	if err := s.Checkpoint(t.Context(), r.UID, c.Lease, `{"messages":[]}`, `{}`, stepEvents(r.UID)[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(t.Context(), r.UID, c.Lease.Owner, runtime.Settlement{Status: runtime.StatusCompleted, Reason: "completed"}, now1,
		stepEvents(r.UID)[1]); err != nil {
		t.Fatal(err)
	}
	if n := maxReads(rec.take()); n != 0 {
		t.Fatalf("checkpoint and settle after the claim read MAX(sequence) %d times, want 0", n)
	}
	wantEvents(t, s, r.UID, runtime.EventLLM, runtime.EventLLM, runtime.EventApproval, runtime.EventTool, runtime.EventLLM)
	if err := s.Suspend(t.Context(), runningRun(t, s, "w:2").UID, "w:2", runtime.Suspension{Status: runtime.StatusWaitingInput, State: "{}"}, t0+3,
		stepEvents(0)[0]); err != nil {
		t.Fatal(err)
	}
	if n := maxReads(rec.take()); n != 1 {
		t.Fatalf("an append to a run this Store has not written read MAX(sequence) %d times, want 1", n)
	}
}

// TestStaleSequenceHintRetries: when another writer appended to the run after this Store's
// last append (here another Store on the same database), the hint is behind; the append
// hits the unique sequence, is retried with MAX(sequence), and the events stay dense.
func TestStaleSequenceHintRetries(t *testing.T) {
	s, pool := newStore(t)
	other := New(pool)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	c := resumeClaim(r, "resume:h:1", "k")
	if _, _, err := s.ClaimForResume(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, other, r.UID, 2)
	if err := s.Checkpoint(t.Context(), r.UID, c.Lease, `{"messages":[]}`, `{}`, stepEvents(r.UID)...); err != nil {
		t.Fatalf("checkpoint with a stale hint: %v", err)
	}
	if err := s.Finish(t.Context(), r.UID, c.Lease.Owner, runtime.Settlement{Status: runtime.StatusCompleted, Reason: "completed"}, now1,
		stepEvents(r.UID)[:1]...); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, s, r.UID, runtime.EventApproval, runtime.EventLLM, runtime.EventLLM, runtime.EventTool, runtime.EventLLM, runtime.EventTool)
}
