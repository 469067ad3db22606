package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/mfa"
	"runsdesk/runtime"
	"runsdesk/views"
)

// loginCodePath is the sign-in's second step: the one-time or recovery code.
const loginCodePath = "/login/code"

// codeStepLifetime is how long a half-finished sign-in (first factor accepted) waits for its
// code before the person must sign in again.
const codeStepLifetime = 5 * time.Minute

// Keys of the session values of two-factor sign-in. While a code is owed the session holds no
// sessionUID, so it is not signed in: the person, the epoch read at the first factor, when it
// was accepted, the deep link, and whether it was single sign-on. sessionMFAEnrol marks a
// signed-in session of a person who must enrol before anything else (--require-mfa).
const (
	sessionMFAUser   = "mfa_uid"
	sessionMFAEpoch  = "mfa_epoch"
	sessionMFASince  = "mfa_since"
	sessionMFANext   = "mfa_next"
	sessionMFASignOn = "mfa_sso"
	sessionMFAEnrol  = "mfa_enrol"
)

// msgBadCode is the one message for every refused code (wrong, replayed, unknown recovery
// code), so the page does not tell them apart.
const msgBadCode = "The code is not correct, or it was already used."

// MFA is two-factor sign-in with TOTP codes and single-use recovery codes; the zero value has
// none (no code is asked and /account/security is 404).
type MFA struct {
	Factors Factors
	// Require lists the roles that must enrol: such a person without a factor is signed in
	// only to /account/security (and sign-out) until they have enrolled.
	Require []runtime.Role
	// Always asks for the code after single sign-on too, even when the provider says it did
	// MFA (amr mfa or otp).
	Always bool
	// Issuer is the name authenticator apps list the account under (default "runsdesk").
	Issuer string
	// Alerts, when set, tells a person that one of their recovery codes was used.
	Alerts Alerts
}

// Factors keeps people's second factors (*db.Factors). Errors wrapping runtime.ErrNotFound
// mean "none" or "not accepted"; any other error is a store failure.
type Factors interface {
	// Sealing reports whether secrets can be sealed; without it Begin refuses.
	Sealing() bool
	// Factor returns person uid's factor (opened secret, confirmed, last step, codes left).
	Factor(ctx context.Context, uid int64) (mfa.Factor, error)
	// Enrolled reports whether person uid has a confirmed factor.
	Enrolled(ctx context.Context, uid int64) (bool, error)
	// Begin stores secret as uid's factor waiting for its first code.
	Begin(ctx context.Context, uid int64, secret string) error
	// Confirm confirms uid's waiting factor at step with recovery code hashes, audited.
	Confirm(ctx context.Context, uid, step int64, hashes []string, audit *runtime.AuditRecord) error
	// UseStep records step as used; a step at or before the last one used is ErrNotFound.
	UseStep(ctx context.Context, uid, step int64) error
	// UseRecoveryCode uses the unused code of hash once, audited, and returns how many remain.
	UseRecoveryCode(ctx context.Context, uid int64, hash string, audit *runtime.AuditRecord) (int, error)
	// ReplaceRecoveryCodes voids uid's codes and stores hashes instead, audited.
	ReplaceRecoveryCodes(ctx context.Context, uid int64, hashes []string, audit *runtime.AuditRecord) error
}

// Alerts tells people of security events on their account (notify.SecurityMail).
type Alerts interface {
	// RecoveryCodeUsed tells person (by their e-mail address) that a recovery code of theirs
	// signed in from ip, leaving left unused.
	RecoveryCodeUsed(ctx context.Context, person runtime.Actor, ip string, left int) error
}

// firstFactor is a sign-in whose password or provider was accepted.
type firstFactor struct {
	actor runtime.Actor
	epoch int64
	next  string
	// signOn marks single sign-on; providerMFA that the provider says it did MFA.
	signOn, providerMFA bool
}

// afterFirstFactor goes on from an accepted password or provider: to the code step when the
// person has a factor (not after single sign-on the provider did MFA for, unless MFA.Always),
// else signed in — only to enrolment when their role must have a factor.
func (h *Handlers) afterFirstFactor(c echo.Context, f firstFactor) error {
	ask, enrol, err := h.secondFactor(c.Request().Context(), f)
	if err != nil {
		return err
	}
	if ask {
		return h.askCode(c, f)
	}
	return h.signedIn(c, f, enrol, "")
}

// secondFactor reports whether f's person owes a code, or else must enrol first.
func (h *Handlers) secondFactor(ctx context.Context, f firstFactor) (ask, enrol bool, err error) {
	if h.mfa.Factors == nil || (f.providerMFA && !h.mfa.Always) {
		return false, false, nil
	}
	enrolled, err := h.mfa.Factors.Enrolled(ctx, f.actor.UserUID)
	if err != nil {
		return false, false, err
	}
	owed := slices.Contains(h.mfa.Require, f.actor.Role) || f.actor.MFARequired
	return enrolled, !enrolled && owed, nil
}

// msgOutsideMFA refuses a person whose account elsewhere has a second factor runsdesk cannot
// check (a TYPO3 account with TYPO3's own MFA) when runsdesk's own cannot be set up here.
const msgOutsideMFA = "This account uses two-factor sign-in in TYPO3, which runsdesk cannot check, and this desk " +
	"cannot offer its own: it has no sealing keys. Ask an administrator to set RUNSDESK_KEYS."

// outsideMFAUnmet reports whether actor owes runsdesk's second factor (MFARequired) and this
// desk cannot provide it (no Factors, or Factors that cannot seal a secret).
func (h *Handlers) outsideMFAUnmet(actor runtime.Actor) bool {
	return actor.MFARequired && (h.mfa.Factors == nil || !h.mfa.Factors.Sealing())
}

// signedIn starts f's session (a new token), audits the sign-in (how says with which code,
// "" for none) and sends the person on: to choose a password when it was reset, to enrol
// when enrol, else to their deep link.
func (h *Handlers) signedIn(c echo.Context, f firstFactor, enrol bool, how string) error {
	ctx := c.Request().Context()
	if err := h.startSession(c, f.actor, f.epoch); err != nil {
		return err
	}
	if f.signOn {
		h.sessions.Put(ctx, sessionOIDCChecked, h.now().Unix())
	}
	if enrol {
		h.sessions.Put(ctx, sessionMFAEnrol, int64(1))
	}
	h.endLoginForm(c)
	reason := how
	if f.signOn {
		reason = joinReason("single sign-on", how)
	}
	if enrol {
		reason = joinReason(reason, "must enrol a second factor first")
	}
	h.audit(c, actionLogin, outcomeSuccess, reason)
	switch {
	case f.actor.PasswordChangeRequired:
		return c.Redirect(http.StatusSeeOther, passwordPath)
	case enrol:
		return c.Redirect(http.StatusSeeOther, views.SecurityPath)
	}
	return c.Redirect(http.StatusSeeOther, f.next)
}

// joinReason joins two parts of an audit reason with "; ", leaving out an empty one.
func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// askCode keeps f in a fresh session that is not signed in and sends the person to the code
// form.
func (h *Handlers) askCode(c echo.Context, f firstFactor) error {
	ctx := c.Request().Context()
	if err := h.sessions.RenewToken(ctx); err != nil {
		return fmt.Errorf("renew session: %w", err)
	}
	h.sessions.Remove(ctx, sessionUID)
	h.sessions.Put(ctx, sessionMFAUser, f.actor.UserUID)
	h.sessions.Put(ctx, sessionMFAEpoch, f.epoch)
	h.sessions.Put(ctx, sessionMFASince, h.now().Unix())
	h.sessions.Put(ctx, sessionMFANext, f.next)
	signOn := int64(0)
	if f.signOn {
		signOn = 1
	}
	h.sessions.Put(ctx, sessionMFASignOn, signOn)
	h.auditAs(c, f.actor, actionLogin, "", outcomeCodeAsked, "first factor accepted; one-time code asked")
	return c.Redirect(http.StatusSeeOther, loginCodePath)
}

// pendingCode returns the half-finished sign-in of the session (ok false when there is none
// or it is older than codeStepLifetime).
func (h *Handlers) pendingCode(c echo.Context) (uid, epoch int64, f firstFactor, ok bool) {
	ctx := c.Request().Context()
	uid = h.sessions.GetInt64(ctx, sessionMFAUser)
	since := h.sessions.GetInt64(ctx, sessionMFASince)
	if uid <= 0 || h.now().Sub(time.Unix(since, 0)) > codeStepLifetime {
		return 0, 0, firstFactor{}, false
	}
	f = firstFactor{next: localRedirect(h.sessions.GetString(ctx, sessionMFANext), "/"),
		signOn: h.sessions.GetInt64(ctx, sessionMFASignOn) == 1}
	return uid, h.sessions.GetInt64(ctx, sessionMFAEpoch), f, true
}

// endPendingCode forgets the session's half-finished sign-in.
func (h *Handlers) endPendingCode(c echo.Context) {
	ctx := c.Request().Context()
	for _, k := range []string{sessionMFAUser, sessionMFAEpoch, sessionMFASince, sessionMFANext, sessionMFASignOn} {
		h.sessions.Remove(ctx, k)
	}
}

// loginCodeForm shows the code form of a half-finished sign-in; without one it sends the
// visitor to the sign-in page (a signed-in person to the start page).
func (h *Handlers) loginCodeForm(c echo.Context) error {
	if h.actor(c).UserUID > 0 {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	if _, _, _, ok := h.pendingCode(c); !ok {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	return h.renderCode(c, http.StatusOK, "")
}

// loginCodeSubmit finishes a half-finished sign-in with a code: six digits are a TOTP code
// (±1 step, a step accepted once), anything else a recovery code (used once; the person is
// told by e-mail). Order as for the password: throttle (429, per account and per address,
// counted apart from the password's), the person still able to sign in with the same epoch,
// the code (422 with one message for every failure, recorded for throttling), then the
// session as after a password. Every outcome is audited.
func (h *Handlers) loginCodeSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	uid, epoch, f, ok := h.pendingCode(c)
	if !ok {
		h.endPendingCode(c)
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	account := h.throttle.CodeAccount(uid)
	wait, err := h.throttle.Blocked(ctx, account, c.RealIP(), h.now())
	if err != nil {
		return err
	}
	person := runtime.Actor{UserUID: uid}
	if wait > 0 {
		h.auditAs(c, person, actionLoginCode, "", outcomeThrottled, "too many wrong codes")
		retryAfter(c, wait)
		return h.renderCode(c, http.StatusTooManyRequests, "Too many wrong codes. Try again in "+minutes(wait)+".")
	}
	actor, current, err := h.accounts.SessionActor(ctx, uid)
	if errors.Is(err, runtime.ErrNotFound) || (err == nil && current != epoch) {
		h.endPendingCode(c)
		h.auditAs(c, person, actionLoginCode, "", outcomeDenied, "account changed or disabled since the password")
		return h.renderLogin(c, http.StatusUnprocessableEntity, views.LoginForm{Next: f.next, Error: "Your sign-in has expired. Sign in again."})
	}
	if err != nil {
		return err
	}
	f.actor, f.epoch = actor, epoch
	how, left, refused, err := h.checkCode(c, actor, c.FormValue("code"))
	if err != nil {
		return err
	}
	if refused != "" {
		if ferr := h.throttle.Fail(ctx, account, c.RealIP(), h.now()); ferr != nil {
			return ferr
		}
		h.auditAs(c, actor, actionLoginCode, "", outcomeFailure, refused)
		return h.renderCode(c, http.StatusUnprocessableEntity, msgBadCode)
	}
	if err := h.throttle.Succeed(ctx, account); err != nil {
		return err
	}
	h.endPendingCode(c)
	if left >= 0 {
		h.alertRecoveryCode(c, actor, left)
	}
	return h.signedIn(c, f, false, how)
}

// checkCode checks typed against actor's factor: how names the code accepted, left is the
// recovery codes left after one was used (-1 for a TOTP code), refused says why a code was
// not accepted ("" when it was).
func (h *Handlers) checkCode(c echo.Context, actor runtime.Actor, typed string) (how string, left int, refused string, err error) {
	ctx := c.Request().Context()
	if !mfa.IsCode(typed) {
		audit := &runtime.AuditRecord{Actor: actor, AuditNote: runtime.AuditNote{Action: actionRecoveryCode, IP: c.RealIP(),
			Outcome: outcomeSuccess, Reason: "a recovery code signed in"}}
		left, err := h.mfa.Factors.UseRecoveryCode(ctx, actor.UserUID, mfa.HashRecoveryCode(typed), audit)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			return "", -1, "recovery code not accepted", nil
		case err != nil:
			return "", -1, "", err
		}
		return "with a recovery code", left, "", nil
	}
	factor, err := h.mfa.Factors.Factor(ctx, actor.UserUID)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return "", -1, "no second factor", nil
	case err != nil:
		return "", -1, "", err
	case !factor.Confirmed:
		return "", -1, "second factor not confirmed", nil
	}
	step, ok := mfa.Match(factor.Secret, typed, h.now(), factor.LastStep)
	if !ok {
		if _, used := mfa.Match(factor.Secret, typed, h.now(), -1); used {
			return "", -1, "code of a time step already used (replay)", nil
		}
		return "", -1, "wrong code", nil
	}
	err = h.mfa.Factors.UseStep(ctx, actor.UserUID, step)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return "", -1, "code of a time step already used (replay)", nil
	case err != nil:
		return "", -1, "", err
	}
	return "with a one-time code", -1, "", nil
}

// alertRecoveryCode tells actor that a recovery code of theirs was used, when they have an
// address and alerts are set; a failure is logged (the sign-in stands, the audit row is
// written).
func (h *Handlers) alertRecoveryCode(c echo.Context, actor runtime.Actor, left int) {
	if h.mfa.Alerts == nil || actor.Email == "" {
		return
	}
	if err := h.mfa.Alerts.RecoveryCodeUsed(c.Request().Context(), actor, c.RealIP(), left); err != nil {
		h.log.ErrorContext(c.Request().Context(), "recovery code alert not sent", "request_id", requestID(c), "user", actor.UserUID, "error", err)
	}
}

func (h *Handlers) renderCode(c echo.Context, status int, errText string) error {
	p := h.page(c, "Enter your code", views.NavNone)
	p.CSRF = h.loginFormToken(c)
	return h.render(c, status, views.CodePage(p, errText))
}

// requireFactor sends (303) a person who must enrol a second factor to /account/security,
// whatever they ask for, until they have. Place it after requireUser on every route but
// enrolment and sign-out.
func (h *Handlers) requireFactor(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.sessions.GetInt64(c.Request().Context(), sessionMFAEnrol) == 1 {
			return c.Redirect(http.StatusSeeOther, views.SecurityPath)
		}
		return next(c)
	}
}
