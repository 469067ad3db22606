package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/waiters"
)

// getRun is GET /runs/:uuid: the run, and while it waits its pending turn (calls, input tool
// and schema, turn digest), so a client that lost its place can still decide; once it is
// finished, its output or why it is withheld. With ?wait=30s it is a long-poll (awaitRun).
func (a *API) getRun(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	wait, err := waitParam(c, waiters.MaxHold)
	if err != nil {
		return err
	}
	view, err := a.rt.Get(c.Request().Context(), actorOf(c), uuid)
	if err != nil {
		return fromRuntime(err)
	}
	if wait > 0 {
		if view, err = a.awaitRun(c, view, wait); err != nil {
			return err
		}
	}
	answer, err := a.rt.Answer(c.Request().Context(), actorOf(c), view.Run)
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, toRunDetailJSON(view, answer))
}
