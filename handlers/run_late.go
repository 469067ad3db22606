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

// lateDecision answers a decision refused because the run's wait expired (run_expired, re):
// 409 with the run page as it is now, saying when the run expired and what the expiry did,
// and keeping what the person typed (typed) on the page; while the run still waits its input
// form is filled with posted as well.
func (h *Handlers) lateDecision(c echo.Context, re *runtime.Error, typed []views.TypedValue, posted url.Values) error {
	view, err := h.rt.Get(c.Request().Context(), h.actor(c), re.RunUUID)
	if err != nil {
		return err
	}
	late := &views.LateDecision{ExpiredAt: unixTime(re.ExpiredAt), Action: re.Expiry, Typed: typed}
	return h.renderRunPage(c, http.StatusConflict, view, func(props *views.InputFormProps) {
		if posted != nil {
			props.Values = posted
		}
	}, late)
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
