package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"runsdesk/runtime"
)

// guardedWrite is a Store write that carries a segment's events, done by owner.
type guardedWrite struct {
	name  string
	write func(ctx context.Context, s *Store, uid int64, owner string, events ...runtime.NewEvent) error
	after runtime.Status
}

var guardedWrites = []guardedWrite{
	{"checkpoint", func(ctx context.Context, s *Store, uid int64, owner string, events ...runtime.NewEvent) error {
		return s.Checkpoint(ctx, uid, lease(owner, t0+2), `{"messages":[]}`, `{"kind":"plan"}`, events...)
	}, runtime.StatusRunning},
	{"suspend", func(ctx context.Context, s *Store, uid int64, owner string, events ...runtime.NewEvent) error {
		return s.Suspend(ctx, uid, owner, runtime.Suspension{Status: runtime.StatusWaitingInput,
			State: `{"messages":[]}`, Tools: []string{"ask"}}, t0+2, events...)
	}, runtime.StatusWaitingInput},
	{"finish", func(ctx context.Context, s *Store, uid int64, owner string, events ...runtime.NewEvent) error {
		return s.Finish(ctx, uid, owner, runtime.Settlement{Status: runtime.StatusCompleted,
			Reason: "completed"}, t0+2, events...)
	}, runtime.StatusCompleted},
}

// stepEvents are a segment's buffered events: a tool step, carrying the call it executed,
// then an llm step.
func stepEvents(run int64) []runtime.NewEvent {
	return []runtime.NewEvent{
		{Run: run, Kind: runtime.EventTool, Round: 1, DurationMS: 1.5, Payload: json.RawMessage(`{"toolName":"lookup"}`), Now: t0 + 1,
			Call: stepCall(), Content: stepContent()},
		{Run: run, Kind: runtime.EventLLM, Round: 2, Now: t0 + 2},
	}
}

// stepContent is what stepEvents' tool step said, kept in full.
func stepContent() *runtime.KeptContent {
	return &runtime.KeptContent{Privacy: runtime.PrivacyFull, Content: runtime.EventContent{Arguments: `{ "q": "b" }`, Result: "found b"}}
}

// stepCall is the call stepEvents' tool step executed: edited by an approval, its effective
// arguments spaced as a tool was sent them.
func stepCall() *runtime.ExecutedCall {
	return &runtime.ExecutedCall{CallID: "call_0_0", Tool: "lookup", Proposed: json.RawMessage(`{"q":"a"}`),
		Approved: json.RawMessage(`{"q":"b"}`), Effective: json.RawMessage(`{ "q": "b" }`)}
}

// wantCalls checks run's executed calls: one stepCall per sequence in seqs, as given.
func wantCalls(t *testing.T, s *Store, run int64, seqs ...int) {
	t.Helper()
	got, err := s.ExecutedCalls(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(seqs) {
		t.Fatalf("run %d: %d executed calls, want %d: %+v", run, len(got), len(seqs), got)
	}
	want := stepCall()
	for i, c := range got {
		if c.Run != run || c.Sequence != seqs[i] || c.CallID != want.CallID || c.Tool != want.Tool || c.Crdate != t0+1 ||
			string(c.Proposed) != string(want.Proposed) || string(c.Approved) != string(want.Approved) ||
			string(c.Effective) != string(want.Effective) {
			t.Fatalf("run %d: executed call %d = %+v, want %+v at sequence %d", run, i, c, want, seqs[i])
		}
	}
}

func wantEvents(t *testing.T, s *Store, run int64, kinds ...string) []runtime.Event {
	t.Helper()
	evs, err := s.Events(t.Context(), run, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(kinds) {
		t.Fatalf("run %d: got %d events, want %d (%v)", run, len(evs), len(kinds), kinds)
	}
	for i, ev := range evs {
		if ev.Sequence != i || ev.Kind != kinds[i] || ev.Run != run {
			t.Fatalf("run %d: event %d = %+v, want sequence %d kind %s", run, i, ev, i, kinds[i])
		}
	}
	return evs
}

// TestGuardedWritesCarryEvents: Checkpoint, Suspend and Finish append the given events after
// the run's last one, in order, with the executed calls they carry (at their event's sequence,
// arguments byte for byte), in the transaction of their guarded UPDATE; a guard miss or a
// refused payload writes neither the transition nor any event or call.
func TestGuardedWritesCarryEvents(t *testing.T) {
	for _, w := range guardedWrites {
		t.Run(w.name, func(t *testing.T) {
			ctx := t.Context()
			s, _ := newStore(t)
			r := runningRun(t, s, "w:1")
			appendEvents(t, s, r.UID, 2)

			wantGuard(t, w.write(ctx, s, r.UID, "w:2", stepEvents(r.UID)...))
			bad := append(stepEvents(r.UID), runtime.NewEvent{Kind: runtime.EventTool, Payload: []byte(`{"cut`), Now: t0})
			if err := w.write(ctx, s, r.UID, "w:1", bad...); err == nil || errors.Is(err, runtime.ErrGuard) {
				t.Fatalf("write with a non-JSON event payload: got %v, want a refusal", err)
			}
			if got := mustFind(t, s, r.UID); got.Status != runtime.StatusRunning || got.QueuedRequest != `{"prompt":"hi"}` {
				t.Fatalf("refused writes changed the run: %+v", got)
			}
			wantEvents(t, s, r.UID, runtime.EventLLM, runtime.EventLLM)
			wantCalls(t, s, r.UID)

			events := stepEvents(0)
			if err := w.write(ctx, s, r.UID, "w:1", events...); err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			if got := mustFind(t, s, r.UID); got.Status != w.after {
				t.Fatalf("status %s, want %s", got.Status, w.after)
			}
			evs := wantEvents(t, s, r.UID, runtime.EventLLM, runtime.EventLLM, runtime.EventTool, runtime.EventLLM)
			if evs[2].Round != 1 || evs[2].DurationMS != 1.5 || string(evs[2].Payload) != `{"toolName":"lookup"}` ||
				evs[2].Crdate != t0+1 || string(evs[3].Payload) != `{}` || evs[3].Crdate != t0+2 {
				t.Fatalf("stored events %+v, want the given ones", evs[2:])
			}
			wantCalls(t, s, r.UID, 2)
		})
	}
}

// TestUnchangedCheckpointCarriesEvents: a checkpoint repeated in the same second changes no
// column but still holds the run, so its events are appended.
func TestUnchangedCheckpointCarriesEvents(t *testing.T) {
	s, _ := newStore(t)
	r := runningRun(t, s, "w:1")
	cp := guardedWrites[0].write
	if err := cp(t.Context(), s, r.UID, "w:1"); err != nil {
		t.Fatal(err)
	}
	if err := cp(t.Context(), s, r.UID, "w:1", stepEvents(r.UID)...); err != nil {
		t.Fatalf("unchanged checkpoint with events: %v", err)
	}
	wantEvents(t, s, r.UID, runtime.EventTool, runtime.EventLLM)
}

// TestCheckpointEventsInterleaveDensely: checkpoints carrying events and concurrent
// AppendEvent calls on the same run keep the run's sequences dense and lose nothing.
func TestCheckpointEventsInterleaveDensely(t *testing.T) {
	const appenders, each = 8, 10
	s, pool := newStore(t)
	pool.SetMaxOpenConns(appenders + 4)
	r := runningRun(t, s, "w:1")
	var wg sync.WaitGroup
	errs := make(chan error, appenders*each+each)
	for g := range appenders {
		wg.Go(func() {
			for i := range each {
				_, err := s.AppendEvent(t.Context(), runtime.NewEvent{Run: r.UID, Kind: runtime.EventLLM,
					Round: 1000 + g*each + i, Now: t0})
				errs <- err
			}
		})
	}
	wg.Go(func() {
		for i := range each {
			errs <- s.Checkpoint(t.Context(), r.UID, lease("w:1", t0+int64(i)), fmt.Sprintf(`{"n":%d}`, i), `{}`,
				runtime.NewEvent{Kind: runtime.EventTool, Round: 2 * i, Now: t0},
				runtime.NewEvent{Kind: runtime.EventTool, Round: 2*i + 1, Now: t0})
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	evs, err := s.Events(t.Context(), r.UID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != appenders*each+2*each {
		t.Fatalf("got %d events, want %d", len(evs), appenders*each+2*each)
	}
	lastTool := -1
	for i, ev := range evs {
		if ev.Sequence != i {
			t.Fatalf("event %d has sequence %d (not dense)", i, ev.Sequence)
		}
		if ev.Kind == runtime.EventTool {
			if ev.Round != lastTool+1 {
				t.Fatalf("tool event round %d after %d: order not kept", ev.Round, lastTool)
			}
			lastTool = ev.Round
		}
	}
}
