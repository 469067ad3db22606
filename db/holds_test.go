package db

import (
	"errors"
	"testing"

	"runsdesk/runtime"
)

// TestHoldHeartbeat: a held suspension starts the heartbeat, which RenewHold moves while the
// run waits on that pause and FindLapsedHolds finds once it is old; a pause not held, another
// pause of the run, or a run that moved on refuses the renewal (ErrGuard).
func TestHoldHeartbeat(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	held := runningRun(t, s, "w:1")
	if err := s.Suspend(ctx, held.UID, "w:1", runtime.Suspension{Status: runtime.StatusWaitingInput, State: "sealed", Held: true}, now1); err != nil {
		t.Fatal(err)
	}
	plain := runningRun(t, s, "w:2")
	if err := s.Suspend(ctx, plain.UID, "w:2", runtime.Suspension{Status: runtime.StatusWaitingInput, State: "sealed"}, now1); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.FindByUID(ctx, held.UID); r.HoldHeartbeat != now1 {
		t.Fatalf("hold heartbeat after a held suspension = %d, want %d", r.HoldHeartbeat, now1)
	}
	if err := s.RenewHold(ctx, held.UID, now1, now1+5); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if err := s.RenewHold(ctx, held.UID, now1, now1+5); err != nil {
		t.Fatalf("renew within the same second: %v", err)
	}
	for name, err := range map[string]error{
		"a pause not held":     s.RenewHold(ctx, plain.UID, now1, now1+6),
		"another pause":        s.RenewHold(ctx, held.UID, now1-1, now1+6),
		"a run that is not it": s.RenewHold(ctx, held.UID+plain.UID+1, now1, now1+6),
	} {
		if !errors.Is(err, runtime.ErrGuard) {
			t.Errorf("renewing %s: %v, want ErrGuard", name, err)
		}
	}
	if lapsed, err := s.FindLapsedHolds(ctx, now1+5, 10); err != nil || len(lapsed) != 0 {
		t.Fatalf("lapsed before the heartbeat is old: %+v, %v", lapsed, err)
	}
	lapsed, err := s.FindLapsedHolds(ctx, now1+6, 10)
	if err != nil || len(lapsed) != 1 || lapsed[0].UID != held.UID || lapsed[0].UUID != held.UUID {
		t.Fatalf("lapsed = %+v, %v; want the held run only", lapsed, err)
	}
	runs, err := s.FindHolds(ctx, []int64{held.UID, plain.UID})
	if err != nil || len(runs) != 2 {
		t.Fatalf("FindHolds = %+v, %v", runs, err)
	}
	if err := s.Cancel(ctx, held.UID, now1+7); err != nil {
		t.Fatal(err)
	}
	if err := s.RenewHold(ctx, held.UID, now1, now1+8); !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("renewing a cancelled run: %v", err)
	}
}
