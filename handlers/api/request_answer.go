package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/await"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// maxRequestWait is the longest GET /requests/:id?wait= holds: the common 60 s client timeout.
const maxRequestWait = 60 * time.Second

// getRequest is GET /requests/:id: the answer of a request the service account created
// (runtime.RequestAnswer): pending, or the decision. With ?wait=50s (at most 60 s) it is a
// long-poll that answers as soon as the request is decided, expired or withdrawn, else at the
// limit (still pending). Another service account's request is 404, as a run it may not see.
func (a *API) getRequest(c echo.Context) error {
	id, err := requestParam(c)
	if err != nil {
		return err
	}
	wait, err := waitParam(c, maxRequestWait)
	if err != nil {
		return err
	}
	if wait > 0 {
		if err := holdDeadlines(c, wait); err != nil {
			return err
		}
	}
	ans, err := await.Request(c.Request().Context(), a.waiters, a.rt, actorOf(c), id, wait, func(context.Context) error {
		return a.stillAllowed(c, runtime.ScopeRequest)
	})
	if err != nil {
		return answerError(err)
	}
	return c.JSON(http.StatusOK, ans)
}

// withdrawRequest is DELETE /requests/:id: the service account withdraws a request it
// created that still waits; the run is cancelled and the answer (status cancelled) returned.
// A request decided already is 409 run_not_cancellable.
func (a *API) withdrawRequest(c echo.Context) error {
	id, err := requestParam(c)
	if err != nil {
		return err
	}
	ans, err := a.rt.WithdrawRequest(c.Request().Context(), actorOf(c), id)
	a.audit(c, AuditRequestWithdraw, id, outcomeOf(err), "")
	if err != nil {
		return fromRuntime(err)
	}
	a.log.Info("api request withdrawn", "request_id", requestID(c), "service_account", actorOf(c).Name, "run", id)
	return c.JSON(http.StatusOK, ans)
}

// requestParam is the route's request id: a run's uuid, else 404 as for a request one may not see.
func requestParam(c echo.Context) (string, error) {
	id := c.Param("id")
	if !isUUID(id) {
		return "", fromRuntime(&runtime.Error{Code: runtime.CodeRunNotFound, Message: "not a request id"})
	}
	return id, nil
}

// answerError is the error of a read or hold of a request's answer as the API answers it.
func answerError(err error) error {
	var p *problem
	switch {
	case errors.As(err, &p):
		return p
	case errors.Is(err, waiters.ErrFull):
		return holdError(err)
	}
	return fromRuntime(err)
}
