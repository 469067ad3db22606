package handlers

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/views"
)

// actionInputSubmit is the audit action of an input submission.
const actionInputSubmit = "input_submit"

// maxInputValues bounds how many values one input form may post (a schema has at most 500
// fields; multi-enum options add a few more). Larger forms are refused before any work.
const maxInputValues = 2000

// Messages of the input submission (its refusals' are the refusal table's Input column).
const (
	msgInputSubmitted  = "Input submitted; the run continues."
	msgInputDidntMatch = "The submitted input did not match the required schema."
	msgElicitDeclined  = "You declined the server's request for input; the run continues."
	msgElicitCancelled = "You cancelled the server's request for input; the run continues."
)

// runInputSubmit handles POST /runs/:uuid/input: it reads the form (bounded) and hands it to
// the runtime, which coerces and validates it against the schema the run waits with. An
// invalid submission re-renders the form with 422, per-field errors and every value as typed;
// success and a replay (same idempotency key) redirect (303) to the run page; a submission
// after the run's wait expired is 409 with the run page saying so and what was typed kept on
// it (lateDecision); any other
// refusal is answered from the refusal table's Input column (a flash on the run page for one
// that leaves the run unchanged: stale form, already handled, not permitted). The runtime
// counts every outcome in runsdesk_decisions_total{kind="input"} and audits it from the note
// given. A press of a list's "Add another" or "Remove" button (views.FormFieldRows) is not a
// submission: see editInputRows.
func (h *Handlers) runInputSubmit(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	form, err := postedForm(c)
	if err != nil {
		return err
	}
	sub := runtime.InputSubmission{Form: form, TurnDigest: form.Get(views.FormFieldDigest), IdempotencyKey: form.Get(views.FormFieldIdempotencyKey),
		PinDigest: form.Get(views.FieldPinDigest), Audit: &runtime.AuditNote{Action: actionInputSubmit, IP: c.RealIP(), Outcome: outcomeSuccess}}
	if action := form.Get(views.FormFieldRows); action != "" {
		return h.editInputRows(c, uuid, sub, action)
	}
	if answer := form.Get(views.FormFieldElicitation); answer != "" {
		return h.answerElicitation(c, uuid, sub, answer)
	}
	out, err := h.rt.SubmitInput(c.Request().Context(), h.actor(c), uuid, sub)
	if re, _ := refusal.OfError(err); re != nil && re.Code == runtime.CodeInvalidInputSubmission && re.View != nil {
		return h.rejectInput(c, sub, re)
	}
	if re, _ := refusal.OfError(err); tooLate(re) {
		return h.lateDecision(c, re, typedValues(form), form)
	}
	if err != nil {
		return h.refused(c, uuid, refusal.Input, err)
	}
	if out.Request {
		h.flash(c, flashRequestAnswered)
	} else {
		h.flash(c, flashInputSubmitted)
	}
	return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
}

// answerElicitation answers the Decline or Cancel button of a remote server's request for
// input: the runtime tells the server, through the decision pipeline, and the run continues;
// a refusal is answered as a submission's is. Audited like a submission.
func (h *Handlers) answerElicitation(c echo.Context, uuid string, sub runtime.InputSubmission, answer string) error {
	d := runtime.ElicitationDecision{Action: answer, TurnDigest: sub.TurnDigest, IdempotencyKey: sub.IdempotencyKey, Audit: sub.Audit}
	_, err := h.rt.AnswerElicitation(c.Request().Context(), h.actor(c), uuid, d)
	if err != nil {
		return h.refused(c, uuid, refusal.Input, err)
	}
	if answer == "cancel" {
		h.flash(c, flashElicitCancelled)
	} else {
		h.flash(c, flashElicitDeclined)
	}
	return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
}

// rejectInput answers 422 with the run page as the runtime checked the submission (re.View:
// the run, its pause and compiled form, read and compiled once), its input form in the error
// state: the summary, each field's message and every value as posted. The posted idempotency
// key is kept, so fixing and resubmitting after a lost response still replays. With
// JavaScript the page then shows the run page's address and saves the values as the person's
// draft (ReplaceURL), so a reload asks to post nothing and restores them.
func (h *Handlers) rejectInput(c echo.Context, sub runtime.InputSubmission, re *runtime.Error) error {
	return h.renderRun(c, http.StatusUnprocessableEntity, *re.View, func(props *views.InputFormProps) {
		showPosted(props, sub, sub.Form)
		props.ReplaceURL = views.RunPath(re.RunUUID)
		props.Errors = map[string]string{}
		for _, fe := range re.Fields {
			if _, dup := props.Errors[fe.Pointer]; !dup {
				props.Errors[fe.Pointer] = fe.Message
			}
		}
		if len(props.Errors) == 0 {
			props.FormError = msgInputDidntMatch
		}
	})
}

// editInputRows answers a press of a list's "Add another" or "Remove" button: 200 with the
// form as posted plus or minus that row, without errors and without deciding anything (no
// claim, no audit). An action the schema cannot apply is 400; a run that no longer waits
// with this form gets the stale form's flash.
func (h *Handlers) editInputRows(c echo.Context, uuid string, sub runtime.InputSubmission, action string) error {
	view, err := h.awaitedForm(c, uuid, sub)
	if err != nil {
		return h.refused(c, uuid, refusal.Input, err)
	}
	if view.Pause.Form == nil {
		return h.refused(c, uuid, refusal.Input, &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: uuid,
			Message: "input schema not renderable", Err: runtime.ErrNoInputForm})
	}
	values, ok := view.Pause.Form.EditRows(sub.Form, action)
	if !ok {
		return publicError(http.StatusBadRequest, "bad_rows_action", refusal.FormUnreadable)
	}
	return h.renderRun(c, http.StatusOK, view, func(props *views.InputFormProps) { showPosted(props, sub, values) })
}

// awaitedForm returns the run uuid while it still waits for input with the form sub was
// made for; otherwise its refusal (the run's error, or a stale turn).
func (h *Handlers) awaitedForm(c echo.Context, uuid string, sub runtime.InputSubmission) (runtime.RunView, error) {
	view, err := h.rt.Get(c.Request().Context(), h.actor(c), uuid)
	if err != nil {
		return view, err
	}
	if view.Pause == nil || view.Run.Status != runtime.StatusWaitingInput || !schema.DigestEqual(sub.TurnDigest, view.Pause.Digest) {
		return view, &runtime.Error{Code: runtime.CodeStaleInputTurn, RunUUID: uuid, Message: "the form is not the one the run waits for"}
	}
	return view, nil
}

// showPosted fills the form's props with values instead of any draft, keeping sub's
// idempotency key so that a later submit after a lost response still replays.
func showPosted(props *views.InputFormProps, sub runtime.InputSubmission, values url.Values) {
	props.Values, props.Draft.Saved, props.Draft.Unreadable = values, time.Time{}, false
	if validKey(sub.IdempotencyKey) {
		props.IdempotencyKey = sub.IdempotencyKey
	}
}

// inputFormProps returns the props of view's input form as a fresh page shows it: the fields
// of its schema (none when it cannot be rendered, so the form says the state is unreadable,
// or when it is a remote server's confirmation), its digest, a fresh idempotency key, the
// session's CSRF token, and ReadOnly for people the engine's gate refuses (Pause.Gate). view
// must be waiting for input.
func (h *Handlers) inputFormProps(c echo.Context, view runtime.RunView) views.InputFormProps {
	p := views.InputFormProps{
		RunUUID: view.Run.UUID, Action: views.RunPath(view.Run.UUID) + "/input", CSRF: h.csrfToken(c),
		IdempotencyKey: newToken(), ReadOnly: true, Now: h.now(),
	}
	if view.Pause == nil {
		return p
	}
	p.ReadOnly = view.Pause.Gate.Refusal() != nil
	p.Digest, p.PinDigest = view.Pause.Digest, view.Pause.PinDigest
	if el := view.Pause.Elicitation; el != nil {
		p.Elicitation = &views.ElicitationProps{Message: el.Message, ExpiresAt: el.ExpiresAt, Confirmation: el.Confirmation}
	}
	if view.Pause.Form != nil {
		p.Fields = view.Pause.Form.Fields()
	}
	return p
}

// postedForm parses the urlencoded body (the global body limit applies) and refuses more than
// maxInputValues values. Query parameters are not part of it.
func postedForm(c echo.Context) (url.Values, error) {
	r := c.Request()
	if err := r.ParseForm(); err != nil {
		return nil, publicError(http.StatusBadRequest, "bad_form", "The form could not be read.")
	}
	n := 0
	for _, vs := range r.PostForm {
		n += len(vs)
	}
	if n > maxInputValues {
		return nil, publicError(http.StatusRequestEntityTooLarge, "too_many_fields", "The form has too many fields.")
	}
	return r.PostForm, nil
}

func validKey(key string) bool { return key != "" && len(key) <= runtime.MaxIdempotencyKey }
