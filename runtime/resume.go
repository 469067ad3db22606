package runtime

import (
	"context"
	"fmt"

	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// continuePlan resumes a segment from its last checkpoint: the transcript and counters in
// progress, then the calls still to answer, then the loop.
func (s *segment) continuePlan(ctx context.Context, progress SuspendedState, steps []planStep) outcome {
	s.msgs = progress.Messages
	s.iter, s.prompt, s.compl = progress.Iterations, progress.PromptTokens, progress.CompletionTokens
	if err := s.runPlan(ctx, steps); err != nil {
		return s.stop(ctx, err)
	}
	return s.loop(ctx)
}

// resume continues a paused run from its stored state with the person's decision
// (approval or input), then re-enters the loop with the counters seeded. validated
// is the compiled input schema of st that c's data was checked against by the decision, or
// nil to validate the data again.
func (s *segment) resume(ctx context.Context, st SuspendedState, c continuation, validated *schema.Schema) outcome {
	s.msgs = st.Messages
	s.iter, s.prompt, s.compl = st.Iterations, st.PromptTokens, st.CompletionTokens
	var answer func(PendingCall) planStep
	switch c.Kind {
	case contApproval:
		answer = s.approvalAnswer(c.Approved)
	case contInput:
		a, err := s.inputAnswer(st, c.Data, validated)
		if err != nil {
			s.r.log.Error("input no longer valid at resume", "run", s.run.UUID, "err", err)
			return s.settle(ctx, s.totals(StatusFailed, ReasonPolicyDenied, "InputRevalidationFailed", false))
		}
		answer = a
	default:
		return s.fail(ctx, "UnknownContinuation")
	}
	steps := make([]planStep, len(st.PendingCalls))
	for i, pc := range st.PendingCalls {
		steps[i] = answer(pc)
	}
	if err := s.runPlan(ctx, steps); err != nil {
		return s.stop(ctx, err)
	}
	return s.loop(ctx)
}

// approvalAnswer plans each call of an approved or denied turn. A denial and a tool no longer
// offered are gate refusals (tool_denied); an input tool is refused without a governance row,
// as the pause's protocol, not a policy, rules it out.
func (s *segment) approvalAnswer(approved bool) func(PendingCall) planStep {
	return func(pc PendingCall) planStep {
		name := pc.Function.Name
		if !approved {
			return refused(pc, fmt.Sprintf("Error: tool %q was denied by the operator.", name),
				governanceNote{Decision: GovernanceToolDenied, Reason: ReasonDeniedByOperator})
		}
		t, ok := s.offeredTool(name)
		if !ok {
			return noLongerPermitted(pc)
		}
		if _, needs := tool.InputSchemaOf(t); needs {
			return planStep{Call: pc, Refusal: fmt.Sprintf("Error: tool %q requires user input that was not provided.", name)}
		}
		return planStep{Call: pc}
	}
}

// noLongerPermitted refuses a call whose tool left the run's offered set while it waited.
func noLongerPermitted(pc PendingCall) planStep {
	return refused(pc, fmt.Sprintf("Error: tool %q is no longer permitted and was not executed.", pc.Function.Name),
		governanceNote{Decision: GovernanceToolDenied, Reason: ReasonToolNoLongerPermitted})
}

// inputAnswer answers each call with data checked against the stored schema (see
// checkedSchema): the input target (once) runs with the overlay bounded to the schema's
// declared keys; any other input tool and any approval-bound tool is refused, the latter as
// write_unapproved (detail inputTool=<target>), a tool no longer offered as tool_denied.
func (s *segment) inputAnswer(st SuspendedState, data map[string]any, validated *schema.Schema) (func(PendingCall) planStep, error) {
	sch, err := s.checkedSchema(st, data, validated)
	if err != nil {
		return nil, err
	}
	declared := sch.DeclaredKeys()
	target := st.InputTool()
	used := false
	return func(pc PendingCall) planStep {
		name := pc.Function.Name
		t, ok := s.offeredTool(name)
		if !ok {
			return noLongerPermitted(pc)
		}
		_, needsInput := tool.InputSchemaOf(t)
		switch {
		case name == target && !used && needsInput:
			used = true
			var modelArgs map[string]any
			if err := unmarshalNumber(pc.Function.Arguments, &modelArgs); err != nil {
				modelArgs = map[string]any{}
			}
			return planStep{Call: pc, Args: mustJSON(schema.Overlay(modelArgs, data, declared))}
		case needsInput:
			return planStep{Call: pc, Refusal: fmt.Sprintf("Error: tool %q requires user input that was not provided.", name)}
		case tool.NeedsApproval(t):
			s.r.log.Warn("write_unapproved refused on input resume", "run", s.run.UUID, "tool", name)
			return refused(pc, fmt.Sprintf("Error: tool %q requires approval that was not given.", name),
				governanceNote{Decision: GovernanceWriteUnapproved, Reason: ReasonInputResumeWithoutApproval, Detail: "inputTool=" + target})
		}
		return planStep{Call: pc}
	}, nil
}

// checkedSchema returns validated, the schema of st the decision checked data against, or
// else compiles st's schema and validates data again: a continuation recovered from the queue
// carries data no one checked in this process.
func (s *segment) checkedSchema(st SuspendedState, data map[string]any, validated *schema.Schema) (*schema.Schema, error) {
	if validated != nil {
		return validated, nil
	}
	sch, err := s.r.schemas.Compile(st.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("compile the input schema: %w", err)
	}
	if errs := sch.Validate(data); len(errs) > 0 {
		return nil, fmt.Errorf("%d field(s) invalid", len(errs))
	}
	return sch, nil
}
