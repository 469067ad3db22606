package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

// runAssign is POST /runs/:uuid/assignment (assignee: a username, "" to release; force=1 to
// change a run someone else holds, offered to admins only): it changes who holds the waiting
// run and redirects (303) to the run page with a flash; a refusal is a flash of the refusal
// table's Assign column (taken first by someone else, not permitted, no longer waiting).
func (h *Handlers) runAssign(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	a := runtime.Assignment{To: c.FormValue("assignee"), Force: c.FormValue("force") == "1", IP: c.RealIP()}
	if _, err := h.rt.Assign(c.Request().Context(), h.actor(c), uuid, a); err != nil {
		return h.refused(c, uuid, refusal.Assign, err)
	}
	h.flash(c, flashAssigned)
	return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
}

// assignmentBox is the run page's assignment box of waiting run for actor: the assignee, and
// the forms actor may use (none for support); nil never, so everyone sees who holds it.
func (h *Handlers) assignmentBox(ctx context.Context, actor runtime.Actor, run runtime.Run, cfgs configIndex) (*views.AssignmentBox, error) {
	box := &views.AssignmentBox{URL: views.AssignmentPath(run.UUID), Assignee: run.AssigneeName, Since: unixTime(run.AssignedAt), Me: actor.Name}
	if run.Assignee == 0 {
		box.Assignee = ""
	}
	decides := runtime.MayAct(actor, runtime.ActionApprove, run) || runtime.MayAct(actor, runtime.ActionSubmit, run)
	if !decides || actor.UserUID <= 0 {
		return box, nil
	}
	admin := actor.Role == runtime.RoleAdmin
	mine, others := run.Assignee == actor.UserUID, run.Assignee != 0 && run.Assignee != actor.UserUID
	box.Force = others && admin
	box.CanTake = !mine && (!others || admin)
	box.CanRelease = mine || box.Force
	if admin || cfgs.byUID[run.ConfigurationUID].Assignment.ReviewersMayAssign && !others {
		people, err := h.people.Deciders(ctx)
		if err != nil {
			return nil, err
		}
		box.People = people
	}
	return box, nil
}
