package db

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"runsdesk/runtime"
)

// TestGovernanceRowsRideOnTheirStep: a governance row carried by an event is stored with the
// guarded write that stores the event, with the event's run, sequence and time, its fields
// cut to their columns (a 300-character tool name does not fail the write); a write whose
// guard misses stores neither. GovernanceEvents finds a run's rows by uid or by correlation
// id alone, oldest first, and no other run's.
func TestGovernanceRowsRideOnTheirStep(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	long := strings.Repeat("ž", 300)
	refused := func(run int64, tool string) runtime.NewEvent {
		return runtime.NewEvent{Run: run, Kind: runtime.EventTool, Round: 1, Payload: json.RawMessage(`{"toolName":"x"}`), Now: t0 + 1,
			Governance: []runtime.GovernanceEvent{{CorrelationID: "ignored-uuid-is-kept", Decision: runtime.GovernanceToolDenied,
				Reason: runtime.ReasonToolNotOffered, ToolName: tool, Sequence: 99}}}
	}
	run := runningRun(t, s, "w1")
	if err := s.Checkpoint(ctx, run.UID, lease("other", t0+2), "{}", "{}", refused(run.UID, "lost")); err == nil {
		t.Fatal("checkpoint by another owner succeeded")
	}
	events := append(stepEvents(run.UID), refused(run.UID, long))
	if err := s.Checkpoint(ctx, run.UID, lease("w1", t0+2), "{}", "{}", events...); err != nil {
		t.Fatalf("checkpoint with a long tool name: %v", err)
	}
	byCorrelation := runtime.GovernanceEvent{CorrelationID: run.UUID, Decision: runtime.GovernanceToolDenied, Reason: "gate", Sequence: runtime.NoSequence, Crdate: t0 + 3}
	if err := s.AppendGovernance(ctx, byCorrelation); err != nil {
		t.Fatal(err)
	}
	other := runningRun(t, s, "w2")
	if err := s.AppendGovernance(ctx, runtime.GovernanceEvent{Run: other.UID, CorrelationID: other.UUID, Decision: "tool_denied", Crdate: t0}); err != nil {
		t.Fatal(err)
	}

	rows, err := s.GovernanceEvents(ctx, run.UID, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want the step's and the correlated one", rows)
	}
	step := rows[0]
	if step.Run != run.UID || step.Sequence != 2 || step.Crdate != t0+1 || step.Reason != runtime.ReasonToolNotOffered ||
		utf8.RuneCountInString(step.ToolName) != govToolLen || step.CorrelationID != "ignored-uuid-is-kept" {
		t.Errorf("step row %+v: want run %d, sequence 2 (its event's), time %d, tool cut to %d characters", step, run.UID, t0+1, govToolLen)
	}
	if rows[1].Run != 0 || rows[1].CorrelationID != run.UUID || rows[1].Sequence != runtime.NoSequence {
		t.Errorf("correlated row %+v", rows[1])
	}
	wantEvents(t, s, run.UID, runtime.EventTool, runtime.EventLLM, runtime.EventTool)
}
