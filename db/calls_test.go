package db

import (
	"fmt"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/seal"
)

// rawCallArguments reads the stored argument columns of run uid's executed calls, in order.
func rawCallArguments(t *testing.T, s *Store, uid int64) []callArguments {
	t.Helper()
	rows, err := s.db.Query(`SELECT proposed, approved, effective FROM tx_runsdesk_call WHERE run = ? ORDER BY sequence`, uid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []callArguments
	for rows.Next() {
		var a callArguments
		if err := rows.Scan(&a[0], &a[1], &a[2]); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestCheckpointCarriesCallsInItsBatch: a checkpoint of a run this Store claimed (so it knows
// the next event sequence) writes its events and the calls they carry in its one batch: the
// application pool sends no statement, and the call row is stored at its event's sequence. A
// call of no approval is stored without approved arguments.
func TestCheckpointCarriesCallsInItsBatch(t *testing.T) {
	dsn := newMigrated(t)
	batches, err := OpenBatches(t.Context(), dsn, testLayout()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { batches.Close() })
	rec := &recorder{}
	s := New(openRecording(t, dsn, rec), WithBatches(batches))
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "lookup")
	c := resumeClaim(mustFind(t, s, r.UID), "resume:h:1", "k")
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	events := stepEvents(r.UID)
	unapproved := *events[0].Call
	unapproved.Approved = nil
	events = append(events, runtime.NewEvent{Run: r.UID, Kind: runtime.EventTool, Now: t0 + 1, Call: &unapproved})
	rec.reset()
	if err := s.Checkpoint(t.Context(), r.UID, c.Resume.Lease, `{"messages":[]}`, `{}`, events...); err != nil {
		t.Fatal(err)
	}
	if qs := rec.take(); len(qs) != 0 {
		t.Fatalf("the checkpoint sent %d statements outside its batch: %v", len(qs), qs)
	}
	got, err := s.ExecutedCalls(t.Context(), r.UID)
	if err != nil || len(got) != 2 {
		t.Fatalf("ExecutedCalls = %+v, %v; want the two calls", got, err)
	}
	if got[0].Sequence != 1 || string(got[0].Effective) != `{ "q": "b" }` || got[1].Sequence != 3 || got[1].Approved != nil ||
		string(got[1].Proposed) != `{"q":"a"}` {
		t.Fatalf("ExecutedCalls = %+v", got)
	}
}

// TestExecutedCallsSealed: with keys, each argument of an executed call is stored as an
// envelope bound to its column and run and read back as written; a value moved to another
// column does not open and is left as stored (its reader refuses it); Reseal seals old
// keys' and cleartext calls with the active key, counts the current ones and names the runs
// of those that do not open.
func TestExecutedCallsSealed(t *testing.T) {
	plain, pool := newStore(t)
	old := keyring(t, "old")
	legacy := runningRun(t, plain, "w:1")
	if err := plain.Checkpoint(t.Context(), legacy.UID, lease("w:1", t0), `{}`, `{}`, stepEvents(legacy.UID)...); err != nil {
		t.Fatal(err)
	}
	s := New(pool, WithKeys(old))
	r := runningRun(t, s, "w:1")
	if err := s.Checkpoint(t.Context(), r.UID, lease("w:1", t0), `{}`, `{}`, stepEvents(r.UID)...); err != nil {
		t.Fatal(err)
	}
	raw := rawCallArguments(t, s, r.UID)
	if len(raw) != 1 {
		t.Fatalf("%d call rows, want 1", len(raw))
	}
	for j, v := range raw[0] {
		if seal.KeyID(v) != "old" || strings.Contains(v, `"q"`) {
			t.Fatalf("%s stored as %q: want an envelope", sealedCallColumns[j].Column, v)
		}
	}
	wantCalls(t, New(pool, WithKeys(old)), r.UID, 0)

	if _, err := plain.Reseal(t.Context(), sealedCallProposed, 0, 10, true); err == nil {
		t.Fatal("Reseal without keys must be refused")
	}
	newKey := keyring(t, "new")
	both := New(pool, WithKeys(mustJoin(t, newKey, old)))
	total := resealOneByOne(t, both, true, sealedCallColumns[:]...)
	if total.Resealed != 6 || total.Current != 0 {
		t.Fatalf("re-sealed %d calls (%d current), want 6: the cleartext call's three and the old key's", total.Resealed, total.Current)
	}
	for _, run := range []int64{legacy.UID, r.UID} {
		for j, v := range rawCallArguments(t, plain, run)[0] {
			if seal.KeyID(v) != "new" {
				t.Fatalf("run %d %s after rotation: %.30q; want the new key", run, sealedCallColumns[j].Column, v)
			}
		}
		wantCalls(t, New(pool, WithKeys(newKey)), run, 0)
	}
	if again := resealOneByOne(t, both, true, sealedCallColumns[:]...); again.Resealed != 0 || again.Current != 6 {
		t.Fatalf("second rotation: %+v; want everything current", again)
	}

	if _, err := pool.Exec(`UPDATE tx_runsdesk_call SET approved = proposed WHERE run = ?`, r.UID); err != nil {
		t.Fatal(err)
	}
	got, err := both.ExecutedCalls(t.Context(), r.UID)
	if err != nil || len(got) != 1 || !strings.HasPrefix(string(got[0].Approved), seal.Prefix) || got[0].Readable() {
		t.Fatalf("a value moved to another column: %+v, %v; want it left as stored and unreadable", got, err)
	}
	bad := resealOneByOne(t, both, true, sealedCallColumns[:]...)
	if len(bad.Unopenable) != 1 || bad.Unopenable[0] != r.UUID || bad.Current != 5 {
		t.Fatalf("rotation over a moved value: %+v; want its run named and the value left", bad)
	}
}

// TestAppendEventCarriesItsCall: an event appended on its own (a cancelled segment's steps)
// stores the call it carries at its sequence.
func TestAppendEventCarriesItsCall(t *testing.T) {
	s, _ := newStore(t)
	r := runningRun(t, s, "w:1")
	appendEvents(t, s, r.UID, 1)
	if _, err := s.AppendEvent(t.Context(), stepEvents(r.UID)[0]); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, s, r.UID, 1)
}

// TestCallsOfRacingCheckpointsAreWrittenOnce: segments racing to checkpoint the same run each
// carry the call they executed; only the lease owner's checkpoint holds, and only its call is
// stored.
func TestCallsOfRacingCheckpointsAreWrittenOnce(t *testing.T) {
	s, pool := newStore(t)
	pool.SetMaxOpenConns(racers + 2)
	r := runningRun(t, s, "w:3")
	won := race(t, racers, func(i int) error {
		return s.Checkpoint(t.Context(), r.UID, lease(fmt.Sprintf("w:%d", i), t0+1), `{}`, `{}`, stepEvents(r.UID)...)
	})
	if won != 1 {
		t.Fatalf("%d checkpoints held, want exactly the owner's", won)
	}
	wantCalls(t, s, r.UID, 0)
}
