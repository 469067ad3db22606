package engine

import (
	"time"

	"runsdesk/runtime"
)

// pauseWait is how long a decided pause waited for its decision, in seconds, with the pause's
// kind (pauseLabel), its configuration and who decided (deciderKind).
type pauseWait struct {
	kind, configuration, decidedBy string
	seconds                        float64
}

// waitOf is the wait of run's pause p (as read) decided now by actor: from the pause's start
// to now; nil for a run without one.
func (r *Runtime) waitOf(run runtime.Run, p runtime.PauseState, actor runtime.Actor, configuration string) *pauseWait {
	if run.SuspendedAt <= 0 {
		return nil
	}
	waited := max(r.now().Sub(time.Unix(run.SuspendedAt, 0)).Seconds(), 0)
	return &pauseWait{kind: pauseLabel(run.Status, p), configuration: configuration, decidedBy: deciderKind(actor), seconds: waited}
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

// deciderKind is who made a decision, for metrics: person, service, rule or expiry (the
// expirer, and the desk's answer to an expired request for input).
func deciderKind(a runtime.Actor) string {
	switch a.Role {
	case runtime.RoleRule:
		return "rule"
	case runtime.RoleService:
		return "service"
	case runtime.RoleSystem, runtime.RoleDesk:
		return "expiry"
	}
	return "person"
}
