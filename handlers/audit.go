package handlers

import (
	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// Audit actions written by the web layer (tx_runsdesk_audit.action).
const (
	actionLogin          = "login"
	actionLogout         = "logout"
	actionSessionEnded   = "session_ended"
	actionSessionSignOut = "session_sign_out"
	actionAccessDenied   = "access_denied"
	actionCSRF           = "csrf_rejected"
	actionCrossOrigin    = "cross_origin_rejected"
	actionPasswordChange = "password_change"
	actionLoginCode      = "login_code"
	actionRecoveryCode   = "recovery_code_used"
	actionRecoveryCodes  = "recovery_codes"
	actionMFAEnrol       = "mfa_enrol"
)

// Audit outcomes.
const (
	outcomeSuccess   = "success"
	outcomeFailure   = "failure"
	outcomeDenied    = "denied"
	outcomeThrottled = "throttled"
	outcomeCodeAsked = "code_asked"
	outcomeStarted   = "started"
)

// audit appends a row for this request's actor and client address. reason says why, in words,
// and never holds submitted values, passwords or tokens. A failure to write is logged, not
// returned: the request's own outcome stands. Use auditRun for rows about one run.
func (h *Handlers) audit(c echo.Context, action, outcome, reason string) {
	h.auditRun(c, action, "", outcome, reason)
}

// auditRun is audit for a row about run runUUID.
func (h *Handlers) auditRun(c echo.Context, action, runUUID, outcome, reason string) {
	h.auditAs(c, h.actor(c), action, runUUID, outcome, reason)
}

// auditAs is auditRun for an actor other than the request's (a failed sign-in's account).
func (h *Handlers) auditAs(c echo.Context, actor runtime.Actor, action, runUUID, outcome, reason string) {
	ctx := c.Request().Context()
	if err := h.auditor.Record(ctx, actor, c.RealIP(), action, runUUID, outcome, reason); err != nil {
		h.log.ErrorContext(ctx, "audit write failed", "request_id", requestID(c), "action", action, "error", err)
	}
}
