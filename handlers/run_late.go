package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// tooLate reports whether re refuses a decision that came too late: after the run's wait
// expired (run_expired), or after another decision it names (already handled, stale turn).
func tooLate(re *runtime.Error) bool {
	return re != nil && (re.Code == runtime.CodeRunExpired || re.Decided != nil)
}

// lateDecision answers a decision refused as too late (tooLate(re)): 409 with the run page as
// it is now, saying when the run expired and what the expiry did, or who decided first, when
// and what (decidedFirst), and keeping what the person typed (typed) on the page; while the
// run still waits its input form is filled with posted as well.
func (h *Handlers) lateDecision(c echo.Context, re *runtime.Error, typed []views.TypedValue, posted url.Values) error {
	ctx := c.Request().Context()
	view, err := h.rt.Get(ctx, h.actor(c), re.RunUUID)
	if err != nil {
		return err
	}
	late := &views.LateDecision{ExpiredAt: unixTime(re.ExpiredAt), Action: re.Expiry, Typed: typed}
	if d := re.Decided; d != nil && re.Code != runtime.CodeRunExpired {
		late.DecidedFirst = decidedFirst(*d, h.names(ctx, d.DecidedBy), h.actor(c).UserUID)
		late.NewTurn = view.Run.Status.Waiting()
	}
	return h.renderRunPage(c, http.StatusConflict, view, runPageState{late: late, fill: func(props *views.InputFormProps) {
		if posted != nil {
			props.Values = posted
		}
	}})
}

// decidedFirst says who made decision d, when and what: "Approved by ada at 1 Dec 2026,
// 18:57 UTC", "Denied by service account ci at …", "Approved by rule small-refunds at …",
// "Input submitted by you at …" (viewer is who asks).
func decidedFirst(d runtime.Decision, names nameBook, viewer int64) string {
	who := names.actor(d.DecidedBy, d.DecidedByService)
	if rule, ok := strings.CutPrefix(d.DecidedByService, "rule:"); ok {
		who = "rule " + rule
	}
	if d.DecidedBy > 0 && d.DecidedBy == viewer {
		who = "you"
	}
	what := "Decided"
	switch {
	case d.Kind == runtime.DecisionExpiry:
		return "Handled automatically on expiry at " + views.DecisionTime(unixTime(d.Crdate))
	case d.Kind == "approval" && d.Approved:
		what = "Approved"
	case d.Kind == "approval":
		what = "Denied"
	case d.Kind == "input":
		what = "Input submitted"
	case d.Kind == runtime.EventElicitation:
		what = "Answered"
	}
	return what + " by " + who + " at " + views.DecisionTime(unixTime(d.Crdate))
}

// typedValues are the values a person posted in form, by field name, without the form's
// hidden fields (CSRF token, digest, idempotency key, row actions) and empty values.
func typedValues(form url.Values) []views.TypedValue {
	hidden := []string{"_csrf", views.FormFieldDigest, views.FormFieldIdempotencyKey, views.FormFieldRows}
	var out []views.TypedValue
	for name, values := range form {
		if slices.Contains(hidden, name) {
			continue
		}
		if v := strings.Join(values, ", "); strings.TrimSpace(v) != "" {
			out = append(out, views.TypedValue{Name: name, Value: v})
		}
	}
	slices.SortFunc(out, func(a, b views.TypedValue) int { return strings.Compare(a.Name, b.Name) })
	return out
}
