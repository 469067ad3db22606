package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// getRun is GET /runs/:uuid: the run, and while it waits its pending turn (calls, input tool
// and schema, turn digest), so a client that lost its place can still decide.
func (a *API) getRun(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	view, err := a.rt.Get(c.Request().Context(), actorOf(c), uuid)
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, toRunJSON(view))
}
