package runtime

import "context"

// ApprovalDecision is a person's (or service account's) verdict on a paused turn.
// TurnDigest binds it to the turn that was reviewed; "" is stale. IdempotencyKey, when set,
// makes a repeat return the first outcome. Audit, when not nil, is the audit row written with
// an accepted verdict (AuditNote).
type ApprovalDecision struct {
	Approved       bool
	TurnDigest     string
	IdempotencyKey string
	Audit          *AuditNote
}

// Approve records a verdict on a run waiting for approval and hands the continuation to a
// worker. Errors are *Error with the catalogue's codes (docs/state-machine.md); the run is unchanged by any of
// them.
func (r *Runtime) Approve(ctx context.Context, actor Actor, uuid string, d ApprovalDecision) (Outcome, error) {
	return r.decide(ctx, actor, uuid, decision{
		kind: contApproval, from: StatusWaitingApproval, action: ActionApprove,
		notAwaiting: CodeRunNotAwaitingApproval, stale: CodeStaleApprovalTurn,
		key: d.IdempotencyKey, digest: d.TurnDigest, approved: d.Approved, audit: d.Audit,
	})
}
