package engine

import (
	"context"
	"fmt"

	"runsdesk/runtime"
	"runsdesk/runtime/guardrail"
)

// Error classes of a run a guardrail ended.
const (
	classGuardrailDenied   = "GuardrailDenied"
	classResponseBlocked   = "ResponseBlocked"
	classGuardrailFailed   = "GuardrailFailed"
	classGuardrailApproval = "GuardrailApprovalRequired"
)

// guardCalls runs the argument guardrails over the offered calls of a turn (a call that is
// not offered, or whose arguments are not an object, is refused anyway and not checked),
// before the approval scan and before anything executes. A denial fails the run
// policy_denied (the call answered with a refusal and a tool_denied governance row); else a
// require_approval pauses the turn for approval, each asked call carrying the guardrail's
// reason. ended reports that the segment ended.
func (s *segment) guardCalls(ctx context.Context, calls []runtime.PendingCall) (outcome, bool) {
	if !s.rails.Checks(guardrail.OnArguments) {
		return "", false
	}
	verdicts, err := whileHeld(ctx, s, func(hctx context.Context) ([]guardrail.Verdict, error) {
		out := make([]guardrail.Verdict, len(calls))
		for i, c := range calls {
			if _, ok := s.offeredTool(c.Function.Name); !ok || c.ArgumentsError != "" {
				continue
			}
			out[i] = s.rails.Check(hctx, guardrail.Subject{Run: s.run.UUID, On: guardrail.OnArguments,
				Tool: c.Function.Name, Arguments: c.Function.Arguments})
			if err := hctx.Err(); err != nil {
				return nil, err
			}
			if out[i].Decision == guardrail.Deny {
				break
			}
		}
		return out, nil
	})
	if err != nil {
		return s.stop(ctx, err), true
	}
	var asks []runtime.GuardrailApproval
	for i, v := range verdicts {
		switch v.Decision {
		case guardrail.Deny:
			return s.blockCall(ctx, calls[i], v), true
		case guardrail.RequireApproval:
			asks = append(asks, runtime.GuardrailApproval{Index: i, Tool: calls[i].Function.Name, Guardrail: v.Guardrail, Reason: v.Reason})
		}
	}
	if len(asks) == 0 {
		return "", false
	}
	s.governLast(runtime.GovernanceApprovalRequired, runtime.ReasonGuardrailApproval, asks[0].Tool, asks[0].Guardrail,
		fmt.Sprintf("on=arguments; calls=%d", len(asks)))
	return s.suspend(ctx, runtime.StatusWaitingApproval, calls, nil, asks), true
}

// blockCall ends the run whose call c a guardrail denied: the call is answered with a
// refusal (its tool event carrying the tool_denied row) and the run fails policy_denied.
func (s *segment) blockCall(ctx context.Context, c runtime.PendingCall, v guardrail.Verdict) outcome {
	msg := fmt.Sprintf("Error: tool %q was blocked by a guardrail and was not executed.", c.Function.Name)
	if err := s.call(ctx, planStep{Call: c, Refusal: msg}); err != nil {
		return s.stop(ctx, err)
	}
	reason, class := denial(v, classGuardrailDenied)
	s.governLast(runtime.GovernanceToolDenied, reason, c.Function.Name, v.Guardrail, verdictDetail(guardrail.OnArguments, v))
	return s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonPolicyDenied, class, false))
}

// guardOutput runs the output guardrails over the model's final text before the run
// completes: a denial fails it policy_denied (response_blocked), a require_approval fails it
// approval_denied (approval_required), as there is no call a person could approve. ended
// reports that the segment ended.
func (s *segment) guardOutput(ctx context.Context, text string) (outcome, bool) {
	if !s.rails.Checks(guardrail.OnOutput) {
		return "", false
	}
	v, err := whileHeld(ctx, s, func(hctx context.Context) (guardrail.Verdict, error) {
		v := s.rails.Check(hctx, guardrail.Subject{Run: s.run.UUID, On: guardrail.OnOutput, Output: text})
		return v, hctx.Err()
	})
	if err != nil {
		return s.stop(ctx, err), true
	}
	detail := verdictDetail(guardrail.OnOutput, v)
	switch v.Decision {
	case guardrail.Deny:
		reason, class := denial(v, classResponseBlocked)
		s.governLast(runtime.GovernanceResponseBlocked, reason, "", v.Guardrail, detail)
		return s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonPolicyDenied, class, false)), true
	case guardrail.RequireApproval:
		s.governLast(runtime.GovernanceApprovalRequired, runtime.ReasonGuardrailApproval, "", v.Guardrail, detail)
		return s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonApprovalDenied, classGuardrailApproval, false)), true
	}
	return "", false
}

// denial is the governance reason and error class of a denying verdict: a failed guardrail's,
// or those of a guardrail that denied (class).
func denial(v guardrail.Verdict, class string) (string, string) {
	if v.Failed {
		return runtime.ReasonGuardrailFailed, classGuardrailFailed
	}
	return runtime.ReasonGuardrailDenied, class
}

// verdictDetail is the governance detail of a verdict: what was checked and the decision, and
// for a failed guardrail why it failed (the desk's own words). A guardrail's reason is never
// stored there: it may repeat the content it judged.
func verdictDetail(on string, v guardrail.Verdict) string {
	d := "on=" + on + "; decision=" + v.Decision
	if v.Failed {
		d += "; failure=" + v.Reason
	}
	return d
}

// governLast attaches a governance row to the segment's last recorded step (the model call
// whose turn or text a guardrail judged, or the refused call's tool event), so the row is
// stored with that step.
func (s *segment) governLast(decision, reason, tool, rail, detail string) {
	if len(s.pending) == 0 {
		return
	}
	g := s.governance(governanceNote{Decision: decision, Reason: reason, Detail: detail}, tool)
	g.Guardrail = rail
	s.governStep(g)
}
