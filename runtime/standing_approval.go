package runtime

import (
	"context"
	"encoding/json"
)

// StandingApproval is one rule of `standing_approvals:` as stored: calls of Tool (offered by
// Configuration, "" = any configuration offering it) whose arguments validate against When
// are approved automatically, until Until (unix seconds, 0 = no end) and at most MaxUses
// times (0 = no bound). AllowWrites must be set for a tool that declares a non-idempotent
// write. Author is the be_users.uid of who applied it (0 = unknown); Uses counts the
// automatic approvals it made; Revoked is when it was revoked (0 = in force), RevokedBy by
// what (RevokedByApply, RevokedByCLI; "" while in force or when unknown).
type StandingApproval struct {
	Name          string
	Tool          string
	Configuration string
	When          json.RawMessage
	Until         int64
	MaxUses       int64
	AllowWrites   bool
	Author        int64
	Uses          int64
	Revoked       int64
	RevokedBy     string
}

// What revoked a standing approval (StandingApproval.RevokedBy).
const (
	// RevokedByApply: an apply whose file no longer lists the rule.
	RevokedByApply = "apply"
	// RevokedByCLI: `rules revoke NAME`.
	RevokedByCLI = "cli"
)

// Active reports whether the rule may approve at now: not revoked, not past Until, not used
// up.
func (r StandingApproval) Active(now int64) bool {
	return r.Revoked == 0 && (r.Until == 0 || now < r.Until) && (r.MaxUses == 0 || r.Uses < r.MaxUses)
}

// RuleChanges is what an apply does to the stored standing approvals: Write is created, or
// updated and put back in force (keyed by name, uses kept), with Author as its author; the
// names of Revoke still in force are revoked.
type RuleChanges struct {
	Write  []StandingApproval
	Revoke []string
	Author int64
}

// Rules reads the standing approvals; *db.Store implements it. ActiveRules returns the rules
// in force at now for any of tools, by name. ReleaseWaiting makes the held `waiting`
// notifications of run's pause that began at since (Suspension.WaitingDue) due at now: the
// rules did not approve the turn, so a person must be told.
type Rules interface {
	ActiveRules(ctx context.Context, tools []string, now int64) ([]StandingApproval, error)
	ReleaseWaiting(ctx context.Context, run, since, now int64) error
}
