package handlers

import (
	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// Keys of per-request values in the echo context.
const (
	ctxRequestID = "runsdesk.request_id"
	ctxSession   = "runsdesk.session"
	ctxActor     = "runsdesk.actor"
)

// actor returns who makes this request: the signed-in person (re-loaded from be_users on every
// request) or the API's service account. Anonymous requests get the zero Actor, which
// runtime.MayAct denies everything.
func (h *Handlers) actor(c echo.Context) runtime.Actor {
	a, _ := c.Get(ctxActor).(runtime.Actor)
	return a
}

func setActor(c echo.Context, a runtime.Actor) { c.Set(ctxActor, a) }

// hasSession reports whether the session middleware ran for this request, so session values
// may be read.
func hasSession(c echo.Context) bool {
	b, _ := c.Get(ctxSession).(bool)
	return b
}

// requestID returns the id of this request (also in the X-Request-ID response header and in
// every log line about it).
func requestID(c echo.Context) string {
	id, _ := c.Get(ctxRequestID).(string)
	return id
}
