package runtime

// Action is something an actor may want to do to a run.
type Action string

// The actions of the role matrix (README.md, "Who may do what").
const (
	ActionRead    Action = "read"
	ActionApprove Action = "approve"
	ActionSubmit  Action = "submit"
	ActionCancel  Action = "cancel"
	ActionStart   Action = "start"
	// ActionExpire is the expiry of a pause, which only the system's expirer performs.
	ActionExpire Action = "expire"
	// ActionReadContent is reading what a run said (its output): every person who may read
	// it; a service account for the runs it started, or with the content scope.
	ActionReadContent Action = "read_content"
)

func (a Action) valid() bool {
	switch a {
	case ActionRead, ActionApprove, ActionSubmit, ActionCancel, ActionStart, ActionExpire, ActionReadContent:
		return true
	}
	return false
}

// MayAct reports whether actor may perform action on run (run may be the zero Run for
// ActionStart). It encodes the role matrix; tool-level gates (admin-only tools, writes for
// service accounts, four-eyes) are checked by the operations themselves. Deny by default.
func MayAct(actor Actor, action Action, run Run) bool {
	if actor.Disabled || !action.valid() {
		return false
	}
	switch actor.Role {
	case RoleAdmin:
		return actor.UserUID > 0
	case RoleReviewer:
		if actor.UserUID <= 0 {
			return false
		}
		switch action {
		case ActionRead, ActionApprove, ActionSubmit, ActionStart, ActionReadContent:
			return true
		case ActionCancel:
			return run.BeUser == actor.UserUID
		}
	case RoleSupport:
		return actor.UserUID > 0 && (action == ActionRead || action == ActionReadContent)
	case RoleRule:
		return actor.Rule != nil && action == ActionApprove
	case RoleDesk:
		return actor.UserUID == 0 && action == ActionSubmit
	case RoleSystem:
		return action == ActionExpire
	case RoleService:
		switch action {
		case ActionRead:
			return actor.HasScope(ScopeRead)
		case ActionReadContent:
			return actor.HasScope(ScopeRead) && (actor.HasScope(ScopeContent) || run.StartedByService != "" && run.StartedByService == actor.Name)
		case ActionApprove:
			return actor.HasScope(ScopeApprove)
		case ActionCancel:
			return actor.HasScope(ScopeCancel)
		case ActionStart:
			return actor.HasScope(ScopeRun)
		}
	}
	return false
}

// MayKnow reports whether actor may know run exists: it may read it or perform action on it.
// Everyone else is told the run does not exist.
func MayKnow(actor Actor, action Action, run Run) bool {
	return MayAct(actor, ActionRead, run) || MayAct(actor, action, run)
}
