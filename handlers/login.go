package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// badCredentials is the one message for every credential failure (unknown user, wrong
// password, disabled account), so the page does not tell them apart.
const badCredentials = "The username or password is not correct."

// maxUsernameInput bounds the username echoed back into the form.
const maxUsernameInput = 200

// loginForm shows the sign-in form with a CSRF token bound to a pre-session cookie (no session
// is stored for the visitor). Signed-in people go on to next (or the start page).
func (h *Handlers) loginForm(c echo.Context) error {
	next := localRedirect(c.QueryParam("next"), "/")
	if h.actor(c).UserUID > 0 {
		return c.Redirect(http.StatusSeeOther, next)
	}
	return h.renderLogin(c, http.StatusOK, views.LoginForm{Next: next})
}

// loginSubmit signs a person in. Order: throttle check (429 even for the right password),
// credentials (422 with one message for every failure, recorded for throttling), then the
// code step for a person with a second factor (login_mfa.go; one whose TYPO3 account has
// TYPO3's MFA owes runsdesk's, and without sealing keys is refused, 403), else a renewed session (the
// pre-session cookie is dropped) and a 303 to a local next path. Every outcome is audited.
func (h *Handlers) loginSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	username := strings.TrimSpace(c.FormValue("username"))
	form := views.LoginForm{Username: truncate(username, maxUsernameInput), Next: localRedirect(c.FormValue("next"), "/")}
	account, err := h.throttle.Account(ctx, username)
	if err != nil {
		return err
	}
	wait, err := h.throttle.Blocked(ctx, account, c.RealIP(), h.now())
	if err != nil {
		return err
	}
	if wait > 0 {
		h.audit(c, actionLogin, outcomeThrottled, "too many failed sign-ins")
		retryAfter(c, wait)
		form.Error = "Too many failed sign-in attempts. Try again in " + minutes(wait) + "."
		return h.renderLogin(c, http.StatusTooManyRequests, form)
	}
	actor, epoch, err := h.authenticate(ctx, username, c.FormValue("password"))
	if errors.Is(err, runtime.ErrNotFound) {
		if ferr := h.throttle.Fail(ctx, account, c.RealIP(), h.now()); ferr != nil {
			return ferr
		}
		h.audit(c, actionLogin, outcomeFailure, "username or password not accepted")
		form.Error = badCredentials
		return h.renderLogin(c, http.StatusUnprocessableEntity, form)
	}
	if err != nil {
		return err
	}
	if err := h.throttle.Succeed(ctx, account); err != nil {
		return err
	}
	if h.outsideMFAUnmet(actor) {
		h.audit(c, actionLogin, outcomeDenied, "two-factor sign-in owed (TYPO3's MFA) but none can be set up: no sealing keys")
		form.Error = msgOutsideMFA
		return h.renderLogin(c, http.StatusForbidden, form)
	}
	return h.afterFirstFactor(c, firstFactor{actor: actor, epoch: epoch, next: form.Next})
}

func (h *Handlers) renderLogin(c echo.Context, status int, form views.LoginForm) error {
	p := h.page(c, "Sign in", views.NavNone)
	p.CSRF = h.loginFormToken(c)
	return h.render(c, status, views.LoginPage(p, h.loginChoices(c, form)))
}

// retryAfter tells the client to wait d (whole seconds, rounded up, at least 1).
func retryAfter(c echo.Context, d time.Duration) {
	c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(max(int(math.Ceil(d.Seconds())), 1)))
}

// minutes says how long d is in whole minutes, rounded up: "1 minute", "15 minutes".
func minutes(d time.Duration) string {
	n := int(math.Ceil(d.Minutes()))
	if n <= 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", n)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
