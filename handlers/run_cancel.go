package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

// actionCancel is the audit action of a cancellation.
const actionCancel = "run_cancel"

// runCancelConfirm is GET /runs/:uuid/cancel: "Cancel this run?" with a POST form, so the
// confirmation works without JavaScript. A run the viewer may not read is 404; one they may
// read but not cancel is 403; a finished run redirects to its page with a note (the refusal
// table's Cancel column).
func (h *Handlers) runCancelConfirm(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	ctx, actor := c.Request().Context(), h.actor(c)
	view, err := h.rt.Get(ctx, actor, uuid)
	if err != nil {
		return err
	}
	run := view.Run
	if !runtime.MayAct(actor, runtime.ActionCancel, run) {
		return h.refused(c, uuid, refusal.Cancel, runtime.ErrRunAccessDenied)
	}
	if run.Status.Terminal() {
		return h.refused(c, uuid, refusal.Cancel, runtime.ErrRunNotCancellable)
	}
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	cc := views.CancelConfirm{RunUUID: uuid, Configuration: cfgs.label(run), Status: string(run.Status), Waiting: run.Status.Waiting()}
	return h.render(c, http.StatusOK, views.CancelPage(h.page(c, "Cancel run", views.NavNone), cc))
}

// runCancel is POST /runs/:uuid/cancel: it cancels a queued, running or waiting run and
// redirects (303) to the run page with a flash. A refusal is answered from the refusal table's
// Cancel column: a finished run is a note, not an error; a run the viewer may read but not
// cancel is 403; unknown runs are 404. Every attempt is audited.
func (h *Handlers) runCancel(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	_, err = h.rt.Cancel(c.Request().Context(), h.actor(c), uuid)
	if err == nil {
		h.auditRun(c, actionCancel, uuid, outcomeSuccess, "")
		h.flash(c, flashCancelled)
		return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
	}
	if re, _ := refusal.OfError(err); re != nil {
		h.auditRun(c, actionCancel, uuid, string(re.Code), "")
	}
	return h.refused(c, uuid, refusal.Cancel, err)
}
