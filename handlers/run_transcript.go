package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/runtime/retention"
	"runsdesk/views"
)

// runTranscript is GET /runs/:uuid/transcript, the run's Transcript tab: each step with what
// it said as the run's privacy mode kept it and the viewer may read it (support staff see
// content kept in full only under `support_sees: full`). A run the viewer may not read is
// 404, as on the run page.
func (h *Handlers) runTranscript(c echo.Context) error {
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
	t, err := h.rt.Transcript(ctx, actor, run)
	if err != nil {
		return err
	}
	cfgs, err := h.configurations(ctx)
	if err != nil {
		return err
	}
	evs := make([]runtime.Event, len(t.Entries))
	for i, e := range t.Entries {
		evs[i] = e.Event
	}
	names := h.names(ctx, people(run, evs, nil)...)
	tv := views.TranscriptView{
		Summary: runSummary(run, cfgs, names), Privacy: string(t.Privacy), Withheld: t.Withheld, Now: h.now(),
		Removal: cfgs.retention(run).RemovedAt(retention.Transcripts, unixTime(run.FinishedAt)),
	}
	if !t.Privacy.Keeps() {
		tv.Removal = time.Time{}
	}
	for _, e := range t.Entries {
		tv.Steps = append(tv.Steps, transcriptStep(e, names))
	}
	return h.render(c, http.StatusOK, views.TranscriptPage(h.page(c, "Transcript of run "+views.ShortID(run.UUID), views.NavNone), tv))
}

// transcriptStep is e as the Transcript tab shows it: the timeline's words for its event and
// what it said.
func transcriptStep(e runtime.TranscriptEntry, names nameBook) views.TranscriptStep {
	s := views.TranscriptStep{Entry: stepEntry(e.Event, names), Privacy: string(e.Privacy), Withheld: e.Withheld, SealedWith: e.SealedWith}
	if c := e.Content; c != nil {
		s.Kept = true
		s.System, s.Prompt, s.Text, s.Arguments, s.Result, s.Values, s.Note = c.System, c.Prompt, c.Text, c.Arguments, c.Result, c.Values, c.Note
		for _, tc := range c.ToolCalls {
			s.Calls = append(s.Calls, views.TranscriptCall{ID: tc.ID, Tool: tc.Name, Arguments: tc.Arguments})
		}
	}
	return s
}
