package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// minPasswordLength is shown in the form's help text; the store enforces the policy.
const minPasswordLength = 15

// passwordPath is the change-password page, the one page open to a person whose password
// was reset.
const passwordPath = "/account/password"

// msgPasswordChanged is the flash after a password change.
const msgPasswordChanged = "Your password has been changed. Other sessions have been signed out."

// passwordForm shows the change-password form.
func (h *Handlers) passwordForm(c echo.Context) error {
	return h.renderPassword(c, http.StatusOK, views.PasswordForm{Required: h.actor(c).PasswordChangeRequired})
}

// passwordSubmit changes the signed-in person's password. The current password is required;
// errors re-render the form with 422 and per-field messages. Wrong current passwords count
// against the account's sign-in allowance (429 once it is used up, even for the right one)
// and are audited. On success every other session of the person ends, this one gets a new
// token, and they return to the start page.
func (h *Handlers) passwordSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	current, next, confirm := c.FormValue("current"), c.FormValue("new"), c.FormValue("confirm")
	form := views.PasswordForm{Errors: map[string]string{}, Required: h.actor(c).PasswordChangeRequired}
	switch {
	case current == "":
		form.Errors["current"] = "Enter your current password."
	case next == "":
		form.Errors["new"] = "Enter a new password."
	case next != confirm:
		form.Errors["confirm"] = "The two new passwords differ."
	}
	if len(form.Errors) > 0 {
		return h.renderPassword(c, http.StatusUnprocessableEntity, form)
	}
	actor := h.actor(c)
	account := h.throttle.UserAccount(actor.UserUID)
	wait, err := h.throttle.Blocked(ctx, account, c.RealIP(), h.now())
	if err != nil {
		return err
	}
	if wait > 0 {
		h.audit(c, actionPasswordChange, outcomeThrottled, "too many wrong current passwords")
		retryAfter(c, wait)
		form.Errors["current"] = "Too many wrong passwords. Try again in " + minutes(wait) + "."
		return h.renderPassword(c, http.StatusTooManyRequests, form)
	}
	epoch, err := h.accounts.ChangePassword(ctx, actor.UserUID, current, next)
	if reason, ok := policyReason(err); ok {
		form.Errors["new"] = reason
		return h.renderPassword(c, http.StatusUnprocessableEntity, form)
	}
	if errors.Is(err, runtime.ErrNotFound) {
		if ferr := h.throttle.Fail(ctx, account, c.RealIP(), h.now()); ferr != nil {
			return ferr
		}
		h.audit(c, actionPasswordChange, outcomeFailure, "current password not accepted")
		form.Errors["current"] = "The current password is not correct."
		return h.renderPassword(c, http.StatusUnprocessableEntity, form)
	}
	if err != nil {
		return err
	}
	if err := h.throttle.Succeed(ctx, account); err != nil {
		return err
	}
	if err := h.startSession(c, actor, epoch); err != nil {
		return err
	}
	h.audit(c, actionPasswordChange, outcomeSuccess, "")
	h.flash(c, flashPasswordChanged)
	return c.Redirect(http.StatusSeeOther, "/")
}

func (h *Handlers) renderPassword(c echo.Context, status int, form views.PasswordForm) error {
	return h.render(c, status, views.PasswordPage(h.page(c, "Change password", views.NavNone), form, minPasswordLength))
}

// policyReason returns the sentence of a password-policy violation (db.PolicyError), which
// the handlers may show; ok is false for any other error.
func policyReason(err error) (string, bool) {
	var pv interface {
		error
		PolicyViolation() bool
	}
	if errors.As(err, &pv) && pv.PolicyViolation() {
		return pv.Error(), true
	}
	return "", false
}
