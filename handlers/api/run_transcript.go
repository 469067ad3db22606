package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// transcriptJSON is GET /runs/:uuid/transcript's answer: the run's privacy mode (metadata,
// redacted, full), why no step shows content when none does (withheld: privacy, retention or
// scope), and the run's steps in event order.
type transcriptJSON struct {
	Run      string                `json:"run"`
	Privacy  string                `json:"privacy"`
	Withheld string                `json:"withheld,omitempty"`
	Entries  []transcriptEntryJSON `json:"entries"`
}

// transcriptEntryJSON is one step: its event (as GET /runs/:uuid/events shows it) and the
// content kept with it under privacy (null when none was kept). Withheld is role for content
// the reader's role may not read, sealing_key_missing (with sealed_with, the key's id) for
// content sealed with a key the server lacks.
type transcriptEntryJSON struct {
	eventJSON
	Privacy    string       `json:"privacy,omitempty"`
	Content    *contentJSON `json:"content"`
	Withheld   string       `json:"withheld,omitempty"`
	SealedWith string       `json:"sealed_with,omitempty"`
}

// contentJSON is what a step said: a request's system prompt and prompt; a model turn's text
// and tool calls; a tool call's arguments (as the tool was sent them) and result; a
// decision's values (a JSON object as text), edited arguments and note (the decider's
// reason). Absent fields said nothing.
type contentJSON struct {
	System    string            `json:"system,omitempty"`
	Prompt    string            `json:"prompt,omitempty"`
	Text      string            `json:"text,omitempty"`
	ToolCalls []contentCallJSON `json:"tool_calls,omitempty"`
	Arguments string            `json:"arguments,omitempty"`
	Result    string            `json:"result,omitempty"`
	Values    string            `json:"values,omitempty"`
	Note      string            `json:"note,omitempty"`
}

// contentCallJSON is one tool call a model turn asked for: its id, tool and arguments text.
type contentCallJSON struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
}

// runTranscript is GET /runs/:uuid/transcript (scope read): what the run said, step by step,
// under its privacy mode; content is shown to a token that may read the run's content (the
// runs it started, or any with the content scope), else withheld: scope.
func (a *API) runTranscript(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	ctx, actor := c.Request().Context(), actorOf(c)
	view, err := a.rt.Get(ctx, actor, uuid)
	if err != nil {
		return fromRuntime(err)
	}
	t, err := a.rt.Transcript(ctx, actor, view.Run)
	if err != nil {
		return fromRuntime(err)
	}
	return c.JSON(http.StatusOK, toTranscriptJSON(uuid, t))
}

func toTranscriptJSON(uuid string, t runtime.Transcript) transcriptJSON {
	out := transcriptJSON{Run: uuid, Privacy: string(t.Privacy), Withheld: t.Withheld, Entries: make([]transcriptEntryJSON, len(t.Entries))}
	for i, e := range t.Entries {
		entry := transcriptEntryJSON{eventJSON: toEventJSON(e.Event), Withheld: e.Withheld, SealedWith: e.SealedWith}
		if e.SealedWith != "" {
			entry.Withheld = string(runtime.CodeSealingKeyMissing)
		}
		if e.Content != nil {
			entry.Privacy, entry.Content = string(e.Privacy), toContentJSON(*e.Content)
		}
		out.Entries[i] = entry
	}
	return out
}

func toContentJSON(c runtime.EventContent) *contentJSON {
	out := &contentJSON{System: c.System, Prompt: c.Prompt, Text: c.Text, Arguments: c.Arguments, Result: c.Result, Values: c.Values, Note: c.Note}
	for _, tc := range c.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, contentCallJSON{ID: tc.ID, Tool: tc.Name, Arguments: tc.Arguments})
	}
	return out
}
