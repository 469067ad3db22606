package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/await"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// writeSlack is how far past its limit a long-poll's connection may still write its answer.
const writeSlack = 10 * time.Second

// asksToWait reports whether the request asks to be held (a valid, positive ?wait=).
func asksToWait(c echo.Context) bool {
	d, err := waitParam(c, waiters.MaxHold)
	return err == nil && d > 0
}

// waitParam is ?wait=: a duration ("30s", "1m"); 0 when absent or zero; longer than most is
// most. Several values, a negative or an unreadable one is 400.
func waitParam(c echo.Context, most time.Duration) (time.Duration, error) {
	q := c.QueryParams()["wait"]
	if len(q) == 0 {
		return 0, nil
	}
	d, err := time.ParseDuration(q[0])
	if len(q) != 1 || err != nil || d < 0 {
		return 0, invalid(fmt.Sprintf("wait must be one duration such as 30s (at most %s)", most))
	}
	return min(d, most), nil
}

// awaitRun holds the request until the run asked about is terminal or in another pause than
// asked, then answers it; at limit, or when the server shuts down, it answers the run as it
// is (a client that went away is answered the same, to no one). At every wake the token is
// checked again: one disabled, rotated or without scope read any more is answered as
// authentication answers it (401, 403). More waiters than the hall holds is 503 with
// Retry-After.
func (a *API) awaitRun(c echo.Context, asked runtime.RunView, limit time.Duration) (runtime.RunView, error) {
	if asked.Run.Status.Terminal() {
		return asked, nil
	}
	if err := holdDeadlines(c, limit); err != nil {
		return asked, err
	}
	view := asked
	err := await.Hold(c.Request().Context(), a.waiters, await.RunKeys(asked.Run.UUID, actorOf(c)), limit, 0, func(_ context.Context, last bool) (bool, error) {
		if !last {
			if err := a.stillAllowed(c, runtime.ScopeRead); err != nil {
				return true, err
			}
		}
		now, err := a.readRun(c, asked.Run.UUID)
		if err != nil {
			return true, err
		}
		view = now
		return moved(asked.Run, view.Run), nil
	})
	return view, holdError(err)
}

// holdDeadlines gives the request's connection the time a hold of limit needs to answer.
func holdDeadlines(c echo.Context, limit time.Duration) error {
	if err := waiters.SetDeadlines(c.Response(), limit+writeSlack); err != nil {
		return &problem{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error", Err: err}
	}
	return nil
}

// holdError is err as a hold's request answers it: a full hall is 503 with Retry-After.
func holdError(err error) error {
	if errors.Is(err, waiters.ErrFull) {
		return &problem{Status: http.StatusServiceUnavailable, Code: "unavailable",
			Message: "too many requests are waiting; try again", Err: err}
	}
	return err
}

// readRun reads run uuid for the request's actor within await.ReadTimeout.
func (a *API) readRun(c echo.Context, uuid string) (runtime.RunView, error) {
	ctx, cancel := context.WithTimeout(c.Request().Context(), await.ReadTimeout)
	defer cancel()
	view, err := a.rt.Get(ctx, actorOf(c), uuid)
	if err != nil {
		return view, fromRuntime(err)
	}
	return view, nil
}

// stillAllowed checks the request's token again, as authenticate and requireScope do.
func (a *API) stillAllowed(c echo.Context, scope string) error {
	r := c.Request()
	ctx, cancel := context.WithTimeout(r.Context(), await.ReadTimeout)
	defer cancel()
	c.SetRequest(r.WithContext(ctx))
	actor, _, err := a.credentials(c)
	c.SetRequest(r)
	if err != nil {
		return err
	}
	c.Set(actorKey, actor)
	return requireScope(scope)(func(echo.Context) error { return nil })(c)
}

// moved reports whether now is an answer to a client that asked about asked: terminal, or in
// a pause other than the one asked was in.
func moved(asked, now runtime.Run) bool {
	if now.Status.Terminal() {
		return true
	}
	return now.Status.Waiting() && (now.Status != asked.Status || now.SuspendedAt != asked.SuspendedAt ||
		now.Iterations != asked.Iterations || !asked.Status.Waiting())
}
