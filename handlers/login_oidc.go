package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/sso"
	"runsdesk/views"
)

// RecheckInterval is how often an active single-sign-on session asks the provider again
// whether the person is still in a mapped group.
const RecheckInterval = 15 * time.Minute

// oidcCallbackPath is where the provider sends the person back.
const oidcCallbackPath = "/login/oidc/callback"

// Keys of the session values of single sign-on: the pending sign-in (state, nonce, PKCE
// verifier, deep link) until the callback, then when the provider last vouched for the person.
const (
	sessionOIDCState    = "oidc_state"
	sessionOIDCNonce    = "oidc_nonce"
	sessionOIDCVerifier = "oidc_verifier"
	sessionOIDCNext     = "oidc_next"
	sessionOIDCChecked  = "oidc_checked"
)

// SignOn is single sign-on with an OpenID Connect provider; the zero value has none.
type SignOn struct {
	Provider   *sso.Provider
	Identities Identities
	// PublicURL is the desk's address the provider sends people back to (empty: the
	// request's own scheme and host).
	PublicURL string
	// PasswordOff refuses password sign-in to everyone but BreakGlassUser.
	PasswordOff    bool
	BreakGlassUser string
}

// Identities keeps the people who sign in with the provider, keyed by (issuer, subject).
type Identities interface {
	// SignIn returns the actor and session epoch of id, creating the account at the first
	// sign-in and syncing (and auditing) the role; disabled is an error wrapping
	// runtime.ErrNotFound.
	SignIn(ctx context.Context, id sso.Identity, ip string) (runtime.Actor, int64, error)
	// Linked returns the subject and stored tokens of user uid (runtime.ErrNotFound: none).
	Linked(ctx context.Context, uid int64) (string, sso.Tokens, error)
	// Vouched records a later check: the role the provider's groups give now and the tokens
	// to keep.
	Vouched(ctx context.Context, uid int64, role runtime.Role, tokens sso.Tokens, ip string) error
}

// oidcStart sends the visitor to the provider with a fresh state, nonce and PKCE challenge,
// kept in their session with the deep link to return to.
func (h *Handlers) oidcStart(c echo.Context) error {
	if h.signOn.Provider == nil {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	pending := sso.NewPending()
	h.sessions.Put(ctx, sessionOIDCState, pending.State)
	h.sessions.Put(ctx, sessionOIDCNonce, pending.Nonce)
	h.sessions.Put(ctx, sessionOIDCVerifier, pending.Verifier)
	h.sessions.Put(ctx, sessionOIDCNext, localRedirect(c.QueryParam("next"), "/"))
	return c.Redirect(http.StatusSeeOther, h.signOn.Provider.AuthCodeURL(h.oidcRedirect(c), pending))
}

// oidcCallback finishes a sign-in: the state must be the session's pending one (used once),
// the ID token verified and the person in a mapped group; then it goes on as after a password
// (the code step unless the provider did MFA, login_mfa.go) to their deep link.
func (h *Handlers) oidcCallback(c echo.Context) error {
	if h.signOn.Provider == nil {
		return echo.ErrNotFound
	}
	ctx := c.Request().Context()
	pending := sso.Pending{State: h.sessions.PopString(ctx, sessionOIDCState),
		Nonce: h.sessions.PopString(ctx, sessionOIDCNonce), Verifier: h.sessions.PopString(ctx, sessionOIDCVerifier)}
	next := localRedirect(h.sessions.PopString(ctx, sessionOIDCNext), "/")
	if pending.State == "" || c.QueryParam("state") != pending.State {
		return h.oidcRefused(c, http.StatusBadRequest, "state unknown or used", "This sign-in link has expired or was already used. Sign in again.")
	}
	if c.QueryParam("error") != "" {
		return h.oidcRefused(c, http.StatusUnauthorized, "provider refused", h.signOn.Provider.Name()+" did not sign you in. Try again.")
	}
	id, err := h.signOn.Provider.Finish(ctx, h.oidcRedirect(c), c.QueryParam("code"), pending)
	if errors.Is(err, sso.ErrNoRole) {
		return h.oidcRefused(c, http.StatusForbidden, "no mapped group",
			"Your "+h.signOn.Provider.Name()+" account is in no group that may use runsdesk. Ask your administrator to add you to one.")
	}
	if err != nil {
		h.log.InfoContext(ctx, "single sign-on refused", "request_id", requestID(c), "error", err)
		return h.oidcRefused(c, http.StatusUnauthorized, "identity not verified", "The sign-in with "+h.signOn.Provider.Name()+" could not be verified. Try again.")
	}
	actor, epoch, err := h.signOn.Identities.SignIn(ctx, id, c.RealIP())
	if errors.Is(err, runtime.ErrNotFound) {
		return h.oidcRefused(c, http.StatusForbidden, "account disabled", "Your runsdesk account is disabled.")
	}
	if err != nil {
		return err
	}
	return h.afterFirstFactor(c, firstFactor{actor: actor, epoch: epoch, next: next, signOn: true, providerMFA: id.MFA})
}

// oidcRefused audits a refused single sign-on and shows the sign-in page with text.
func (h *Handlers) oidcRefused(c echo.Context, status int, reason, text string) error {
	h.audit(c, actionLogin, outcomeDenied, "single sign-on: "+reason)
	return h.renderLogin(c, status, views.LoginForm{Next: "/", Error: text})
}

// oidcRedirect is the callback URL the provider sends the person back to.
func (h *Handlers) oidcRedirect(c echo.Context) string {
	if h.signOn.PublicURL != "" {
		return strings.TrimSuffix(h.signOn.PublicURL, "/") + oidcCallbackPath
	}
	return c.Scheme() + "://" + c.Request().Host + oidcCallbackPath
}

// recheckSignOn asks the provider again about a single-sign-on session's person once
// RecheckInterval has passed since it last vouched for them. A person no longer in a mapped
// group, whose role changed, or whom the provider no longer answers for, loses the session
// at once; the request continues anonymously.
func (h *Handlers) recheckSignOn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		actor := h.actor(c)
		checked := h.sessions.GetInt64(ctx, sessionOIDCChecked)
		if h.signOn.Provider == nil || actor.UserUID <= 0 || checked == 0 || h.now().Sub(time.Unix(checked, 0)) < RecheckInterval {
			return next(c)
		}
		reason, err := h.recheck(c, actor)
		if err != nil {
			return unavailable(err)
		}
		if reason == "" {
			h.sessions.Put(ctx, sessionOIDCChecked, h.now().Unix())
			return next(c)
		}
		if err := h.endSession(ctx); err != nil {
			return err
		}
		setActor(c, runtime.Actor{})
		h.auditAs(c, actor, actionSessionEnded, "", outcomeDenied, reason)
		return next(c)
	}
}

// recheck returns why actor's session must end ("" when it may go on); an error is a store
// failure.
func (h *Handlers) recheck(c echo.Context, actor runtime.Actor) (string, error) {
	ctx := c.Request().Context()
	subject, tokens, err := h.signOn.Identities.Linked(ctx, actor.UserUID)
	if errors.Is(err, runtime.ErrNotFound) {
		return "no longer signed in with the identity provider", nil
	}
	if err != nil {
		return "", err
	}
	role, tokens, err := h.signOn.Provider.Recheck(ctx, subject, tokens)
	switch {
	case errors.Is(err, sso.ErrNoRole):
		return "no longer in a mapped group", nil
	case err != nil:
		h.log.InfoContext(ctx, "single sign-on check failed", "request_id", requestID(c), "user", actor.UserUID, "error", err)
		return "the identity provider no longer answers for the person", nil
	}
	if err := h.signOn.Identities.Vouched(ctx, actor.UserUID, role, tokens, c.RealIP()); err != nil {
		return "", err
	}
	if role != actor.Role {
		return "role changed at the identity provider", nil
	}
	return "", nil
}

// authenticate is Accounts.Authenticate, refusing everyone but the break-glass user as bad
// credentials (after the same password check) while password sign-in is off.
func (h *Handlers) authenticate(ctx context.Context, username, password string) (runtime.Actor, int64, error) {
	actor, epoch, err := h.accounts.Authenticate(ctx, username, password)
	if err == nil && h.signOn.PasswordOff && actor.Name != h.signOn.BreakGlassUser {
		return runtime.Actor{}, 0, runtime.ErrNotFound
	}
	return actor, epoch, err
}

// loginChoices fills in the sign-in page's ways to sign in: the provider's button, and the
// password form unless it is off (then only /login?password=1 shows it, for the break-glass
// user).
func (h *Handlers) loginChoices(c echo.Context, form views.LoginForm) views.LoginForm {
	if h.signOn.Provider != nil {
		form.SignOnName = h.signOn.Provider.Name()
	}
	form.Password = !h.signOn.PasswordOff || c.QueryParam("password") == "1" || form.Username != ""
	return form
}
