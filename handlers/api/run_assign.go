package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// assignmentRequest is the body of POST /runs/:uuid/assignment: assignee, a username, or null
// to release the run (the field is required); force is refused for tokens.
type assignmentRequest struct {
	Assignee json.RawMessage `json:"assignee"`
	Force    bool            `json:"force"`
}

// assignRun is POST /runs/:uuid/assignment {assignee: "<username>" | null, force?} (scope
// approve): it assigns the waiting run to that person, or releases it, and answers 200 with
// the run. A run someone else holds is 409 already_assigned (naming them); force is 403 for a
// token; a person who does not exist, is disabled or is support is 400.
func (a *API) assignRun(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	var req assignmentRequest
	if err := a.decodeBody(c, &req, false); err != nil {
		return err
	}
	var to *string
	if len(req.Assignee) == 0 || json.Unmarshal(req.Assignee, &to) != nil {
		return invalid(`field "assignee" is required: a username, or null to release the run`)
	}
	as := runtime.Assignment{Force: req.Force, IP: c.RealIP()}
	if to != nil {
		if *to == "" {
			return invalid(`field "assignee" must be a username, or null to release the run`)
		}
		as.To = *to
	}
	run, err := a.rt.Assign(c.Request().Context(), actorOf(c), uuid, as)
	if err != nil {
		a.audit(c, AuditAssignment, uuid, outcomeOf(err), "")
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, toRunJSON(runtime.RunView{Run: run}))
}
