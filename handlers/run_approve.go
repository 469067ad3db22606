package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

// actionApproval is the audit action of an approve/deny decision.
const actionApproval = "approval"

// approvalForm is a posted approve/deny form.
type approvalForm struct {
	approved bool
	// changes: "Request changes", the reason being what to revise.
	changes bool
	digest  string
	pin     string
	key     string
	reason  string
	batch   bool
}

// typed is what the person chose and wrote, as a late decision's page keeps it.
func (f approvalForm) typed() []views.TypedValue {
	verdict := map[bool]string{true: "Approve", false: "Deny"}[f.approved]
	if f.changes {
		verdict = "Request changes"
	}
	out := []views.TypedValue{{Name: "Decision", Value: verdict}}
	if f.reason != "" {
		out = append(out, views.TypedValue{Name: "Reason", Value: f.reason})
	}
	return out
}

// parseApprovalForm reads decision (approve or deny), turn_digest, pin_digest, idempotency_key and the
// optional reason (at most views.MaxReasonCharacters). Anything else posted is ignored.
func parseApprovalForm(c echo.Context) (approvalForm, error) {
	f := approvalForm{digest: c.FormValue("turn_digest"), pin: c.FormValue(views.FieldPinDigest), key: c.FormValue("idempotency_key"),
		reason: strings.TrimSpace(c.FormValue(views.FieldReason))}
	switch c.FormValue(views.FieldDecision) {
	case views.DecisionApprove:
		f.approved = true
	case views.DecisionDeny:
	case views.DecisionRequestChanges:
		f.changes = true
	default:
		return f, publicError(http.StatusBadRequest, "invalid_decision", "Choose Approve or Deny.")
	}
	if utf8.RuneCountInString(f.reason) > views.MaxReasonCharacters || !utf8.ValidString(f.reason) {
		return f, publicError(http.StatusBadRequest, "invalid_reason", fmt.Sprintf("The reason must be text of at most %s characters. Nothing was decided.", views.Count(views.MaxReasonCharacters)))
	}
	if f.changes && f.reason == "" {
		return f, publicError(http.StatusBadRequest, "invalid_request", "Write in Reason what should change, then choose Request changes. Nothing was decided.")
	}
	if len(f.key) > runtime.MaxIdempotencyKey {
		return f, publicError(http.StatusBadRequest, "invalid_request", "The form could not be read. Reload the page and try again.")
	}
	return f, nil
}

// runApprove is POST /runs/:uuid/approval: it records approve or deny on the turn the person
// reviewed (turn_digest), with the edits and patch digest of "Edit and approve"'s
// confirmation when posted, and hands the continuation to a worker, then redirects (303) to
// the run page with a flash. The same idempotency key replays the first outcome (same 303). A
// refusal is answered from the refusal table's Approval column: one that leaves the run
// unchanged (four-eyes, stale turn, already decided, not permitted, not waiting) is a flash on
// the run page, a decision after the run's wait expired the run page with 409 saying so
// (lateDecision), anything else the error page. The optional reason is stored with the
// decision and, for a denial, told to the model; the run's events record only that one was
// given (decideApproval).
func (h *Handlers) runApprove(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	f, err := parseApprovalForm(c)
	if err != nil {
		return err
	}
	out, err := h.decideApproval(c, uuid, f)
	if re, _ := refusal.OfError(err); tooLate(re) {
		return h.lateDecision(c, re, f.typed(), nil)
	}
	if err != nil {
		return h.refused(c, uuid, refusal.Approval, err)
	}
	code := flashDenied
	switch {
	case out.Decision.Kind == runtime.DecisionRequestChanges:
		code = flashChangesRequested
	case out.Decision.Approved && !out.Resumed:
		code = flashVoted
	case out.Decision.Approved && out.Request:
		code = flashRequestApproved
	case out.Decision.Approved:
		code = flashApproved
	case out.Request:
		code = flashRequestDenied
	}
	h.flash(c, code)
	return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
}

// decideApproval records f's verdict on run uuid, with the edits and patch digest posted by
// "Edit and approve"'s confirmation (none from other forms), through the decision pipeline
// (Runtime.Approve or RequestChanges), which counts and audits it, accepted, replayed or
// refused, from the note given. Posted edits that cannot be read are refused and audited
// here, before the pipeline.
func (h *Handlers) decideApproval(c echo.Context, uuid string, f approvalForm) (runtime.Outcome, error) {
	edits, patchDigest, err := postedEdits(c, uuid)
	if err != nil {
		h.auditRun(c, actionApproval, uuid, runtime.NotAccepted(runtime.Outcome{}, err), f.reason)
		return runtime.Outcome{}, err
	}
	ctx, actor := c.Request().Context(), h.actor(c)
	if f.changes {
		return h.rt.RequestChanges(ctx, actor, uuid, runtime.ChangeRequest{Text: f.reason, TurnDigest: f.digest, PinDigest: f.pin, IdempotencyKey: f.key,
			Audit: &runtime.AuditNote{Action: actionApproval, IP: c.RealIP(), Outcome: runtime.DecisionRequestChanges, Reason: f.reason}})
	}
	return h.rt.Approve(ctx, actor, uuid, runtime.ApprovalDecision{Approved: f.approved, TurnDigest: f.digest, PinDigest: f.pin, IdempotencyKey: f.key, Reason: f.reason,
		Audit: &runtime.AuditNote{Action: actionApproval, IP: c.RealIP(), Outcome: runtime.Verdict(f.approved), Reason: f.reason},
		Edits: edits, PatchDigest: patchDigest, Batch: f.batch})
}
