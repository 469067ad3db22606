package runtime

// Role is what an actor may do (README.md, "Who may do what").
type Role string

// The roles of people (be_users.role) and of machine clients.
const (
	RoleAdmin    Role = "admin"
	RoleReviewer Role = "reviewer"
	RoleSupport  Role = "support"
	RoleService  Role = "service"
	// RoleSystem is the runtime acting on its own (the expirer); no account has it, and it
	// may only expire pauses.
	RoleSystem Role = "system"
)

// ExpiryActor is who expires a pause: the system, recorded as "system:expiry".
func ExpiryActor() Actor { return Actor{Role: RoleSystem, Name: "system:expiry"} }

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	return r == RoleAdmin || r == RoleReviewer || r == RoleSupport || r == RoleService
}

// API scopes of service accounts.
const (
	ScopeRun     = "run"
	ScopeRead    = "read"
	ScopeApprove = "approve"
	ScopeCancel  = "cancel"
)

// Actor is who performs an operation: a person (UserUID > 0, be_users.uid) or a service
// account (Role == RoleService, UserUID == 0, Scopes set). Callers build it from live data
// per request, so a disabled user or a changed role takes effect at once.
type Actor struct {
	UserUID  int64
	Name     string
	Role     Role
	Scopes   []string
	Disabled bool
	// PasswordChangeRequired is set for a person whose password was reset: they may open no
	// page but the change-password form until they have chosen a new password.
	PasswordChangeRequired bool
}

// ServiceName is the name of the service account (or the system actor) a is, "" for a
// person. Records that name who acted (events, decisions) carry it beside the uid, which is 0
// for every service account and for the system.
func (a Actor) ServiceName() string {
	if a.Role != RoleService && a.Role != RoleSystem {
		return ""
	}
	return a.Name
}

// HasScope reports whether a service account declares scope.
func (a Actor) HasScope(scope string) bool {
	for _, s := range a.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}
