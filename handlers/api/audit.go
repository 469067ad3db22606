package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// Auditor appends to the audit trail (*db.Audit implements it). Callers never pass submitted
// values or tokens.
type Auditor interface {
	Record(ctx context.Context, actor runtime.Actor, ip, action, runUUID, outcome, reason string) error
}

// Audit actions written by the API (tx_runsdesk_audit.action). Service accounts are recorded
// by name (actor uid 0).
const (
	AuditRunStart = "api_run_start"
	// AuditRequestCreate: a request created in an external configuration (a replay too).
	AuditRequestCreate = "api_request_create"
	// AuditRequestWithdraw: a request withdrawn by the service account that created it.
	AuditRequestWithdraw = "api_request_withdraw"
	AuditApproval        = "api_approval"
	AuditCancel          = "api_cancel"
	AuditAssignment      = "api_assignment"
	AuditAccessDenied    = "access_denied"
	AuditTokenFailure    = "api_token_failure"
)

// audit appends a row for this request's service account and client address. A failure to
// write is logged, not returned: the request's own outcome stands.
func (a *API) audit(c echo.Context, action, runUUID, outcome, reason string) {
	if a.auditor == nil {
		return
	}
	ctx := c.Request().Context()
	if err := a.auditor.Record(ctx, actorOf(c), c.RealIP(), action, runUUID, outcome, reason); err != nil {
		a.log.ErrorContext(ctx, "audit write failed", "request_id", requestID(c), "action", action, "err", err)
	}
}

// auditRefusal records what respond refuses on the API's own authority: a presented token
// that is not valid, and a token without the route's scope.
func (a *API) auditRefusal(c echo.Context, e *problem) {
	switch e.Code {
	case "invalid_token":
		a.audit(c, AuditTokenFailure, "", "failure", "token not valid")
	case "insufficient_scope":
		a.audit(c, AuditAccessDenied, pathRun(c), "denied", c.Request().Method+" "+c.Path()+": "+e.Message)
	}
}

// outcomeOf is the audit outcome of a runtime call: "success" or the refusal's code.
func outcomeOf(err error) string {
	if err == nil {
		return "success"
	}
	return fromRuntime(err).Code
}

// ActorOf returns the service account the API authenticated for this request, if any, so
// that outer middleware (the access log) can name it.
func ActorOf(c echo.Context) (runtime.Actor, bool) {
	actor, ok := c.Get(actorKey).(runtime.Actor)
	return actor, ok
}
