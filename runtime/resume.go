package runtime

import (
	"context"
	"encoding/json"
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
	var answer func(PendingCall) (json.RawMessage, string)
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
		args, refusal := answer(pc)
		steps[i] = planStep{Call: pc, Args: args, Refusal: refusal}
	}
	if err := s.runPlan(ctx, steps); err != nil {
		return s.stop(ctx, err)
	}
	return s.loop(ctx)
}

func (s *segment) approvalAnswer(approved bool) func(PendingCall) (json.RawMessage, string) {
	return func(pc PendingCall) (json.RawMessage, string) {
		name := pc.Function.Name
		if !approved {
			return nil, fmt.Sprintf("Error: tool %q was denied by the operator.", name)
		}
		t, ok := s.offeredTool(name)
		if !ok {
			return nil, fmt.Sprintf("Error: tool %q is no longer permitted and was not executed.", name)
		}
		if _, needs := tool.InputSchemaOf(t); needs {
			return nil, fmt.Sprintf("Error: tool %q requires user input that was not provided.", name)
		}
		return nil, ""
	}
}

// inputAnswer answers each call with data checked against the stored schema (see
// checkedSchema): the input target (once) runs with the overlay bounded to the schema's
// declared keys; any other input tool and any approval-bound tool is refused.
func (s *segment) inputAnswer(st SuspendedState, data map[string]any, validated *schema.Schema) (func(PendingCall) (json.RawMessage, string), error) {
	sch, err := s.checkedSchema(st, data, validated)
	if err != nil {
		return nil, err
	}
	declared := sch.DeclaredKeys()
	target := st.InputTool()
	used := false
	return func(pc PendingCall) (json.RawMessage, string) {
		name := pc.Function.Name
		t, ok := s.offeredTool(name)
		if !ok {
			return nil, fmt.Sprintf("Error: tool %q is no longer permitted and was not executed.", name)
		}
		_, needsInput := tool.InputSchemaOf(t)
		switch {
		case name == target && !used && needsInput:
			used = true
			var modelArgs map[string]any
			if err := unmarshalNumber(pc.Function.Arguments, &modelArgs); err != nil {
				modelArgs = map[string]any{}
			}
			return mustJSON(schema.Overlay(modelArgs, data, declared)), ""
		case needsInput:
			return nil, fmt.Sprintf("Error: tool %q requires user input that was not provided.", name)
		case tool.NeedsApproval(t):
			s.r.log.Warn("write_unapproved refused on input resume", "run", s.run.UUID, "tool", name)
			return nil, fmt.Sprintf("Error: tool %q requires approval that was not given.", name)
		}
		return nil, ""
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
