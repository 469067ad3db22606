package handlers

import (
	"context"
	"net/http"
	"time"

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
	if h.presence != nil && actor.UserUID > 0 {
		box.PresenceURL = views.PresencePath(run.UUID)
		box.Others = h.others(ctx, run, actor)
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

// presenceJSON is the answer to a run page's heartbeat: the usernames of the others who have
// the page open, and the sentence the page shows.
type presenceJSON struct {
	Others []string `json:"others"`
	Text   string   `json:"text"`
}

// runPresence is POST /runs/:uuid/presence, a waiting run page's heartbeat (static/app.js,
// every views.PresenceBeat while the tab is visible): it marks the viewer as having the page
// open and answers who else has. A run the viewer may not read is 404, as its page.
func (h *Handlers) runPresence(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	ctx, actor := c.Request().Context(), h.actor(c)
	view, err := h.rt.Get(ctx, actor, uuid)
	if err != nil {
		return err
	}
	var others []string
	if h.presence != nil && actor.UserUID > 0 && view.Run.Status.Waiting() {
		others = h.others(ctx, view.Run, actor)
	}
	if others == nil {
		others = []string{}
	}
	return c.JSON(http.StatusOK, presenceJSON{Others: others, Text: views.PresenceText(others)})
}

// others marks actor as having run's page open now and returns the usernames of the others
// seen on it within views.PresenceWindow; best effort: a store failure is logged and shows
// nobody.
func (h *Handlers) others(ctx context.Context, run runtime.Run, actor runtime.Actor) []string {
	now := h.now()
	since := now.Unix() - int64(views.PresenceWindow/time.Second)
	uids, err := h.presence.Seen(ctx, run.UID, actor.UserUID, now.Unix(), since)
	if err != nil {
		h.log.WarnContext(ctx, "presence not recorded", "run", run.UUID, "error", err)
		return nil
	}
	names := h.names(ctx, uids...)
	out := make([]string, len(uids))
	for i, uid := range uids {
		out[i] = names.of(uid)
	}
	return out
}
