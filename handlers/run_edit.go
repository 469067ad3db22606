package handlers

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/views"
)

// runEditForm is GET /runs/:uuid/edit?call=ID, step one of "Edit and approve": the form made
// from the call's tool parameters (the input form engine), prefilled with the model's
// arguments. A refusal (not editable, admin-only, four-eyes, not waiting, not permitted) is
// answered from the refusal table's Approval column, as an approval would be.
func (h *Handlers) runEditForm(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	callID := c.QueryParam("call")
	ev, err := h.rt.EditCall(c.Request().Context(), h.actor(c), uuid, callID, "", nil)
	if err != nil {
		return h.refused(c, uuid, refusal.Approval, err)
	}
	return h.renderEditForm(c, http.StatusOK, ev, ev.Form.FormValues(ev.Proposed), nil)
}

// runEditReview is POST /runs/:uuid/edit?call=ID: the posted form is coerced, overlaid onto
// the model's arguments and validated against the tool's parameters (runtime EditCall). An
// invalid form is shown again with 422, per-field errors and every value as typed; a valid
// one gets the confirmation page (200): the before → after table, the patch, and the approval
// form bound to the turn and the patch (patch digest). A press of "Add another"/"Remove"
// or of the confirmation's "Change the arguments again" shows the form as posted (200),
// deciding nothing. Nothing here claims or records anything.
func (h *Handlers) runEditReview(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	form, err := postedForm(c)
	if err != nil {
		return err
	}
	ctx, actor, callID := c.Request().Context(), h.actor(c), c.QueryParam("call")
	if action := form.Get(views.FormFieldRows); action != "" || form.Get(views.FieldEditBack) != "" {
		ev, err := h.rt.EditCall(ctx, actor, uuid, callID, "", nil)
		if err != nil {
			return h.refused(c, uuid, refusal.Approval, err)
		}
		values := form
		if action != "" {
			var ok bool
			if values, ok = ev.Form.EditRows(form, action); !ok {
				return publicError(http.StatusBadRequest, "bad_rows_action", refusal.FormUnreadable)
			}
		}
		return h.renderEditForm(c, http.StatusOK, ev, values, nil)
	}
	ev, err := h.rt.EditCall(ctx, actor, uuid, callID, form.Get(views.FormFieldDigest), form)
	if re, _ := refusal.OfError(err); re != nil && re.Code == runtime.CodeInvalidEdit && ev.Form != nil {
		return h.renderEditForm(c, http.StatusUnprocessableEntity, ev, form, re)
	}
	if err != nil {
		return h.refused(c, uuid, refusal.Approval, err)
	}
	return h.renderEditReview(c, ev, form)
}

// renderEditForm answers status with ev's edit form showing values; re, when set, is the
// refusal whose per-field errors it shows.
func (h *Handlers) renderEditForm(c echo.Context, status int, ev runtime.EditView, values url.Values, re *runtime.Error) error {
	uuid := ev.Run.UUID
	form := views.InputFormProps{
		RunUUID: uuid, Action: views.EditCallPath(uuid, ev.Call.ID), CSRF: h.csrfToken(c), Fields: ev.Form.Fields(),
		Values: values, Digest: ev.Pause.Digest, IdempotencyKey: newToken(), SubmitLabel: "Review the changes",
		CancelHref: views.RunPath(uuid),
	}
	if re != nil {
		form.Errors = map[string]string{}
		for _, fe := range re.Fields {
			if _, dup := form.Errors[fe.Pointer]; !dup {
				form.Errors[fe.Pointer] = fe.Message
			}
		}
	}
	page := views.EditCallPage{RunUUID: uuid, CallID: ev.Call.ID, Tool: ev.Call.Function.Name,
		Words: views.ModelWords{Text: ev.Pause.ModelText}, Proposed: prettyJSON(mustJSON(ev.Proposed)), Form: form}
	if e := ev.Pause.Edit; e != nil && ev.Call.ModelArguments != nil {
		page.EditedBy = e.ByName
	}
	return h.render(c, status, views.EditCallView(h.page(c, "Edit and approve", views.NavNone), page))
}

// renderEditReview answers 200 with the confirmation page of ev's valid edit; posted is the
// form as typed, carried by the page's "Change the arguments again" form.
func (h *Handlers) renderEditReview(c echo.Context, ev runtime.EditView, posted url.Values) error {
	uuid := ev.Run.UUID
	edits := mustJSON(map[string]jsonpatch.Patch{ev.Call.ID: ev.Patch})
	page := views.EditReviewPage{
		RunUUID: uuid, CallID: ev.Call.ID, Tool: ev.Call.Function.Name,
		Rows: changeRows(ev.Proposed, ev.Edited, ev.Patch), Patch: prettyJSON(mustJSON(ev.Patch)),
		Edits: string(edits), PatchDigest: ev.PatchDigest,
		Approval: views.ApprovalForm{Action: views.RunPath(uuid) + "/approval", CSRF: h.csrfToken(c), Digest: ev.Pause.Digest,
			IdempotencyKey: newToken(), CanApprove: true},
		BackAction: views.EditCallPath(uuid, ev.Call.ID),
	}
	if q := ev.Pause.Quorum; q != nil {
		page.Votes = votesView(*q, ev.Pause.Edit)
		page.Votes.Voids = len(q.Votes)
	}
	for _, name := range slices.Sorted(maps.Keys(posted)) {
		if name == "_csrf" {
			continue
		}
		for _, v := range posted[name] {
			page.BackValues = append(page.BackValues, views.HiddenValue{Name: name, Value: v})
		}
	}
	return h.render(c, http.StatusOK, views.EditReviewView(h.page(c, "Review your changes", views.NavNone), page))
}

// changeRows is the before → after table of patch, which turns before into after: one row
// per changed pointer, its values as compact JSON.
func changeRows(before, after any, patch jsonpatch.Patch) []views.ChangeRow {
	var rows []views.ChangeRow
	for _, ptr := range patch.Paths() {
		b, had := jsonpatch.Lookup(before, ptr)
		a, has := jsonpatch.Lookup(after, ptr)
		row := views.ChangeRow{Path: ptr, Change: "changed"}
		switch {
		case !had:
			row.Change = "added"
		case !has:
			row.Change = "removed"
		}
		if had {
			row.Before = unescapeHTMLEscapes(string(mustJSON(b)))
		}
		if has {
			row.After = unescapeHTMLEscapes(string(mustJSON(a)))
		}
		rows = append(rows, row)
	}
	return rows
}

// postedEdits reads the approval form's edits (views.FieldEdits: call id → RFC 6902 patch as
// JSON) and patch digest; no edits field is no edits. Edits that do not decode are the
// InvalidEdit refusal; edits without the digest the confirmation page carries are stale (a
// web approval with edits is always bound to the patch that was shown).
func postedEdits(c echo.Context, uuid string) (map[string]jsonpatch.Patch, string, error) {
	raw := c.FormValue(views.FieldEdits)
	if raw == "" {
		return nil, "", nil
	}
	var byCall map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &byCall); err != nil || byCall == nil {
		return nil, "", &runtime.Error{Code: runtime.CodeInvalidEdit, RunUUID: uuid, Message: "the posted edits are not a JSON object", Err: err}
	}
	edits, e := runtime.DecodeEdits(uuid, byCall)
	if e != nil {
		return nil, "", e
	}
	digest := c.FormValue(views.FieldPatchDigest)
	if digest == "" {
		return nil, "", &runtime.Error{Code: runtime.CodeStaleApprovalTurn, RunUUID: uuid, Message: "the posted edits carry no patch digest"}
	}
	return edits, digest, nil
}

// mustJSON encodes v, which is JSON-shaped ("null" if it cannot be).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}
