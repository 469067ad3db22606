package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// cancelRun is POST /runs/:uuid/cancel (no body, or {}): it cancels a queued, running or
// waiting run and answers 200 with the run; a finished run is 409 run_not_cancellable.
func (a *API) cancelRun(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	var req struct{}
	if err := a.decodeBody(c, &req, true); err != nil {
		return err
	}
	run, err := a.rt.Cancel(c.Request().Context(), actorOf(c), uuid)
	a.audit(c, AuditCancel, uuid, outcomeOf(err), "")
	if err != nil {
		return fromRuntime(err)
	}
	a.log.Info("api run cancelled", "request_id", requestID(c), "service_account", actorOf(c).Name, "run", run.UUID)
	return c.JSON(http.StatusOK, toRunJSON(runtime.RunView{Run: run}))
}
