package engine

import (
	"context"
	"fmt"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
)

// continuePlan resumes a segment from its last checkpoint: the transcript and counters in
// progress, then the calls still to answer, then the loop.
func (s *segment) continuePlan(ctx context.Context, progress runtime.SuspendedState, steps []planStep) outcome {
	s.msgs = progress.Messages
	s.seedCounters(progress.PauseState)
	if err := s.runPlan(ctx, steps); err != nil {
		return s.stop(ctx, err)
	}
	return s.loop(ctx)
}

// resume continues a paused run from its stored state with the decision c of kind k, then
// re-enters the loop with the counters seeded. validated is the compiled input schema of st
// that c's data was checked against by the decision, or nil to check the data again.
func (s *segment) resume(ctx context.Context, k decisionKind, st runtime.SuspendedState, c continuation, validated *schema.Schema) outcome {
	s.msgs = st.Messages
	s.seedCounters(st.PauseState)
	answer, err := k.answer(s, st, c, validated)
	if err != nil {
		s.r.log.Error("decision no longer valid at resume", "run", s.run.UUID, "kind", c.Kind, "err", err)
		return s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonPolicyDenied, k.spec().resumeFailure, false))
	}
	steps := make([]planStep, len(st.PendingCalls))
	for i, pc := range st.PendingCalls {
		steps[i] = answer(pc)
	}
	rest, err := restOf(st.Elicitation)
	if err != nil {
		s.r.log.Error("stored state corrupt at resume", "run", s.run.UUID, "err", err)
		return s.fail(ctx, "CorruptSuspendedState")
	}
	steps = append(steps, rest...)
	if err := s.runPlan(ctx, steps); err != nil {
		return s.stop(ctx, err)
	}
	return s.loop(ctx)
}

// noLongerPermitted refuses a call whose tool left the run's offered set while it waited.
func noLongerPermitted(pc runtime.PendingCall) planStep {
	return refused(pc, fmt.Sprintf("Error: tool %q is no longer permitted and was not executed.", pc.Function.Name),
		governanceNote{Decision: runtime.GovernanceToolDenied, Reason: runtime.ReasonToolNoLongerPermitted})
}
