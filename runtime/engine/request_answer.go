package engine

import (
	"context"
	"errors"

	"runsdesk/runtime"
)

// RequestAnswer is what the caller of external request id is answered about it
// (runtime.RequestAnswer): pending while it waits (and until its decision's continuation has
// ended it), then the decision stored with the run — who, when, the verdict and reason from
// its decision row, the edited arguments from an approval with edits, the values a question
// was answered with from the run's output — each opened as the run's output is. Only the
// service account that created the request may read it: to anyone else, and for a run that
// is no request, it is RunNotFound. Stored state that does not read as a decision is
// CorruptSuspendedState, a value sealed with a missing key SealingKeyMissing, never guessed.
func (r *Runtime) RequestAnswer(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error) {
	run, e := r.loadRun(ctx, id)
	if e != nil {
		return runtime.RequestAnswer{}, e
	}
	if err := r.ownRequest(ctx, actor, run); err != nil {
		return runtime.RequestAnswer{}, err
	}
	return r.answerOf(ctx, run)
}

// CallbackAnswer is RequestAnswer of the external request uuid for its callback: the same
// answer, read by the desk itself (no caller to check) when its callback is sent. A run that
// is no request is RunNotFound.
func (r *Runtime) CallbackAnswer(ctx context.Context, uuid string) (runtime.RequestAnswer, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return runtime.RequestAnswer{}, e
	}
	request, err := r.isRequest(ctx, run)
	if err != nil {
		return runtime.RequestAnswer{}, err
	}
	if !request {
		return runtime.RequestAnswer{}, newError(runtime.CodeRunNotFound, run.UUID, "no such request")
	}
	return r.answerOf(ctx, run)
}

// answerOf is the answer about request run (RequestAnswer).
func (r *Runtime) answerOf(ctx context.Context, run runtime.Run) (runtime.RequestAnswer, error) {
	var e *runtime.Error
	ans := runtime.RequestAnswer{ID: run.UUID, ExternalID: run.ExternalID, Status: runtime.RequestPending}
	switch {
	case !run.Status.Terminal():
		return ans, nil
	case run.Status == runtime.StatusCancelled && run.TerminationReason == runtime.ReasonExpired:
		ans.Status = runtime.RequestExpired
		return ans, nil
	case run.Status != runtime.StatusCompleted:
		ans.Status = runtime.RequestCancelled
		return ans, nil
	}
	dec, err := r.store.LatestDecision(ctx, run.UID)
	if errors.Is(err, runtime.ErrNotFound) {
		return runtime.RequestAnswer{}, newError(runtime.CodeCorruptSuspendedState, run.UUID, "the request completed without a stored decision")
	}
	if err != nil {
		return runtime.RequestAnswer{}, storeError(run.UUID, err)
	}
	ans.Status, e = requestStatusOf(run.UUID, dec)
	if e != nil {
		return runtime.RequestAnswer{}, e
	}
	if ans.Decision, err = r.requestDecision(ctx, run, dec, ans.Status); err != nil {
		return runtime.RequestAnswer{}, err
	}
	return ans, nil
}

// ownRequest is nil when run is an external request created by actor, else RunNotFound (as
// for a run they may not see).
func (r *Runtime) ownRequest(ctx context.Context, actor runtime.Actor, run runtime.Run) error {
	if actor.Role != runtime.RoleService || run.StartedByService == "" || run.StartedByService != actor.ServiceName() {
		return newError(runtime.CodeRunNotFound, run.UUID, "no such request")
	}
	request, err := r.isRequest(ctx, run)
	if err != nil {
		return err
	}
	if !request {
		return newError(runtime.CodeRunNotFound, run.UUID, "no such request")
	}
	return nil
}

// requestStatusOf is the status a completed request's decision dec gives it.
func requestStatusOf(uuid string, dec runtime.Decision) (string, *runtime.Error) {
	switch {
	case dec.Kind == runtime.DecisionExpiry:
		return runtime.RequestExpired, nil
	case dec.Kind == contInput:
		return runtime.RequestAnswered, nil
	case dec.Kind == contApproval && dec.Approved:
		return runtime.RequestApproved, nil
	case dec.Kind == contApproval || dec.Kind == runtime.DecisionRequestChanges:
		return runtime.RequestDenied, nil
	}
	return "", newError(runtime.CodeCorruptSuspendedState, uuid, "the request's decision has unknown kind %q", dec.Kind)
}

// requestDecision is dec as the request's answer shows it (status as requestStatusOf gave):
// its reason, its edited arguments, the values the run's output keeps, and the decider's
// username.
func (r *Runtime) requestDecision(ctx context.Context, run runtime.Run, dec runtime.Decision, status string) (*runtime.RequestDecision, error) {
	out := &runtime.RequestDecision{Approved: status == runtime.RequestApproved || status == runtime.RequestAnswered,
		DecidedBy: dec.DecidedBy, DecidedByService: dec.DecidedByService, DecidedAt: dec.Crdate}
	reasoned, err := r.store.ReasonedDecisions(ctx, run.UID)
	if err != nil {
		return nil, storeError(run.UUID, err)
	}
	edited, err := r.store.EditedDecisions(ctx, run.UID)
	if err != nil {
		return nil, storeError(run.UUID, err)
	}
	if d, ok := decisionNumbered(reasoned, dec.UID); ok {
		out.Reason = d.Reason
	}
	if d, ok := decisionNumbered(edited, dec.UID); ok {
		if out.EditedArguments, err = editedArguments(run.UUID, d.Arguments); err != nil {
			return nil, err
		}
	}
	if id := runtime.UnopenedKey(out.Reason); id != "" {
		return nil, runtime.SealingKeyMissing(run.UUID, id)
	}
	if out.Values, err = r.requestValues(ctx, run); err != nil {
		return nil, err
	}
	if dec.DecidedBy > 0 {
		names, err := r.store.Usernames(ctx, []int64{dec.DecidedBy})
		if err != nil {
			return nil, storeError(run.UUID, err)
		}
		out.DecidedByName = names[dec.DecidedBy]
	}
	return out, nil
}

// decisionNumbered is the decision of decs whose uid is uid.
func decisionNumbered(decs []runtime.Decision, uid int64) (runtime.Decision, bool) {
	for _, d := range decs {
		if d.UID == uid {
			return d, true
		}
	}
	return runtime.Decision{}, false
}

// editedArguments are the arguments the one call of a request was approved with, from the
// edits its approval stored (a JSON list of runtime.CallEdit).
func editedArguments(uuid, stored string) (map[string]any, error) {
	if id := runtime.UnopenedKey(stored); id != "" {
		return nil, runtime.SealingKeyMissing(uuid, id)
	}
	var edits []runtime.CallEdit
	var args map[string]any
	if err := unmarshalNumber([]byte(stored), &edits); err != nil || len(edits) != 1 ||
		unmarshalNumber(edits[0].Approved, &args) != nil || args == nil {
		return nil, newError(runtime.CodeCorruptSuspendedState, uuid, "the request's edited arguments are not one call's JSON object")
	}
	return args, nil
}

// requestValues are the values a decided request's output keeps (the answer to a question;
// nil for none, and once retention removed them).
func (r *Runtime) requestValues(ctx context.Context, run runtime.Run) (map[string]any, error) {
	kept, ok, err := r.store.RunOutput(ctx, run.UID, run.UUID)
	if err != nil {
		return nil, storeError(run.UUID, err)
	}
	if !ok || kept.Text == "" {
		return nil, nil
	}
	if id := runtime.UnopenedKey(kept.Text); id != "" {
		return nil, runtime.SealingKeyMissing(run.UUID, id)
	}
	var values map[string]any
	if err := unmarshalNumber([]byte(kept.Text), &values); err != nil || values == nil {
		return nil, newError(runtime.CodeCorruptSuspendedState, run.UUID, "the request's stored values are not one JSON object")
	}
	return values, nil
}

// requestOutput is what a decided request's run keeps as its output: the values its
// continuation c carries for a question (as a person or an answering expiry gave them), ""
// for an approval (its data, when edited, are the arguments the decision row keeps).
func requestOutput(c continuation) string {
	if c.Kind == contApproval || c.Data == nil {
		return ""
	}
	return string(mustJSON(c.Data))
}
