package engine

import (
	"context"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// RequestChanges sends a reviewer's instructions back to the model instead of approving or
// denying the turn: none of its pending calls runs, and each call's tool result tells the model
// who asked for what ("changes requested by Ada (reviewer): <text> — revise the call and try
// again"). It is its own decision kind (request_changes), decided at once on a turn that needs
// several approvals, like a denial. Errors are those of Approve.
func (r *Runtime) RequestChanges(ctx context.Context, actor runtime.Actor, uuid string, c runtime.ChangeRequest) (runtime.Outcome, error) {
	return r.decide(ctx, actor, uuid, changeRequest{c})
}

// changeRequest is the decision kind of a reviewer's request for changes to a paused turn.
type changeRequest struct{ runtime.ChangeRequest }

// spec: a change request decides on a run waiting for approval, as a denial does (no
// four-eyes, no tool gate); its text is stored as the decision's reason.
func (c changeRequest) spec() kindSpec {
	return kindSpec{
		name: runtime.DecisionRequestChanges, waitsIn: runtime.StatusWaitingApproval, action: runtime.ActionApprove,
		notAwaiting: runtime.CodeRunNotAwaitingApproval, stale: runtime.CodeStaleApprovalTurn,
		key: c.IdempotencyKey, digest: c.TurnDigest, pinDigest: c.PinDigest, audit: c.Audit,
		reason: c.Text, unrecorded: runtime.CodeRunStateUnavailable,
		counted: contApproval, accepted: runtime.DecisionRequestChanges, quorum: true, refusalAudit: approvalRefusal,
	}
}

// prepare refuses a request without instructions and leaves what each call's result says.
func (c changeRequest) prepare(_ context.Context, _ *Runtime, d *decision) *runtime.Error {
	if c.Text == "" {
		return newError(runtime.CodeInvalidRequest, d.run.UUID, "say what should change: the request for changes is empty")
	}
	d.note = changesRequestedBy(d.actor, c.Text)
	return nil
}

// gate: asking for changes runs nothing, so it is not gated.
func (changeRequest) gate(runtime.SuspendedState, *tool.Registry) (gateRule, bool) {
	return gateRule{}, false
}

// event records who asked for changes (never the text, which the event's content keeps as
// the run's privacy mode allows).
func (changeRequest) event(d *decision) map[string]any {
	payload := map[string]any{"changesRequested": true, "decidedBy": d.actor.UserUID}
	if svc := d.actor.ServiceName(); svc != "" {
		payload["decidedByService"] = svc
	}
	return payload
}

// answer refuses every pending call with the request (the continuation's note).
func (changeRequest) answer(_ *segment, _ runtime.SuspendedState, c continuation, _ *schema.Schema) (func(runtime.PendingCall) planStep, error) {
	return func(pc runtime.PendingCall) planStep {
		return planStep{Call: pc, Refusal: c.Note}
	}, nil
}

// changesRequestedBy is what the model is told of a request for changes: "changes requested
// by <name> (<role>): <text> — revise the call and try again" (a service account by its name).
func changesRequestedBy(a runtime.Actor, text string) string {
	return "changes requested by " + deciderShown(a) + ": " + text + " — revise the call and try again"
}
