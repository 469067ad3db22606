package handlers

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// Flashes of the sessions page.
const (
	msgSessionEnded = "That session has been signed out: it goes to the sign-in page at its next request."
	msgOthersEnded  = "Every other session has been signed out; this one stays signed in."
)

// accountSessions is GET /account/sessions: the person's open sessions of the session index
// (sign-in, last seen, address, browser), this one first and marked.
func (h *Handlers) accountSessions(c echo.Context) error {
	ctx := c.Request().Context()
	now := h.now()
	list, err := h.index.List(ctx, h.actor(c).UserUID, h.sessions.GetInt64(ctx, sessionEpoch), now.Unix())
	if err != nil {
		return err
	}
	current := h.sessions.GetString(ctx, sessionIndexID)
	v := views.SessionsView{Now: now}
	for _, s := range list {
		v.Sessions = append(v.Sessions, views.SessionRow{UID: s.UID, Created: time.Unix(s.Created, 0), LastSeen: time.Unix(s.LastSeen, 0),
			IP: s.IP, UserAgent: s.UserAgent, Current: s.ID == current})
	}
	slices.SortStableFunc(v.Sessions, func(a, b views.SessionRow) int {
		switch {
		case a.Current == b.Current:
			return 0
		case a.Current:
			return -1
		}
		return 1
	})
	return h.render(c, http.StatusOK, views.SessionsPage(h.page(c, "Your sessions", views.NavNone), v))
}

// accountSessionEnd is POST /account/sessions/end: it signs out the person's open session
// named by form field session (that session's next request goes to the sign-in page), audited,
// then shows the sessions page (303) with a flash. A number that is not an open session of
// theirs is 404 (audited as denied), whoever's session it is.
func (h *Handlers) accountSessionEnd(c echo.Context) error {
	uid, err := strconv.ParseInt(c.FormValue(views.FieldSession), 10, 64)
	if err != nil {
		return h.notOwnSession(c)
	}
	ctx := c.Request().Context()
	err = h.index.End(ctx, h.actor(c).UserUID, h.sessions.GetString(ctx, sessionIndexID), uid, h.now().Unix())
	if errors.Is(err, runtime.ErrNotFound) {
		return h.notOwnSession(c)
	}
	if err != nil {
		return err
	}
	h.audit(c, actionSessionSignOut, outcomeSuccess, "signed out session "+strconv.FormatInt(uid, 10))
	h.flash(c, flashSessionEnded)
	return c.Redirect(http.StatusSeeOther, views.SessionsPath)
}

// notOwnSession audits a sign-out of a session that is not an open one of the person's and
// returns the 404.
func (h *Handlers) notOwnSession(c echo.Context) error {
	h.audit(c, actionSessionSignOut, outcomeDenied, "not an open session of theirs")
	return publicError(http.StatusNotFound, "not_found", "That is not one of your open sessions. It may have ended already.")
}

// accountSessionsEndOthers is POST /account/sessions/end-others: it signs out every open
// session of the person but this one, audited with how many, then shows the sessions page
// (303) with a flash. Once it has answered, no other session of theirs gets another request
// through. Of sessions doing it at once the first wins; the others are signed out (303
// /login).
func (h *Handlers) accountSessionsEndOthers(c echo.Context) error {
	ctx := c.Request().Context()
	n, err := h.index.EndOthers(ctx, h.actor(c).UserUID, h.sessions.GetString(ctx, sessionIndexID), h.now().Unix())
	if errors.Is(err, runtime.ErrNotFound) {
		h.audit(c, actionSessionSignOut, outcomeDenied, "this session was signed out meanwhile")
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	if err != nil {
		return err
	}
	h.audit(c, actionSessionSignOut, outcomeSuccess, "signed out every other session ("+strconv.FormatInt(n, 10)+")")
	h.flash(c, flashOthersEnded)
	return c.Redirect(http.StatusSeeOther, views.SessionsPath)
}
