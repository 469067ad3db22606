package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/sse"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// events is GET /events, the live desk as Server-Sent Events (package sse) for the token's
// service account: every run's changes (scope read reads every run) and the inbox's. The
// token is checked again at every wake and heartbeat, and a change of its account wakes the
// stream at once: disabled, rotated, expired or without scope read, the stream ends. More
// streams than the hall holds is 503 with Retry-After.
func (a *API) events(c echo.Context) error {
	actor := actorOf(c)
	recheck := func(context.Context) (runtime.Actor, error) {
		if err := a.stillAllowed(c, runtime.ScopeRead); err != nil {
			return runtime.Actor{}, err
		}
		return actorOf(c), nil
	}
	err := sse.Serve(c, a.waiters, actor, recheck, waiters.Key{Kind: waiters.KindServiceAccount, ID: actor.Name})
	if errors.Is(err, waiters.ErrFull) {
		return &problem{Status: http.StatusServiceUnavailable, Code: "unavailable",
			Message: "too many requests are waiting; try again", Err: err}
	}
	return err
}
