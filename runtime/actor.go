package runtime

import (
	"fmt"
	"strings"
)

// Role is what an actor may do (README.md, "Who may do what").
type Role string

// The roles of people (be_users.role) and of machine clients.
const (
	RoleAdmin    Role = "admin"
	RoleReviewer Role = "reviewer"
	RoleSupport  Role = "support"
	RoleService  Role = "service"
	// RoleRule is a standing approval deciding a turn (Actor.Rule); never an account's role.
	RoleRule Role = "rule"
	// RoleSystem is the runtime acting on its own (the expirer); no account has it, and it
	// may only expire pauses.
	RoleSystem Role = "system"
)

// RoleDesk is the desk itself acting on its own rule, never an account (Valid is false): it
// may only answer a remote server's expired request for input (see MayAct).
const RoleDesk Role = "desk"

// RoleConsole is the operator at the command line (`runsdesk runs assign`), never an account
// (Valid is false): it may change any waiting run's assignment, forcing included, and nothing
// else (see MayAct).
const RoleConsole Role = "console"

// ConsoleActor is the operator of `runsdesk runs assign`, recorded as "cli:runsdesk".
func ConsoleActor() Actor { return Actor{Role: RoleConsole, Name: "cli:runsdesk"} }

// ElicitationTimeoutActor is who answers a remote server's expired request for input: the desk
// itself (RoleDesk, recorded as decider 0), named "elicitation timeout".
func ElicitationTimeoutActor() Actor { return Actor{Name: "elicitation timeout", Role: RoleDesk} }

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
	// ScopeContent lets a token read the content (output) of runs it did not start; every
	// token reads the content of the runs it started.
	ScopeContent = "content"
	// ScopeRequest lets a token create requests in the external configurations that name it
	// among their callers, and read, await and withdraw the requests it created.
	ScopeRequest = "request"
)

// Scopes lists every API scope, in the order they are named to people.
func Scopes() []string {
	return []string{ScopeRun, ScopeRead, ScopeApprove, ScopeCancel, ScopeContent, ScopeRequest}
}

// Actor is who performs an operation: a person (UserUID > 0, be_users.uid) or a service
// account (Role == RoleService, UserUID == 0, Scopes set). Callers build it from live data
// per request, so a disabled user or a changed role takes effect at once.
type Actor struct {
	UserUID int64
	Name    string
	// DisplayName is a person's name as they are shown to others (be_users.realName); ""
	// when the account has none.
	DisplayName string
	Role        Role
	Scopes      []string
	Disabled    bool
	// PasswordChangeRequired is set for a person whose password was reset: they may open no
	// page but the change-password form until they have chosen a new password.
	PasswordChangeRequired bool
	// TimeZone is the IANA name of the time zone a person chose for the times pages show ("":
	// UTC); it changes nothing the actor may do.
	TimeZone string
	// Email is a person's address for the notifications that concern them ("": none).
	Email string
	// Rule is set for RoleRule: the standing approvals that decide and their author.
	Rule *RuleDecider
	// TokenExpires is, for RoleService, when the token that authenticated expires (unix
	// seconds; 0: never).
	TokenExpires int64
	// MFARequired is set at a sign-in whose account elsewhere has a second factor runsdesk
	// cannot check (a TYPO3 account with TYPO3's own MFA): runsdesk's own is then owed.
	MFARequired bool
}

// RuleDecider is the standing approvals an automatic approval is made by: the rule matched
// by each pending call (Names, distinct, in call order) and the account that applied them
// (Author, be_users.uid; 0 when apply named none).
type RuleDecider struct {
	Names  []string
	Author int64
}

// RuleDeciderPrefix starts the name of a rule actor, and so the decided_by_service of every
// decision standing approvals made.
const RuleDeciderPrefix = "rule:"

// RuleActor is the decider of a turn approved by the standing approvals d: named
// "rule:<name>" (names joined by ","), acting for d.Author.
func RuleActor(d RuleDecider) Actor {
	return Actor{Role: RoleRule, Name: RuleDeciderPrefix + strings.Join(d.Names, ","), Rule: &d}
}

// Decider names who decided when it is not a person: a service account's name, or a rule
// actor's "rule:<name>"; "" for a person.
func (a Actor) Decider() string {
	if a.Role == RoleRule {
		return a.Name
	}
	return a.ServiceName()
}

// MayHaveStarted reports whether run may have been started by a: a person who is its
// initiator (UserUID > 0 and equal to the run's be_user, or to the person an external
// request acts on behalf of), or a rule actor whose author is the
// initiator or unknown (0). Four-eyes refuses such an approver.
func (a Actor) MayHaveStarted(run Run) bool {
	if a.Role == RoleRule {
		return a.Rule == nil || a.Rule.Author <= 0 || a.Rule.Author == run.BeUser
	}
	return a.UserUID > 0 && (a.UserUID == run.BeUser || a.UserUID == run.OnBehalfOf)
}

// Shown is the name a is shown by: a person's display name when it has one, else its name
// ("user #uid" for a person with neither).
func (a Actor) Shown() string {
	switch {
	case a.DisplayName != "":
		return a.DisplayName
	case a.Name != "" || a.UserUID <= 0:
		return a.Name
	}
	return fmt.Sprintf("user #%d", a.UserUID)
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
