package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

type createRequest struct {
	Configuration string `json:"configuration"`
	Prompt        string `json:"prompt"`
}

// createRun is POST /runs {configuration, prompt}: it queues a run owned by the service
// account and answers 201 with the run and its Location. A worker executes it.
func (a *API) createRun(c echo.Context) error {
	var req createRequest
	if err := a.decodeBody(c, &req, false); err != nil {
		return err
	}
	if req.Configuration == "" {
		return invalid(`field "configuration" is required`)
	}
	if req.Prompt == "" {
		return invalid(`field "prompt" is required`)
	}
	run, err := a.rt.Start(c.Request().Context(), actorOf(c), req.Configuration, req.Prompt)
	if err != nil {
		a.audit(c, AuditRunStart, "", outcomeOf(err), "")
		return fromRuntime(err)
	}
	a.audit(c, AuditRunStart, run.UUID, "success", "")
	a.log.Info("api run started", "request_id", requestID(c), "service_account", actorOf(c).Name, "run", run.UUID)
	c.Response().Header().Set(echo.HeaderLocation, a.location(run.UUID))
	return c.JSON(http.StatusCreated, toRunJSON(runtime.RunView{Run: run}))
}
