package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/sse"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// recheckTimeout bounds each check of a stream's session.
const recheckTimeout = 5 * time.Second

// errSessionEnded ends the stream of a session that no longer stands.
var errSessionEnded = errors.New("the session ended")

// events is GET /events, the live desk as Server-Sent Events (package sse) for the signed-in
// person: what they may read of every run's changes, and the inbox's. Their session is read
// again at every wake and heartbeat, as every request reads it: signed out, expired, disabled
// or with a changed session epoch, the stream ends. More streams than the hall holds is 503
// with Retry-After.
func (h *Handlers) events(c echo.Context) error {
	err := sse.Serve(c, h.waiters, h.actor(c), h.recheckSession(c))
	if errors.Is(err, waiters.ErrFull) {
		return publicError(http.StatusServiceUnavailable, "busy", "Too many live pages are open; the page works without live updates.")
	}
	return err
}

// recheckSession returns the check of c's session a stream makes at every wake: the session
// is loaded again from the store by its token (on a context of its own: the request's holds
// the session as it was loaded), and its person read as loadActor reads them.
func (h *Handlers) recheckSession(c echo.Context) sse.Recheck {
	token := h.sessions.Token(c.Request().Context())
	uid := h.actor(c).UserUID
	return func(context.Context) (runtime.Actor, error) {
		ctx, cancel := context.WithTimeout(context.Background(), recheckTimeout)
		defer cancel()
		ctx, err := h.sessions.Load(ctx, token)
		if err != nil {
			return runtime.Actor{}, err
		}
		if h.sessions.GetInt64(ctx, sessionUID) != uid {
			return runtime.Actor{}, errSessionEnded
		}
		actor, _, reason, err := h.sessionActor(ctx, uid)
		if err == nil && reason != "" {
			err = errSessionEnded
		}
		return actor, err
	}
}
