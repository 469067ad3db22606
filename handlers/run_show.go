package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// runShow is GET /runs/:uuid, the run page: the answer once the run finished, summary, the
// pending decision or input form while the run waits (forms only for people who may use them), the cancel link when the viewer may
// cancel, and the timeline of its steps and governance rows. A run that does not exist or that the viewer may not read is 404.
// While the run is queued or running the page is marked live (static/app.js reloads it).
func (h *Handlers) runShow(c echo.Context) error {
	uuid, err := runParam(c)
	if err != nil {
		return err
	}
	view, err := h.rt.Get(c.Request().Context(), h.actor(c), uuid)
	if err != nil {
		return err
	}
	return h.renderRun(c, http.StatusOK, view, nil)
}

// renderRun answers status with view's run page as runShow describes it. fill, when not nil,
// completes the pending card's input form (a rejected submission's values and messages).
func (h *Handlers) renderRun(c echo.Context, status int, view runtime.RunView, fill func(*views.InputFormProps)) error {
	return h.renderRunPage(c, status, view, runPageState{fill: fill})
}

// runPageState is what a run page shows beside the run after a refused post: fill completes
// the pending card's input form, late is the refusal of a decision that came too late (shown at
// the top), comment the comment form with the text as typed and why it was refused.
type runPageState struct {
	fill    func(*views.InputFormProps)
	late    *views.LateDecision
	comment *views.CommentBox
}

// renderRunPage is renderRun with the state of a refused post (runPageState).
func (h *Handlers) renderRunPage(c echo.Context, status int, view runtime.RunView, st runPageState) error {
	ctx, actor, run := c.Request().Context(), h.actor(c), view.Run
	tl, err := h.rt.Timeline(ctx, actor, run)
	if err != nil {
		return err
	}
	evs, gov := tl.Events, tl.Governance
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	names := h.names(ctx, people(run, evs, gov)...)
	rv := views.RunView{
		Summary: runSummary(run, cfgs, names), Timeline: timeline(tl, names), Now: h.now(),
		Live: run.Status == runtime.StatusQueued || run.Status == runtime.StatusRunning, Late: st.late,
		Calls: runCalls(tl.Calls, tl.Edits, names), Transcript: cfgs.privacy(run).Keeps(),
	}
	if rv.Answer, err = h.answer(ctx, actor, run); err != nil {
		return err
	}
	if run.Status.Waiting() {
		if rv.Assignment, err = h.assignmentBox(ctx, actor, run, cfgs); err != nil {
			return err
		}
		rv.Pending = h.pendingCard(c, view, cfgs)
		if st.fill != nil && rv.Pending.Form != nil {
			st.fill(rv.Pending.Form)
		}
		rv.Comments = &views.CommentBox{URL: views.CommentsPath(run.UUID), IdempotencyKey: newToken()}
	}
	if st.comment != nil {
		rv.Comments = st.comment
		rv.Comments.Closed = !run.Status.Waiting()
	}
	if rv.Notifications, err = h.runNotifications(ctx, run); err != nil {
		return err
	}
	if !run.Status.Terminal() && runtime.MayAct(actor, runtime.ActionCancel, run) {
		rv.CancelURL = views.RunPath(run.UUID) + "/cancel"
	}
	return h.render(c, status, views.RunPage(h.page(c, "Run "+views.ShortID(run.UUID), views.NavNone), rv))
}

// answer is the run page's answer section: nil while the run is not finished or when it keeps
// no output; an output sealed with a missing key is refused in the section, not on the page.
func (h *Handlers) answer(ctx context.Context, actor runtime.Actor, run runtime.Run) (*views.AnswerView, error) {
	a, err := h.rt.Answer(ctx, actor, run)
	if id, ok := runtime.MissingSealingKey(err); ok {
		h.log.Warn("run answer unreadable", "run", run.UUID, "err", err)
		return &views.AnswerView{Withheld: views.WithheldSealed, SealedWith: id}, nil
	}
	switch {
	case err != nil:
		return nil, err
	case a.Output != nil:
		return &views.AnswerView{Text: a.Output.Text, Finished: unixTime(a.Output.Finished)}, nil
	case a.Withheld != "":
		return &views.AnswerView{Withheld: a.Withheld}, nil
	}
	return nil, nil
}

func runSummary(run runtime.Run, cfgs configIndex, names nameBook) views.RunSummary {
	return views.RunSummary{
		UUID: run.UUID, Status: string(run.Status), Reason: run.TerminationReason, Configuration: cfgs.label(run),
		Owner: names.actor(run.BeUser, run.StartedByService), Created: unixTime(run.Crdate), Paused: unixTime(run.SuspendedAt),
		Finished: unixTime(run.FinishedAt), Iterations: run.Iterations, Truncated: run.Truncated,
		PromptTokens: run.PromptTokens, CompletionTokens: run.CompletionTokens, TotalTokens: run.TotalTokens,
		Cost: run.EstimatedCost, ErrorClass: run.ErrorClass, RetryAt: retryTime(run),
		Expiry: run.Expiry, Retention: cfgs.retention(run),
	}
}

// retryTime is when a queued run is retried after a provider failure; zero otherwise.
func retryTime(run runtime.Run) time.Time {
	if run.Status != runtime.StatusQueued {
		return time.Time{}
	}
	return unixTime(run.RetryAt)
}

// unixTime is t as a time; 0 (unset) is the zero time.
func unixTime(t int64) time.Time {
	if t <= 0 {
		return time.Time{}
	}
	return time.Unix(t, 0)
}

// runNotificationsShown bounds the notifications a run page lists.
const runNotificationsShown = 50

// runNotifications are the rows of the run page's notifications section (none without a
// Notifications source).
func (h *Handlers) runNotifications(ctx context.Context, run runtime.Run) ([]views.NotificationRow, error) {
	if h.notices == nil {
		return nil, nil
	}
	ns, err := h.notices.RunNotifications(ctx, run.UID, runNotificationsShown)
	if err != nil {
		return nil, err
	}
	rows := make([]views.NotificationRow, 0, len(ns))
	for _, n := range ns {
		at := n.DueAt
		switch n.State {
		case runtime.NotificationSent:
			at = n.SentAt
		case runtime.NotificationFailed:
			at = 0
		}
		rows = append(rows, views.NotificationRow{Event: string(n.Event), Channel: n.Rule.Channel, State: n.State,
			Attempts: n.Attempts, At: unixTime(at), LastError: n.LastError})
	}
	return rows, nil
}

// runCalls describes the run's calls for its page, each with the model's (proposed), the
// approved and the effective arguments (what the tool was sent) as indented JSON: every
// executed call, in the order it was answered, then every edited call that has not run. An
// edit belongs to the first approved call with its id executed since the decision (ids
// repeat across turns); such a call also shows who edited it and the change table.
func runCalls(calls []runtime.ExecutedCall, edits []runtime.CallEdit, names nameBook) []views.CallView {
	out := make([]views.CallView, 0, len(calls)+len(edits))
	for _, c := range calls {
		out = append(out, views.CallView{CallID: c.CallID, Tool: c.Tool, Executed: true,
			Proposed: prettyJSON(c.Proposed), Approved: prettyJSON(c.Approved), Effective: prettyJSON(c.Effective)})
	}
	edited := make([]bool, len(calls))
	for _, e := range edits {
		i := editedCall(calls, edited, e)
		if i < 0 {
			out = append(out, views.CallView{CallID: e.CallID, Tool: e.Tool, Proposed: prettyJSON(e.Proposed), Approved: prettyJSON(e.Approved)})
			i = len(out) - 1
		}
		out[i].EditedBy = names.of(e.DecidedBy)
		out[i].Rows = changeRows(decodeJSON(e.Proposed), decodeJSON(e.Approved), e.Patch)
	}
	return out
}

// editedCall is the index of the call of calls edit e belongs to (see runCalls), marked in
// edited; -1 when it has not run.
func editedCall(calls []runtime.ExecutedCall, edited []bool, e runtime.CallEdit) int {
	for i, c := range calls {
		if !edited[i] && c.CallID == e.CallID && c.Approved != nil && c.Crdate >= e.Decided {
			edited[i] = true
			return i
		}
	}
	return -1
}

// decodeJSON decodes raw keeping numbers as written (nil when it is not JSON).
func decodeJSON(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}
