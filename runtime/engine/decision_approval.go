package engine

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// Approve records a verdict on a run waiting for approval and hands the continuation to a
// worker. Errors are *runtime.Error with the catalogue's codes (docs/state-machine.md); the run is
// unchanged by any of them.
func (r *Runtime) Approve(ctx context.Context, actor runtime.Actor, uuid string, d runtime.ApprovalDecision) (runtime.Outcome, error) {
	return r.decide(ctx, actor, uuid, approval{d})
}

// approval is the decision kind of a verdict on a paused turn.
type approval struct{ runtime.ApprovalDecision }

// spec: an approval decides on a run waiting for approval; approving (not denying) is
// subject to four-eyes, and an approval whose event cannot be recorded is not auditable.
func (a approval) spec() kindSpec {
	s := kindSpec{
		name: contApproval, waitsIn: runtime.StatusWaitingApproval, action: runtime.ActionApprove,
		notAwaiting: runtime.CodeRunNotAwaitingApproval, stale: runtime.CodeStaleApprovalTurn,
		key: a.IdempotencyKey, digest: a.TurnDigest, pinDigest: a.PinDigest, approved: a.Approved, audit: a.Audit,
		reason: a.Reason, fourEyes: a.Approved, unrecorded: runtime.CodeRunStateUnavailable,
		counted: contApproval, accepted: runtime.Verdict(a.Approved), quorum: true, refusalAudit: approvalRefusal,
	}
	if a.Approved {
		s.unrecorded = runtime.CodeApprovalNotAuditable
	}
	return s
}

// prepare: a denial leaves the note its continuation tells the model (deniedBy); an approval
// without edits needs nothing of the pause beyond its digest; a batch's decision never
// carries edits; edits are checked by prepareEdits.
func (a approval) prepare(ctx context.Context, r *Runtime, d *decision) *runtime.Error {
	if !a.Approved {
		d.note = deniedBy(d.actor, a.Reason)
	}
	if len(a.Edits) == 0 {
		return nil
	}
	if a.Batch {
		return newError(runtime.CodeInvalidRequest, d.run.UUID, "a batch decision never carries edits")
	}
	return r.prepareEdits(ctx, d, a.ApprovalDecision)
}

// gate: a denial is not gated; an approval checks every pending call that declares a write
// (an unknown tool counts as one), and a turn a guardrail asked a person to approve is
// approved by a person only: never by a service account or a standing approval.
func (a approval) gate(st runtime.SuspendedState, reg *tool.Registry) (gateRule, bool) {
	if !a.Approved {
		return gateRule{}, false
	}
	rule := gateRule{code: runtime.CodeApproverNotPermitted, decider: "approver"}
	if len(st.GuardrailApprovals) > 0 {
		rule.noService, rule.noServiceText = runtime.ReasonServiceAccountGuardrail, "a service account may not approve a call a guardrail asked a person to approve"
		rule.noRule, rule.noRuleText = runtime.ReasonRuleGuardrail, "a standing approval may not approve a call a guardrail asked a person to approve"
	}
	for _, name := range st.ToolNames() {
		if t, known := reg.Get(name); known && !tool.EffectOf(t).IsWrite() {
			continue
		}
		rule.tools = append(rule.tools, name)
	}
	return rule, true
}

// event records the verdict and who gave it (a service account or standing approvals by
// name), reasonGiven when the decider gave a reason (never its text), and for edits what
// prepareEdits noted (edited, patchDigest, changedPaths).
func (a approval) event(d *decision) map[string]any {
	payload := map[string]any{"approved": a.Approved, "decidedBy": d.actor.UserUID}
	if a.Reason != "" {
		payload["reasonGiven"] = true
	}
	if svc := d.actor.ServiceName(); svc != "" {
		payload["decidedByService"] = svc
	}
	if d.actor.Rule != nil {
		payload["decidedByRule"] = strings.Join(d.actor.Rule.Names, ",")
	}
	maps.Copy(payload, d.eventExtra)
	return payload
}

// answer plans each call of an approved or denied turn. A denial and a tool no longer
// offered are gate refusals (tool_denied); a denial's tool result says who denied and why (the
// continuation's note; a continuation stored without one names the operator). An input tool
// is refused without a governance row, as the pause's protocol, not a policy, rules it out;
// an edited call runs with the approved arguments (editedStep); a call that runs is marked
// approved.
func (approval) answer(s *segment, _ runtime.SuspendedState, c continuation, _ *schema.Schema) (func(runtime.PendingCall) planStep, error) {
	return func(pc runtime.PendingCall) planStep {
		name := pc.Function.Name
		if !c.Approved {
			why := c.Note
			if why == "" {
				why = "denied by the operator."
			}
			return refused(pc, fmt.Sprintf("Error: tool %q was %s", name, why),
				governanceNote{Decision: runtime.GovernanceToolDenied, Reason: runtime.ReasonDeniedByOperator})
		}
		t, ok := s.offeredTool(name)
		if !ok {
			return noLongerPermitted(pc)
		}
		if _, needs := tool.InputSchemaOf(t); needs {
			return planStep{Call: pc, Refusal: fmt.Sprintf("Error: tool %q requires user input that was not provided.", name)}
		}
		step := planStep{Call: pc}
		if edited, ok := c.Data[pc.ID]; ok {
			step = s.editedStep(pc, t, edited)
		}
		step.Approved = step.Refusal == ""
		return step
	}, nil
}

// deciderShown is who decided as the model is told: "<name> (<role>)" for a person (the display
// name, else the username), "service account <name>" for a service account.
func deciderShown(a runtime.Actor) string {
	if a.Role == runtime.RoleService {
		return "service account " + a.Name
	}
	return fmt.Sprintf("%s (%s)", a.Shown(), a.Role)
}

// deniedBy is what the model is told about who denied a turn and why: "denied by <name>
// (<role>): <reason>" for a person (the display name, else the username), "denied by service
// account <name>: <reason>" for a service account, and "; no reason given" instead of the
// reason when there is none.
func deniedBy(a runtime.Actor, reason string) string {
	who := deciderShown(a)
	if reason == "" {
		return "denied by " + who + "; no reason given"
	}
	return "denied by " + who + ": " + reason
}
