package api

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

// events is GET /events, the live desk as Server-Sent Events (package sse) for the token's
// service account: every run's changes (scope read reads every run) and the inbox's. The
// token is checked again at every wake and heartbeat (tokenCheck), and a change of its account
// wakes the stream at once: disabled, rotated, expired or without scope read, the stream ends.
// More streams than the hall holds is 503 with Retry-After.
func (a *API) events(c echo.Context) error {
	actor := actorOf(c)
	check := &tokenCheck{a: a, c: c, key: waiters.Key{Kind: waiters.KindServiceAccount, ID: actor.Name}}
	check.remember()
	err := sse.Serve(c, a.waiters, actor, check.recheck, check.key)
	if errors.Is(err, waiters.ErrFull) {
		return &problem{Status: http.StatusServiceUnavailable, Code: "unavailable",
			Message: "too many requests are waiting; try again", Err: err}
	}
	return err
}

// tokenCheck checks a stream's token again. At a wake it compares the hall's shared read of
// the token's account (disabled, token, scopes: the poll reads it for every stream at once,
// and its change wakes the stream) with the one its last full check saw; it checks the token
// in full, as authentication does, when that read moved, the token's expiry has come, or half
// a heartbeat has passed since, so a thousand streams cost no thousand token reads per change.
type tokenCheck struct {
	a     *API
	c     echo.Context
	key   waiters.Key
	stamp string
	at    time.Time
}

// remember notes the hall's read of the account and the time of a full check.
func (t *tokenCheck) remember() {
	t.stamp, _ = t.a.waiters.Stamp(t.key)
	t.at = t.a.clock()
}

func (t *tokenCheck) recheck(context.Context) (runtime.Actor, error) {
	stamp, read := t.a.waiters.Stamp(t.key)
	now := t.a.clock()
	expires := actorOf(t.c).TokenExpires
	if read && stamp == t.stamp && now.Sub(t.at) < t.a.waiters.Heartbeat()/2 && (expires == 0 || now.Unix() < expires) {
		return actorOf(t.c), nil
	}
	t.remember()
	if err := t.a.stillAllowed(t.c, runtime.ScopeRead); err != nil {
		return runtime.Actor{}, err
	}
	return actorOf(t.c), nil
}
