package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/await"
	"runsdesk/runtime"
)

// Guard is the API's chain for a route mounted outside /api/v1 that callers reach with the
// same tokens (the MCP server's /mcp): its errors in the API's shape, the gate's slot (unless
// the route is long-lived), bearer authentication with the per-address failure budget, the
// per-token rate limit, and scope.
func (a *API) Guard(scope string) []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{a.respond, a.waiters.Unless(a.gate.Middleware(busy)), a.authenticate, a.limit, requireScope(scope)}
}

// Caller is the service account Guard authenticated for c (the zero Actor, which may do
// nothing, when none).
func (a *API) Caller(c echo.Context) runtime.Actor { return actorOf(c) }

// StillAllowed checks c's token again as Guard did (disabled, rotated, expired or without
// scope any more is the error Guard would answer), for a request held open.
func (a *API) StillAllowed(c echo.Context, scope string) error { return a.stillAllowed(c, scope) }

// Audit records action on run runUUID for c's service account and client address, its outcome
// "success" or err's refusal code, as the API's own routes record theirs; it is written also
// when the client has gone away (within await.ReadTimeout).
func (a *API) Audit(c echo.Context, action, runUUID string, err error) {
	r := c.Request()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), await.ReadTimeout)
	defer cancel()
	c.SetRequest(r.WithContext(ctx))
	defer c.SetRequest(r)
	a.audit(c, action, runUUID, outcomeOf(err), "")
}
