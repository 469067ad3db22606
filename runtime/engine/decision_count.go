package engine

import (
	"runsdesk/runtime"
)

// outcomeSubmitted is the outcome label of an accepted input (or elicitation) decision.
const outcomeSubmitted = "submitted"

// countDecision counts one decision attempt of every kind and decider in
// runsdesk_decisions_total{kind,outcome} (Observer.ObserveDecision). An automatic attempt (a
// standing approval, an expiry) that is refused or replayed is not counted: it lost to a
// decision or process that came first, which the expirer reports as skipped and the gate as
// its governance row.
func (r *Runtime) countDecision(actor runtime.Actor, spec kindSpec, out runtime.Outcome, err error) {
	if r.observer == nil {
		return
	}
	automatic := actor.Role == runtime.RoleRule || actor.Role == runtime.RoleSystem || actor.Role == runtime.RoleDesk
	if automatic && (err != nil || out.Replayed) {
		return
	}
	r.observer.ObserveDecision(spec.counted, decisionOutcome(spec, out, err))
}

// decisionOutcome is the outcome label of a decision attempt: the kind's accepted label, or
// runtime.NotAccepted's word.
func decisionOutcome(spec kindSpec, out runtime.Outcome, err error) string {
	if err == nil && !out.Replayed {
		return spec.accepted
	}
	return runtime.NotAccepted(out, err)
}
