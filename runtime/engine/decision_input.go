package engine

import (
	"context"
	"fmt"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// SubmitInput validates s against the stored schema before anything is claimed (an invalid
// submission changes nothing and returns InvalidInputSubmission with per-field errors and the
// run's view as checked, Error.View), then claims the run, records the input event (never the
// values) and hands the continuation, which overlays the values onto the tool call, to a
// worker.
//
// On a remote server's request for input (an elicitation pause) the validated data is the
// accept answer sent to the server; a submission after the request expired is refused
// (ElicitationExpired) and the request answered cancel by the desk.
func (r *Runtime) SubmitInput(ctx context.Context, actor runtime.Actor, uuid string, s runtime.InputSubmission) (runtime.Outcome, error) {
	return r.expireOnRefusal(ctx, uuid)(r.decide(ctx, actor, uuid, input{s}))
}

// input is the decision kind of a submission to a run waiting for input.
type input struct{ runtime.InputSubmission }

// spec: a submission decides on a run waiting for input.
func (s input) spec() kindSpec {
	return kindSpec{
		name: contInput, waitsIn: runtime.StatusWaitingInput, action: runtime.ActionSubmit,
		notAwaiting: runtime.CodeRunNotAwaitingInput, stale: runtime.CodeStaleInputTurn,
		key: s.IdempotencyKey, digest: s.TurnDigest, pinDigest: s.PinDigest, audit: s.Audit,
		unrecorded: runtime.CodeRunStateUnavailable, resumeFailure: "InputRevalidationFailed",
		counted: contInput, accepted: outcomeSubmitted, refusalAudit: inputRefusal,
	}
}

// prepare compiles the pause's schema and leaves in d the data the continuation carries and
// the schema it was validated against: s.Data as given, or s.Form coerced; a form posted to a
// remote server's confirmation (a request without fields) is the answer {}. A schema that does
// not compile is a corrupt state (rehydrate refused an unusable one). A form is checked
// against the pause's digest before its values, so a stale form is stale whatever it holds.
func (s input) prepare(ctx context.Context, r *Runtime, d *decision) *runtime.Error {
	uuid := d.run.UUID
	if p := d.state.Elicitation; p != nil && r.requestOver(d.run, p) {
		return elicitationExpiredError(uuid, p)
	}
	sch, err := r.schemas.Compile(d.state.InputSchema)
	if err != nil {
		return &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: uuid, Message: "the stored input schema does not compile",
			Err: fmt.Errorf("%w: %w", runtime.ErrNoInputForm, err)}
	}
	data, errs := s.Data, []schema.FieldError(nil)
	if s.Form == nil {
		checked := data
		if checked == nil {
			checked = map[string]any{}
		}
		errs = sch.Validate(checked)
	} else {
		if !schema.DigestEqual(s.TurnDigest, d.digest) {
			return staleError(d.spec, uuid)
		}
		switch {
		case sch.HasForm():
			data, errs = sch.CoerceAndValidate(s.Form)
		case d.state.Elicitation != nil:
			data = map[string]any{}
			errs = sch.Validate(data)
		default:
			return &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: uuid, Message: "the stored input schema yields no form field", Err: runtime.ErrNoInputForm}
		}
	}
	if len(errs) > 0 {
		return r.invalidInput(ctx, d, sch, errs)
	}
	d.data, d.input = data, sch
	if err := r.hook(runtime.HookAfterValidation, d.run.UID); err != nil {
		return storeError(uuid, err)
	}
	return nil
}

// invalidInput is the InvalidInputSubmission error of errs, carrying the run's view as it was
// checked (its Pause.Form the compiled schema sch), so a form page needs nothing read again.
func (r *Runtime) invalidInput(ctx context.Context, d *decision, sch *schema.Schema, errs []schema.FieldError) *runtime.Error {
	reg, err := r.displayToolset(ctx)
	if err == nil {
		_, reg, err = withAdHoc(d.cfg, reg, d.state.PauseState)
	}
	if err != nil {
		return storeError(d.run.UUID, err)
	}
	view := runtime.RunView{Run: stripped(d.run), Pause: pauseOf(d.run, d.state.PauseState, d.digest, reg, offeredSet(d.cfg, reg), policyOf(d.cfg), r.pins)}
	withForm(view.Pause, sch)
	view.Pause.Gate = decisionGate(d.actor, d.run, d.cfg, d.state.PauseState, reg, input{})
	return &runtime.Error{Code: runtime.CodeInvalidInputSubmission, RunUUID: d.run.UUID, Fields: errs, View: &view,
		Message: fmt.Sprintf("the submitted input did not match the required schema (%d field(s))", len(errs))}
}

// gate: a submission checks every pending call and the input target; a service account
// never submits.
func (s input) gate(st runtime.SuspendedState, _ *tool.Registry) (gateRule, bool) {
	tools := st.ToolNames()
	if !slices.Contains(tools, st.InputTool()) {
		tools = append(tools, st.InputTool())
	}
	return gateRule{
		code: runtime.CodeSubmitterNotPermitted, decider: "submitter", tools: tools,
		noService: runtime.ReasonServiceAccountSubmit, noServiceText: "a service account may not submit input; a person must",
	}, true
}

// event records who submitted, never the values.
func (s input) event(d *decision) map[string]any {
	return map[string]any{"submittedBy": d.actor.UserUID}
}

// answer answers each call with data checked against the stored schema (see checkedSchema):
// the input target (once) runs with the overlay bounded to the schema's declared keys; any
// other input tool and any approval-bound tool is refused, the latter as write_unapproved
// (detail inputTool=<target>), a tool no longer offered as tool_denied.
func (input) answer(s *segment, st runtime.SuspendedState, c continuation, validated *schema.Schema) (func(runtime.PendingCall) planStep, error) {
	sch, err := s.checkedSchema(st, c.Data, validated)
	if err != nil {
		return nil, err
	}
	if st.Elicitation != nil {
		return elicitedAnswer(s, st, tool.ElicitationAnswer{Action: tool.ElicitAccept, Content: c.Data}), nil
	}
	declared := sch.DeclaredKeys()
	target := st.InputTool()
	used := false
	return func(pc runtime.PendingCall) planStep {
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
			return planStep{Call: pc, Args: mustJSON(schema.Overlay(modelArgs, c.Data, declared))}
		case needsInput:
			return planStep{Call: pc, Refusal: fmt.Sprintf("Error: tool %q requires user input that was not provided.", name)}
		case tool.NeedsApproval(t):
			s.r.log.Warn("write_unapproved refused on input resume", "run", s.run.UUID, "tool", name)
			return refused(pc, fmt.Sprintf("Error: tool %q requires approval that was not given.", name),
				governanceNote{Decision: runtime.GovernanceWriteUnapproved, Reason: runtime.ReasonInputResumeWithoutApproval, Detail: "inputTool=" + target})
		}
		return planStep{Call: pc}
	}, nil
}

// checkedSchema returns validated, the schema of st the decision checked data against, or
// else compiles st's schema and validates data again: a continuation recovered from the queue
// carries data no one checked in this process.
func (s *segment) checkedSchema(st runtime.SuspendedState, data map[string]any, validated *schema.Schema) (*schema.Schema, error) {
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
