package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

// routeRunDraft is the route of an input form's "Save draft" button and of its autosave.
const routeRunDraft = "/runs/:uuid/draft"

// autosaveHeader marks a draft static/app.js saves while the person types: it is answered
// with a bare status (204 when saved), never a redirect or a flash.
const autosaveHeader = "X-Runsdesk-Autosave"

// msgDraftSaved is the flash of a draft saved with the button.
const msgDraftSaved = "Draft saved. It is restored when you open this form again, on any device, until the run continues."

// draftControls are the input form's fields that are not the person's values.
var draftControls = []string{"_csrf", views.FormFieldDigest, views.FormFieldIdempotencyKey, views.FormFieldRows}

// runDraftSave is POST /runs/:uuid/draft: it stores the posted input form, exactly as typed
// and unvalidated, as the asking person's draft of the run's pause (one per person and run,
// replacing the last), then redirects (303) to the run page with a flash, or answers 204 to an
// autosave. Only someone who may submit to the form the run waits for now may save a draft
// of it; a form that is not that one is refused as stale (the refusal table's Input column).
// Nothing is validated, recorded as an event or audited, and the values are never logged.
func (h *Handlers) runDraftSave(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	form, err := postedForm(c)
	if err != nil {
		return err
	}
	autosave := c.Request().Header.Get(autosaveHeader) != ""
	view, err := h.awaitedForm(c, uuid, runtime.InputSubmission{TurnDigest: form.Get(views.FormFieldDigest)})
	if err != nil {
		return h.draftRefused(c, uuid, autosave, err)
	}
	if e := view.Pause.Gate.Refusal(); e != nil {
		return h.draftRefused(c, uuid, autosave, e)
	}
	actor := h.actor(c)
	err = h.drafts.SaveDraft(c.Request().Context(), runtime.Draft{Run: view.Run.UID, User: actor.UserUID, Digest: view.Pause.Digest,
		Values: draftValues(form), SuspendedAt: view.Run.SuspendedAt, UpdatedAt: h.now().Unix()})
	if errors.Is(err, runtime.ErrGuard) {
		return h.draftRefused(c, uuid, autosave, &runtime.Error{Code: runtime.CodeStaleInputTurn, RunUUID: uuid, Message: "the pause ended before the draft was saved"})
	}
	if err != nil {
		return err
	}
	if autosave {
		return c.NoContent(http.StatusNoContent)
	}
	h.flash(c, flashDraftSaved)
	return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
}

// draftRefused answers a refused draft from the refusal table's Input column: an autosave
// gets the row's bare status, the button its flash or error page.
func (h *Handlers) draftRefused(c echo.Context, uuid string, autosave bool, err error) error {
	if autosave {
		_, row := refusal.OfError(err)
		return c.NoContent(row.Status)
	}
	return h.refused(c, uuid, refusal.Input, err)
}

// draftValues are the person's values of a posted input form, without its control fields.
func draftValues(form url.Values) url.Values {
	out := make(url.Values, len(form))
	for name, vs := range form {
		out[name] = vs
	}
	for _, name := range draftControls {
		delete(out, name)
	}
	return out
}

// restoreDraft fills a fresh input form with the viewer's draft of view's pause, if they
// saved one: its values as typed, and when it was saved. A draft that cannot be read is
// not shown (the form says so and starts from its defaults).
func (h *Handlers) restoreDraft(ctx context.Context, actor runtime.Actor, view runtime.RunView, form *views.InputFormProps) {
	d, err := h.drafts.LoadDraft(ctx, view.Run.UID, actor.UserUID, view.Pause.Digest)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return
	case err != nil:
		h.log.WarnContext(ctx, "input draft not restored", "run", view.Run.UUID, "err", err)
		form.Draft.Unreadable = true
		form.Draft.SealedWith, _ = runtime.MissingSealingKey(err)
		return
	}
	form.Values, form.Draft.Saved = d.Values, time.Unix(d.UpdatedAt, 0)
}
