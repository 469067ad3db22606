package db

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"runsdesk/runtime"
)

func TestAppendEventConcurrent(t *testing.T) {
	const appenders, each = 16, 10
	s, pool := newStore(t)
	pool.SetMaxOpenConns(appenders + 4)
	r := runningRun(t, s, "w:1")
	other := runningRun(t, s, "w:1")

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, appenders*each*2)
	for g := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				for _, run := range []int64{r.UID, other.UID} {
					_, err := s.AppendEvent(t.Context(), runtime.NewEvent{Run: run,
						Kind: runtime.EventTool, Round: g*100 + i, Payload: json.RawMessage(`{"n":1}`), Now: t0})
					errs <- err
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("AppendEvent: got %v, want nil", err)
		}
	}
	for _, run := range []int64{r.UID, other.UID} {
		events, err := s.Events(t.Context(), run, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != appenders*each {
			t.Fatalf("run %d: got %d events, want %d", run, len(events), appenders*each)
		}
		rounds := map[int]bool{}
		for i, ev := range events {
			if ev.Sequence != i {
				t.Fatalf("run %d: event %d has sequence %d, want %d (dense, 0-based)", run, i, ev.Sequence, i)
			}
			rounds[ev.Round] = true
		}
		if len(rounds) != appenders*each {
			t.Fatalf("run %d: got %d distinct events, want %d (none lost)", run, len(rounds), appenders*each)
		}
		if n, err := s.MaxSequence(t.Context(), run); err != nil || n != appenders*each-1 {
			t.Fatalf("MaxSequence: got %d, %v, want %d", n, err, appenders*each-1)
		}
	}
}

func TestAppendEvent(t *testing.T) {
	s, _ := newStore(t)
	r := runningRun(t, s, "w:1")
	if n, err := s.MaxSequence(t.Context(), r.UID); err != nil || n != -1 {
		t.Fatalf("MaxSequence of a run without events: got %d, %v, want -1", n, err)
	}
	ev, err := s.AppendEvent(t.Context(), runtime.NewEvent{Run: r.UID, Kind: runtime.EventLLM,
		Round: 2, DurationMS: 12.5, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	want := runtime.Event{UID: ev.UID, Run: r.UID, Sequence: 0, Kind: runtime.EventLLM, Round: 2,
		DurationMS: 12.5, Payload: json.RawMessage(`{}`), Crdate: t0}
	events, err := s.Events(t.Context(), r.UID, -1)
	if err != nil || len(events) != 1 {
		t.Fatalf("Events: got %+v, %v, want one event", events, err)
	}
	for _, got := range []runtime.Event{ev, events[0]} {
		if got.UID != want.UID || got.Sequence != 0 || string(got.Payload) != "{}" ||
			got.DurationMS != 12.5 || got.Round != 2 || got.Kind != want.Kind || got.Crdate != t0 {
			t.Fatalf("event: got %+v, want %+v", got, want)
		}
	}
	if events, err := s.Events(t.Context(), r.UID, 0); err != nil || len(events) != 0 {
		t.Fatalf("Events(after 0): got %+v, %v, want none", events, err)
	}

	_, err = s.AppendEvent(t.Context(), runtime.NewEvent{Run: 9999, Kind: runtime.EventLLM, Now: t0})
	if !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("AppendEvent to a missing run: got %v, want runtime.ErrNotFound", err)
	}
	_, err = s.AppendEvent(t.Context(), runtime.NewEvent{Run: r.UID, Kind: runtime.EventLLM,
		Payload: json.RawMessage(`{"unterminated`), Now: t0})
	if err == nil {
		t.Fatalf("AppendEvent with a non-JSON payload: got nil error, want a refusal")
	}
}
