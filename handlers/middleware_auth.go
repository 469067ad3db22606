package handlers

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// loadActor re-loads the session's user on every request. A user who is gone, disabled, no
// longer allowed to sign in, or whose session epoch changed (role change, password change,
// "end sessions"), and a session signed out from another one or missing from the session
// index, loses the session at once; the request continues anonymously. A
// store failure fails the request (500), never opens it.
func (h *Handlers) loadActor(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		uid := h.sessions.GetInt64(ctx, sessionUID)
		if uid <= 0 {
			return next(c)
		}
		actor, session, reason, err := h.sessionActor(ctx, uid)
		if err != nil {
			return err
		}
		if reason == "" {
			if err := h.touchSession(c, session); err != nil {
				return unavailable(fmt.Errorf("session index: %w", err))
			}
			setActor(c, actor)
			return next(c)
		}
		if err := h.endSession(ctx); err != nil {
			return err
		}
		h.auditAs(c, runtime.Actor{UserUID: uid, Name: actor.Name}, actionSessionEnded, "", outcomeDenied, reason)
		return next(c)
	}
}

// sessionActor reads the person and the session-index row of the session in ctx, whose uid
// is uid: the actor and the row, or why the session no longer stands (reason: the person is
// gone or disabled, the session epoch changed, or the session was signed out from another one
// or is missing from the index). A store failure is an error (503).
func (h *Handlers) sessionActor(ctx context.Context, uid int64) (runtime.Actor, runtime.Session, string, error) {
	actor, epoch, err := h.accounts.SessionActor(ctx, uid)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return actor, runtime.Session{}, "user disabled or removed", nil
	case err != nil:
		return actor, runtime.Session{}, "", unavailable(fmt.Errorf("session user %d: %w", uid, err))
	case epoch != h.sessions.GetInt64(ctx, sessionEpoch):
		return actor, runtime.Session{}, "session epoch changed", nil
	}
	s, err := h.index.Find(ctx, h.sessions.GetString(ctx, sessionIndexID))
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return actor, s, "session not in the session index", nil
	case err != nil:
		return actor, s, "", unavailable(fmt.Errorf("session index: %w", err))
	case s.Ended > 0:
		return actor, s, "signed out from another session", nil
	}
	return actor, s, "", nil
}

// requireUser lets only signed-in people through. Anonymous GET requests are redirected (303)
// to /login?next=<path>; other anonymous requests to /login.
func (h *Handlers) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.actor(c).UserUID > 0 {
			return next(c)
		}
		target := "/login"
		if r := c.Request(); r.Method == http.MethodGet && r.URL.Path != "/" {
			target += "?next=" + url.QueryEscape(r.URL.RequestURI())
		}
		return c.Redirect(http.StatusSeeOther, target)
	}
}

// requireChosenPassword redirects (303) a person whose password was reset to the
// change-password page, whatever they ask for, until they have chosen a new password.
// Place it after requireUser on every route but that page and sign-out.
func (h *Handlers) requireChosenPassword(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.actor(c).PasswordChangeRequired {
			return c.Redirect(http.StatusSeeOther, passwordPath)
		}
		return next(c)
	}
}

// requireRole lets through only actors with one of roles; others get 403 and an audit row.
// Place it after requireUser (or apiAuth).
func (h *Handlers) requireRole(roles ...runtime.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			a := h.actor(c)
			if !a.Disabled && slices.Contains(roles, a.Role) {
				return next(c)
			}
			h.auditRun(c, actionAccessDenied, c.Param("uuid"), outcomeDenied,
				"role "+string(a.Role)+" may not "+c.Request().Method+" "+c.Path())
			return publicError(http.StatusForbidden, "forbidden", "Your role does not allow this.")
		}
	}
}

// verifyCSRF checks every state-changing request against the session's CSRF token, sent as
// form field _csrf or header X-CSRF-Token. A missing session, token or mismatch is 403 with an
// audit row; an oversized body is 413.
func (h *Handlers) verifyCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if safeMethod(c) {
			return next(c)
		}
		got, err := submittedCSRF(c)
		if err != nil {
			return err
		}
		want := h.sessions.GetString(c.Request().Context(), sessionCSRF)
		if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			return h.csrfRejected(c)
		}
		return next(c)
	}
}

// safeMethod reports whether the request cannot change state (GET, HEAD, OPTIONS).
func safeMethod(c echo.Context) bool {
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// submittedCSRF returns the CSRF token of the request: header X-CSRF-Token, else form field
// _csrf. A body that cannot be read is its error (413 when oversized).
func submittedCSRF(c echo.Context) (string, error) {
	if got := c.Request().Header.Get(echo.HeaderXCSRFToken); got != "" {
		return got, nil
	}
	form, err := c.FormParams()
	if err != nil {
		return "", bodyReadError(err)
	}
	return form.Get("_csrf"), nil
}

// csrfRejected audits a request refused for its CSRF token and returns the 403.
func (h *Handlers) csrfRejected(c echo.Context) error {
	h.audit(c, actionCSRF, outcomeDenied, c.Request().Method+" "+c.Path())
	return publicError(http.StatusForbidden, "csrf",
		"This form has expired or did not come from runsdesk. Go back, reload the page and try again.")
}
