package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// contExpiry is the kind name of an expiry's decision, event and continuation.
const contExpiry = runtime.DecisionExpiry

// expiry is the decision kind of a pause's expiry that denies it or answers it with the
// configured input, decided by the system (runtime.ExpiryActor) through the same steps as a
// person's decision: claim guarded by the pause as read, decision, event and audit in the
// claim's transaction, continuation on a worker. It never approves.
type expiry struct {
	status runtime.Status
	digest string
	// pause is the suspended_at of the pause the expirer found due.
	pause int64
	// action is wait.Deny or wait.Answer; reply the input an Answer submits.
	action wait.Action
	reply  json.RawMessage
	// note is the tool result a denial gives each pending call; now the expirer's clock.
	note string
	now  int64
}

// expiryKey is the idempotency key of the expiry of the pause that began at suspendedAt: one
// per pause, so a second expiry of it is refused by the decision's unique key; it names the
// action, so a late decision can be told what the expiry did.
func expiryKey(action wait.Action, suspendedAt int64) string {
	return fmt.Sprintf("%s:%s:%d", contExpiry, action, suspendedAt)
}

// expiryAction is the action recorded in an expiry decision's key ("" when it is none).
func expiryAction(key string) string {
	rest, ok := strings.CutPrefix(key, contExpiry+":")
	if !ok {
		return ""
	}
	action, _, _ := strings.Cut(rest, ":")
	return action
}

// spec: an expiry decides a pause of either kind, past its deadline, as the system; a
// person's decision that comes after it is refused as run_expired.
func (e expiry) spec() kindSpec {
	s := kindSpec{
		name: contExpiry, waitsIn: e.status, action: runtime.ActionExpire,
		notAwaiting: runtime.CodeRunNotAwaitingApproval, stale: runtime.CodeStaleApprovalTurn,
		key: expiryKey(e.action, e.pause), digest: e.digest, audit: &runtime.AuditNote{Action: "expiry", Outcome: string(e.action)},
		unrecorded: runtime.CodeRunStateUnavailable, resumeFailure: "InputRevalidationFailed",
		afterDeadline: true, supersede: supersededByExpiry, counted: contExpiry, accepted: string(e.action),
	}
	if e.status == runtime.StatusWaitingInput {
		s.notAwaiting, s.stale = runtime.CodeRunNotAwaitingInput, runtime.CodeStaleInputTurn
	}
	return s
}

// prepare refuses a pause that is not the one found due or not due (stale), and leaves in d
// the note a denial answers with or the configured answer, checked against the pause's
// schema. An answer on a pause that is not for input, or that no longer validates (the
// schema changed since it was applied), is refused as invalid_input_submission: the expirer
// then denies instead, since an expiry never guesses.
func (e expiry) prepare(ctx context.Context, r *Runtime, d *decision) *runtime.Error {
	uuid := d.run.UUID
	if d.run.SuspendedAt != e.pause || d.run.ExpiresAt <= 0 || d.run.ExpiresAt > e.now {
		return staleError(d.spec, uuid)
	}
	d.note = e.note
	if e.action != wait.Answer {
		return nil
	}
	if !d.state.IsInputPause() {
		return newError(runtime.CodeInvalidInputSubmission, uuid, "an expiry answers only a pause for input")
	}
	sch, err := r.schemas.Compile(d.state.InputSchema)
	if err != nil {
		return &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: uuid, Message: "the stored input schema does not compile",
			Err: fmt.Errorf("%w: %w", runtime.ErrNoInputForm, err)}
	}
	var data map[string]any
	if err := unmarshalNumber(e.reply, &data); err != nil || data == nil {
		return newError(runtime.CodeInvalidInputSubmission, uuid, "the configured answer is not a JSON object")
	}
	if errs := sch.Validate(data); len(errs) > 0 {
		return &runtime.Error{Code: runtime.CodeInvalidInputSubmission, RunUUID: uuid, Fields: errs,
			Message: fmt.Sprintf("the configured answer did not match the pause's schema (%d field(s))", len(errs))}
	}
	d.data, d.input = data, sch
	return nil
}

// gate: an expiry is not gated; it answers only what its policy, validated at apply, says.
func (expiry) gate(runtime.SuspendedState, *tool.Registry) (gateRule, bool) { return gateRule{}, false }

// event records what the expiry did and who did it, never the answer's values.
func (e expiry) event(d *decision) map[string]any {
	action := wait.Deny
	if d.data != nil {
		action = wait.Answer
	}
	return map[string]any{"action": string(action), "by": d.actor.Name}
}

// answer: with data the expiry answers like a person's input (input.answer); without, it
// denies every pending call with its note (tool_denied, reason expired).
func (expiry) answer(s *segment, st runtime.SuspendedState, c continuation, validated *schema.Schema) (func(runtime.PendingCall) planStep, error) {
	if c.Data != nil {
		return input{}.answer(s, st, c, validated)
	}
	return func(pc runtime.PendingCall) planStep {
		return refused(pc, c.Note, governanceNote{Decision: runtime.GovernanceToolDenied, Reason: runtime.ReasonDeniedByExpiry})
	}, nil
}

// supersededByExpiry refuses a decision on run, which its expiry (latest) decided, as
// run_expired naming what the expiry did.
func supersededByExpiry(run runtime.Run, latest runtime.Decision) *runtime.Error {
	return expiredError(run, expiryAction(latest.IdempotencyKey))
}

// expiredError refuses a person's decision on run, whose wait expired (at run.ExpiresAt, or
// as the caller sets); action is what the expiry did ("" = what its policy will do).
func expiredError(run runtime.Run, action string) *runtime.Error {
	if action == "" {
		if dl, err := wait.DecodeDeadline(run.WaitPolicy); err == nil {
			action = string(dl.Final(run.Escalated))
		}
	}
	return &runtime.Error{Code: runtime.CodeRunExpired, RunUUID: run.UUID, ExpiredAt: run.ExpiresAt, Expiry: action,
		Message: "the run's wait expired; the decision was not used"}
}
