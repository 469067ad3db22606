package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// callsJSON is GET /runs/:uuid/calls's answer: the calls the run executed, in the order they
// were answered.
type callsJSON struct {
	Calls []executedCallJSON `json:"calls"`
}

// executedCallJSON is one executed call: its id (the model's tool call id), its tool, and the
// model's (proposed), the approved and the effective arguments (what the tool was sent), each
// a JSON object, or null when there is none (the model's were not an object; no approval
// decided the call).
type executedCallJSON struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Proposed  json.RawMessage `json:"proposed"`
	Approved  json.RawMessage `json:"approved"`
	Effective json.RawMessage `json:"effective"`
}

// runCalls is GET /runs/:uuid/calls: the calls the run executed, each with its three sets of
// arguments kept apart.
func (a *API) runCalls(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	calls, err := a.rt.Calls(c.Request().Context(), actorOf(c), uuid)
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, toCallsJSON(calls))
}

func toCallsJSON(calls []runtime.ExecutedCall) callsJSON {
	out := callsJSON{Calls: make([]executedCallJSON, len(calls))}
	for i, ec := range calls {
		out.Calls[i] = executedCallJSON{ID: ec.CallID, Tool: ec.Tool, Proposed: ec.Proposed, Approved: ec.Approved, Effective: ec.Effective}
	}
	return out
}
