package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/mfa"
	"runsdesk/runtime"
	"runsdesk/views"
)

// defaultIssuer is the name authenticator apps list runsdesk accounts under.
const defaultIssuer = "runsdesk"

// msgNoKeys says why enrolment is refused without sealing keys, and how to set them.
const msgNoKeys = "Two-factor sign-in cannot be set up yet: runsdesk stores the secret sealed, and no sealing keys are set. " +
	"An administrator sets RUNSDESK_KEYS (or RUNSDESK_KEYS_FILE) — `runsdesk keys generate` makes a key; " +
	"`make run`'s demo writes a key file under ./var — and restarts runsdesk."

// security is GET /account/security: the person's second factor — none (a button to set one
// up, or why it cannot be), waiting for its first code (QR code, secret, code form), or on
// (recovery codes left, regenerate).
func (h *Handlers) security(c echo.Context) error {
	if h.mfa.Factors == nil {
		return echo.ErrNotFound
	}
	v, err := h.securityView(c)
	if err != nil {
		return err
	}
	return h.renderSecurity(c, http.StatusOK, v)
}

// securityView is the security page of the signed-in person as stored.
func (h *Handlers) securityView(c echo.Context) (views.SecurityView, error) {
	actor := h.actor(c)
	v := views.SecurityView{Sealing: h.mfa.Factors.Sealing(), Required: h.mustEnrol(c), NoKeys: msgNoKeys}
	factor, err := h.mfa.Factors.Factor(c.Request().Context(), actor.UserUID)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return v, nil
	case err != nil:
		return v, err
	}
	v.Confirmed, v.RecoveryLeft = factor.Confirmed, factor.RecoveryLeft
	if !factor.Confirmed {
		v.Secret = factor.Secret
	}
	return v, nil
}

// mustEnrol reports whether the session may do nothing but enrol (--require-mfa).
func (h *Handlers) mustEnrol(c echo.Context) bool {
	return h.sessions.GetInt64(c.Request().Context(), sessionMFAEnrol) == 1
}

// securityBegin is POST /account/security/totp: a fresh secret waiting for its first code
// (replacing one that waits), audited. Refused (422) without sealing keys; a person whose
// factor is on goes back to the page.
func (h *Handlers) securityBegin(c echo.Context) error {
	if h.mfa.Factors == nil {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	actor := h.actor(c)
	v, err := h.securityView(c)
	if err != nil {
		return err
	}
	if !v.Sealing {
		h.audit(c, actionMFAEnrol, outcomeDenied, "no sealing keys")
		v.Error = msgNoKeys
		return h.renderSecurity(c, http.StatusUnprocessableEntity, v)
	}
	if v.Confirmed {
		return c.Redirect(http.StatusSeeOther, views.SecurityPath)
	}
	secret, err := mfa.NewSecret(h.issuer(), actor.Name)
	if err != nil {
		return err
	}
	if err := h.mfa.Factors.Begin(ctx, actor.UserUID, secret.Base32); err != nil {
		return err
	}
	h.audit(c, actionMFAEnrol, outcomeStarted, "")
	return c.Redirect(http.StatusSeeOther, views.SecurityPath)
}

// securityQR is GET /account/security/qr.png: the QR code of the person's waiting secret
// (404 when none waits), never cached.
func (h *Handlers) securityQR(c echo.Context) error {
	if h.mfa.Factors == nil {
		return echo.ErrNotFound
	}
	actor := h.actor(c)
	factor, err := h.mfa.Factors.Factor(c.Request().Context(), actor.UserUID)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return echo.ErrNotFound
	case err != nil:
		return err
	case factor.Confirmed:
		return echo.ErrNotFound
	}
	url, err := mfa.URL(h.issuer(), actor.Name, factor.Secret)
	if err != nil {
		return err
	}
	png, err := mfa.QRCode(url)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "image/png", png)
}

// securityConfirm is POST /account/security/totp/confirm: a code of the waiting secret
// (±1 step) turns the factor on and answers with ten new recovery codes, shown this once;
// a wrong code is 422 on the field. Audited. Under --require-mfa the person may go on.
func (h *Handlers) securityConfirm(c echo.Context) error {
	if h.mfa.Factors == nil {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	actor := h.actor(c)
	v, err := h.securityView(c)
	if err != nil {
		return err
	}
	if v.Confirmed || v.Secret == "" {
		return c.Redirect(http.StatusSeeOther, views.SecurityPath)
	}
	step, ok := mfa.Match(v.Secret, c.FormValue("code"), h.now(), 0)
	if !ok {
		h.audit(c, actionMFAEnrol, outcomeFailure, "wrong confirmation code")
		v.CodeError = "That code is not right. Type the six digits your app shows now; check that your device's clock is set automatically."
		return h.renderSecurity(c, http.StatusUnprocessableEntity, v)
	}
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return err
	}
	audit := &runtime.AuditRecord{Actor: actor, AuditNote: runtime.AuditNote{Action: actionMFAEnrol, IP: c.RealIP(), Outcome: outcomeSuccess,
		Reason: "TOTP factor confirmed; recovery codes issued"}}
	err = h.mfa.Factors.Confirm(ctx, actor.UserUID, step, hashes, audit)
	if errors.Is(err, runtime.ErrNotFound) {
		return c.Redirect(http.StatusSeeOther, views.SecurityPath)
	}
	if err != nil {
		return err
	}
	h.sessions.Remove(ctx, sessionMFAEnrol)
	return h.renderRecoveryCodes(c, codes, true)
}

// securityRecoveryCodes is POST /account/security/recovery-codes: ten new recovery codes,
// shown this once; the old ones stop working. Audited; without a factor the person goes back
// to the page.
func (h *Handlers) securityRecoveryCodes(c echo.Context) error {
	if h.mfa.Factors == nil {
		return echo.ErrNotFound
	}
	actor := h.actor(c)
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return err
	}
	audit := &runtime.AuditRecord{Actor: actor, AuditNote: runtime.AuditNote{Action: actionRecoveryCodes, IP: c.RealIP(), Outcome: outcomeSuccess,
		Reason: "recovery codes regenerated; the old ones are void"}}
	err = h.mfa.Factors.ReplaceRecoveryCodes(c.Request().Context(), actor.UserUID, hashes, audit)
	if errors.Is(err, runtime.ErrNotFound) {
		return c.Redirect(http.StatusSeeOther, views.SecurityPath)
	}
	if err != nil {
		return err
	}
	return h.renderRecoveryCodes(c, codes, false)
}

// newRecoveryCodes returns fresh recovery codes and their hashes.
func newRecoveryCodes() (codes, hashes []string, err error) {
	codes, err = mfa.NewRecoveryCodes(mfa.RecoveryCodeCount)
	if err != nil {
		return nil, nil, err
	}
	for _, code := range codes {
		hashes = append(hashes, mfa.HashRecoveryCode(code))
	}
	return codes, hashes, nil
}

func (h *Handlers) issuer() string {
	if h.mfa.Issuer != "" {
		return h.mfa.Issuer
	}
	return defaultIssuer
}

func (h *Handlers) renderSecurity(c echo.Context, status int, v views.SecurityView) error {
	return h.render(c, status, views.SecurityPage(h.page(c, "Two-factor sign-in", views.NavNone), v))
}

func (h *Handlers) renderRecoveryCodes(c echo.Context, codes []string, enrolled bool) error {
	return h.render(c, http.StatusOK, views.RecoveryCodesPage(h.page(c, "Your recovery codes", views.NavNone), codes, enrolled))
}
