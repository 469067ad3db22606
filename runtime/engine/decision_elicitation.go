package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// elicited stops a plan whose call's remote server asked for input: the step as made (with
// the arguments it was made with), the server's request, and the plan steps after it. hold
// is set when the server asked during the call, which it holds open.
type elicited struct {
	step    planStep
	request tool.Elicitation
	rest    []planStep
	hold    *callHold
}

func (e *elicited) Error() string { return "the remote server asked for input" }

// suspendForInput pauses the run for the server's request: an input pause on the call, with
// the request's schema as the input schema and the request itself (message, state, the call's
// arguments, the steps still to answer, the expiry) stored with it.
func (s *segment) suspendForInput(ctx context.Context, el *elicited) outcome {
	rest, err := json.Marshal(el.rest)
	if err != nil {
		el.hold.end()
		return s.fail(ctx, "ElicitationNotStored")
	}
	if len(el.rest) == 0 {
		rest = nil
	}
	pause := &runtime.ElicitationPause{
		RequestID: el.request.RequestID, Message: el.request.Message, RequestState: el.request.State,
		Arguments: el.step.Args, Rest: rest, ExpiresAt: s.r.now().Add(el.request.Timeout).Unix(), Approved: el.step.Approved,
		Asked: el.request.Asked,
	}
	if el.hold != nil {
		pause.Holder = el.hold.owner
	}
	call := el.step.Call
	in := &pauseInput{tool: call.Function.Name, schema: el.request.Schema, elicitation: pause, hold: el.hold}
	return s.suspend(ctx, runtime.StatusWaitingInput, []runtime.PendingCall{call}, in, nil)
}

// restOf decodes the plan steps an elicitation pause keeps for after its call.
func restOf(p *runtime.ElicitationPause) ([]planStep, error) {
	if p == nil || len(p.Rest) == 0 {
		return nil, nil
	}
	var steps []planStep
	if err := unmarshalNumber(p.Rest, &steps); err != nil {
		return nil, fmt.Errorf("the steps after the elicited call are corrupt: %w", err)
	}
	return steps, nil
}

// elicitedAnswer answers an elicitation pause's one call with answer (its action, content,
// note and failure flag; the request id and state are the pause's).
func elicitedAnswer(s *segment, st runtime.SuspendedState, answer tool.ElicitationAnswer) func(runtime.PendingCall) planStep {
	p := st.Elicitation
	answer.Elicitation = tool.Elicitation{RequestID: p.RequestID, State: p.RequestState, Asked: p.Asked}
	return func(pc runtime.PendingCall) planStep {
		if _, ok := s.offeredTool(pc.Function.Name); !ok {
			s.r.holds.claimedFor(s.run.UID, s.lease.Owner).end()
			return noLongerPermitted(pc)
		}
		step := planStep{Call: pc, Args: p.Arguments, Elicited: &answer, Approved: p.Approved}
		if p.Held() {
			step.Held = true
			if answer.Failed {
				step.Elicited = nil
			}
		}
		return step
	}
}

// AnswerElicitation declines or cancels (a.Action) a remote server's request for input on a
// run waiting for it, through the one decision pipeline; the server is told, and the run
// continues with the server's answer. A request past its expiry is refused
// (ElicitationExpired) and answered cancel by the desk instead.
func (r *Runtime) AnswerElicitation(ctx context.Context, actor runtime.Actor, uuid string, a runtime.ElicitationDecision) (runtime.Outcome, error) {
	if a.Action != tool.ElicitDecline && a.Action != tool.ElicitCancel {
		return runtime.Outcome{}, newError(runtime.CodeInvalidRequest, uuid, "the action must be %q or %q", tool.ElicitDecline, tool.ElicitCancel)
	}
	return r.expireOnRefusal(ctx, uuid)(r.decide(ctx, actor, uuid, elicitation{ElicitationDecision: a}))
}

// expireOnRefusal passes a decision's result through; when it was refused because the
// elicitation expired, the desk first answers the request cancel on the run's behalf.
func (r *Runtime) expireOnRefusal(ctx context.Context, uuid string) func(runtime.Outcome, error) (runtime.Outcome, error) {
	return func(out runtime.Outcome, err error) (runtime.Outcome, error) {
		if errors.Is(err, runtime.ErrElicitationExpired) {
			if _, xerr := r.ExpireElicitation(ctx, uuid); xerr != nil && !errors.Is(xerr, runtime.ErrRunAlreadyResuming) {
				r.log.Warn("expired elicitation not answered", "run", uuid, "err", xerr)
			}
		}
		return out, err
	}
}

// ExpireElicitation answers cancel to the expired request for input run uuid waits on,
// through the one decision pipeline; the run continues with a tool error saying so. A request
// not yet expired is refused (InvalidRequest).
func (r *Runtime) ExpireElicitation(ctx context.Context, uuid string) (runtime.Outcome, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return runtime.Outcome{}, e
	}
	digest := ""
	if st, e := rehydrate(run, contInput); e == nil && run.Status == runtime.StatusWaitingInput {
		digest = pauseDigest(st.PauseState)
	}
	return r.decide(ctx, runtime.ElicitationTimeoutActor(), uuid, elicitation{expiry: true,
		ElicitationDecision: runtime.ElicitationDecision{Action: tool.ElicitCancel, TurnDigest: digest}})
}

// elicitation is the decision kind of a decline or a cancel of a remote server's request for
// input (an accept is a submission: kind input). expiry marks the desk's own cancel of an
// expired request.
type elicitation struct {
	runtime.ElicitationDecision
	expiry bool
}

// spec: a decline or cancel decides on a run waiting for input, like a submission, and is
// audited and counted like one; the desk's own cancel of an expired request is audited and
// counted as an elicitation_expiry (cancel).
func (el elicitation) spec() kindSpec {
	s := kindSpec{
		name: contElicit, waitsIn: runtime.StatusWaitingInput, action: runtime.ActionSubmit,
		notAwaiting: runtime.CodeRunNotAwaitingInput, stale: runtime.CodeStaleInputTurn,
		key: el.IdempotencyKey, digest: el.TurnDigest, audit: el.Audit,
		unrecorded: runtime.CodeRunStateUnavailable, resumeFailure: "ElicitationAnswerFailed",
		answer: el.Action, expired: el.expiry, counted: contInput, accepted: outcomeSubmitted, refusalAudit: inputRefusal,
	}
	if el.expiry {
		s.audit = &runtime.AuditNote{Action: elicitationExpiry, Outcome: tool.ElicitCancel}
		s.counted, s.accepted, s.refusalAudit = elicitationExpiry, tool.ElicitCancel, nil
	}
	return s
}

// elicitationExpiry is the audit action and metrics kind of the desk's cancel of an expired
// request for input.
const elicitationExpiry = "elicitation_expiry"

// prepare: only an elicitation pause can be declined or cancelled; a person's answer to an
// expired one is refused, the desk's own expiry to one not yet expired too.
func (el elicitation) prepare(_ context.Context, r *Runtime, d *decision) *runtime.Error {
	p := d.state.Elicitation
	if p == nil {
		return newError(runtime.CodeInvalidRequest, d.run.UUID, "the run waits for typed input a person must give; only a remote server's request for input can be declined or cancelled")
	}
	expired := r.requestOver(d.run, p)
	switch {
	case el.expiry && !expired:
		return newError(runtime.CodeInvalidRequest, d.run.UUID, "the request for input has not expired")
	case !el.expiry && expired:
		return elicitationExpiredError(d.run.UUID, p)
	}
	return nil
}

// requestOver reports whether the request for input run waits on is over: expired, or held
// by a holder whose heartbeat lapsed.
func (r *Runtime) requestOver(run runtime.Run, p *runtime.ElicitationPause) bool {
	return r.unix() >= p.ExpiresAt || r.holdLapsed(run, p)
}

// elicitationExpiredError refuses an answer to a request for input that expired (or whose
// hold ended).
func elicitationExpiredError(uuid string, p *runtime.ElicitationPause) *runtime.Error {
	if p.Held() {
		return newError(runtime.CodeElicitationExpired, uuid, "the server's request for input ended before an answer; the run continues without this answer")
	}
	return newError(runtime.CodeElicitationExpired, uuid, "the server's request for input expired at %s; it was answered cancel and the run continues without this answer",
		time.Unix(p.ExpiresAt, 0).UTC().Format(time.RFC3339))
}

// gate: like a submission, every pending call and the input target; a service account
// never answers. The desk's own answer to an expired request is not gated.
func (el elicitation) gate(st runtime.SuspendedState, reg *tool.Registry) (gateRule, bool) {
	if el.expiry {
		return gateRule{}, false
	}
	return input{}.gate(st, reg)
}

// event records the answer and who gave it (0 for the desk's expiry).
func (el elicitation) event(d *decision) map[string]any {
	payload := map[string]any{"action": el.Action, "decidedBy": d.actor.UserUID}
	if el.expiry {
		payload["expired"] = true
	}
	return payload
}

// answer tells the server the person declined or cancelled (or the desk cancelled an expired
// request), the model told why.
func (elicitation) answer(s *segment, st runtime.SuspendedState, c continuation, _ *schema.Schema) (func(runtime.PendingCall) planStep, error) {
	if st.Elicitation == nil {
		return nil, errors.New("the run does not wait on a remote server's request for input")
	}
	note := "the person declined to give the input the server asked for"
	switch {
	case c.Expired:
		note = "nobody answered the server's request for input in time; the desk cancelled it"
	case c.Answer == tool.ElicitCancel:
		note = "the person cancelled the server's request for input"
	case c.Answer != tool.ElicitDecline:
		return nil, fmt.Errorf("unknown elicitation answer %q", c.Answer)
	}
	return elicitedAnswer(s, st, tool.ElicitationAnswer{Action: c.Answer, Note: note, Failed: c.Expired}), nil
}

// endRequest answers the request for input run uuid waits on as the desk's own
// (ExpireElicitation), logging done when it did; a refusal (someone else acted first, the
// request is not over) ends nothing and is no error, the store being unavailable is.
func (r *Runtime) endRequest(ctx context.Context, uuid, done string) (bool, error) {
	_, err := r.ExpireElicitation(ctx, uuid)
	var re *runtime.Error
	switch {
	case err == nil:
		r.log.Info(done, "run", uuid)
		return true, nil
	case errors.As(err, &re) && re.Code != runtime.CodeRunStateUnavailable:
		return false, nil
	}
	return false, err
}
