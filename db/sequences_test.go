package db

import (
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

// recordingStore is a Store without batches on a fresh, migrated database whose statements
// rec records.
func recordingStore(t *testing.T) (*Store, *recorder) {
	t.Helper()
	dsn := newMigrated(t)
	rec := &recorder{}
	return New(openRecording(t, dsn, rec)), rec
}

// TestContinuationAppendsWithoutReadingMax: after a claim, the claimer's checkpoints and its
// settle append their events at the sequences that follow the claim's event without reading
// MAX(sequence); the events are dense.
func TestContinuationAppendsWithoutReadingMax(t *testing.T) {
	s, rec := recordingStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	appendEvents(t, s, r.UID, 2)
	c := resumeClaim(r, "resume:h:1", "k")
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	rec.reset()
	if err := s.Checkpoint(t.Context(), r.UID, c.Resume.Lease, `{"messages":[]}`, `{}`, stepEvents(r.UID)[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(t.Context(), r.UID, c.Resume.Lease.Owner, runtime.Settlement{Status: runtime.StatusCompleted, Reason: "completed"}, now1,
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
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, other, r.UID, 2)
	if err := s.Checkpoint(t.Context(), r.UID, c.Resume.Lease, `{"messages":[]}`, `{}`, stepEvents(r.UID)...); err != nil {
		t.Fatalf("checkpoint with a stale hint: %v", err)
	}
	if err := s.Finish(t.Context(), r.UID, c.Resume.Lease.Owner, runtime.Settlement{Status: runtime.StatusCompleted, Reason: "completed"}, now1,
		stepEvents(r.UID)[:1]...); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, s, r.UID, runtime.EventApproval, runtime.EventLLM, runtime.EventLLM, runtime.EventTool, runtime.EventLLM, runtime.EventTool)
}

// TestClaimAfterReadAppendsWithoutReadingMax: a decision reads the waiting run by uuid and
// then claims it; the read brings the run's next event sequence, so the claim's transaction
// appends its event without a MAX(sequence) read of its own, at the sequence that follows.
func TestClaimAfterReadAppendsWithoutReadingMax(t *testing.T) {
	s, rec := recordingStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	appendEvents(t, s, r.UID, 2)
	read, err := s.FindByUUID(t.Context(), r.UUID)
	if err != nil {
		t.Fatal(err)
	}
	rec.reset()
	_, ev, err := s.Commit(t.Context(), resumeClaim(read, "resume:h:1", "k"))
	if err != nil {
		t.Fatal(err)
	}
	if n := maxReads(rec.take()); n != 0 {
		t.Fatalf("the claim after reading the run read MAX(sequence) %d times, want 0", n)
	}
	if ev.Sequence != 2 {
		t.Fatalf("claim event at sequence %d, want 2", ev.Sequence)
	}
	wantEvents(t, s, r.UID, runtime.EventLLM, runtime.EventLLM, runtime.EventApproval)
}

// TestClaimWithStaleReadSequenceRetries: when an event is appended to the waiting run between
// the decision's read and its claim (here by another Store), the sequence the read brought is
// behind; the claim's event hits the unique sequence, the claim is retried with MAX(sequence)
// and succeeds, and the events stay dense.
func TestClaimWithStaleReadSequenceRetries(t *testing.T) {
	s, pool := newStore(t)
	other := New(pool)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	read, err := s.FindByUUID(t.Context(), r.UUID)
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, other, r.UID, 2)
	_, ev, err := s.Commit(t.Context(), resumeClaim(read, "resume:h:1", "k"))
	if err != nil {
		t.Fatalf("claim with a stale sequence: %v", err)
	}
	if ev.Sequence != 2 {
		t.Fatalf("claim event at sequence %d, want 2", ev.Sequence)
	}
	if _, err := s.FindDecision(t.Context(), r.UID, "k"); err != nil {
		t.Fatalf("the retried claim's decision: %v", err)
	}
	wantEvents(t, s, r.UID, runtime.EventLLM, runtime.EventLLM, runtime.EventApproval)
}

// TestAppendToAWaitingRunWithAStalePauseSequence: a waiting run's recorded next sequence
// (pause_sequence) set behind its events, as a row written by hand could have it: the append
// hits the unique sequence, is retried at MAX(sequence)+1, the events stay dense, and the
// record is right again for the claim.
func TestAppendToAWaitingRunWithAStalePauseSequence(t *testing.T) {
	s, pool := newStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	appendEvents(t, s, r.UID, 2)
	if _, err := pool.ExecContext(t.Context(), `UPDATE tx_nrllm_agentrun SET pause_sequence = 1 WHERE uid = ?`, r.UID); err != nil {
		t.Fatal(err)
	}
	ev, err := s.AppendEvent(t.Context(), runtime.NewEvent{Run: r.UID, Kind: runtime.EventLLM, Now: t0 + 2})
	if err != nil || ev.Sequence != 2 {
		t.Fatalf("append with a stale pause sequence: %+v, %v; want sequence 2", ev, err)
	}
	if got := countRows(t, s, `SELECT pause_sequence FROM tx_nrllm_agentrun WHERE uid = ?`, r.UID); got != 3 {
		t.Fatalf("pause_sequence after the append: %d, want 3", got)
	}
	wantEvents(t, s, r.UID, runtime.EventLLM, runtime.EventLLM, runtime.EventLLM)
}

// TestPauseOfAClaimedRunRecordsItsSequence: a run this Store claimed (so it holds the run's
// next sequence) pauses again; the suspend records the sequence after its events in its own
// UPDATE, and the next decision's claim appends without reading MAX(sequence), at that
// sequence.
func TestPauseOfAClaimedRunRecordsItsSequence(t *testing.T) {
	s, rec := recordingStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "ask")
	c := resumeClaim(r, "resume:h:1", "k1")
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	rec.reset()
	if err := s.Suspend(t.Context(), r.UID, c.Resume.Lease.Owner, runtime.Suspension{Status: runtime.StatusWaitingInput, State: `{"messages":[]}`, Tools: []string{"ask"}}, t0+3,
		stepEvents(r.UID)...); err != nil {
		t.Fatal(err)
	}
	read, err := s.FindByUUID(t.Context(), r.UUID)
	if err != nil {
		t.Fatal(err)
	}
	_, ev, err := s.Commit(t.Context(), resumeClaim(read, "resume:h:2", "k2"))
	if err != nil {
		t.Fatal(err)
	}
	if n := maxReads(rec.take()); n != 0 {
		t.Fatalf("the suspend and the claim after it read MAX(sequence) %d times, want 0", n)
	}
	if want := 1 + len(stepEvents(r.UID)); ev.Sequence != want {
		t.Fatalf("claim event at sequence %d, want %d", ev.Sequence, want)
	}
}
