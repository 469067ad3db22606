package engine

import (
	"time"

	"runsdesk/runtime"
)

// observeDecided records the time to decision of run's pause p (as read), decided by actor:
// from the pause's start to now, by the pause's kind, its configuration and who decided.
func (r *Runtime) observeDecided(run runtime.Run, p runtime.PauseState, actor runtime.Actor, configuration string) {
	if r.observer == nil || run.SuspendedAt <= 0 {
		return
	}
	waited := max(r.now().Sub(time.Unix(run.SuspendedAt, 0)).Seconds(), 0)
	r.observer.ObserveTimeToDecision(pauseLabel(run.Status, p), configuration, deciderKind(actor), waited)
}

// pauseLabel is the kind of a pause for metrics: approval, input, or elicitation (an input
// pause answering an MCP server's request).
func pauseLabel(status runtime.Status, p runtime.PauseState) string {
	switch {
	case status != runtime.StatusWaitingInput:
		return contApproval
	case p.Elicitation != nil:
		return "elicitation"
	}
	return contInput
}

// deciderKind is who made a decision, for metrics: person, service, rule or expiry.
func deciderKind(a runtime.Actor) string {
	switch a.Role {
	case runtime.RoleRule:
		return "rule"
	case runtime.RoleService:
		return "service"
	case runtime.RoleSystem:
		return "expiry"
	}
	return "person"
}
