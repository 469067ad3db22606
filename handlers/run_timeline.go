package handlers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"runsdesk/runtime"
	"runsdesk/views"
)

// eventMeta is the allow-list of event payload keys the timeline may show: who, tool names,
// flags and counts. Arguments, results, prompts and submitted values are never decoded.
type eventMeta struct {
	Approved           *bool    `json:"approved"`
	DecidedBy          *int64   `json:"decidedBy"`
	DecidedByService   string   `json:"decidedByService"`
	SubmittedBy        *int64   `json:"submittedBy"`
	RequestedBy        *int64   `json:"requestedBy"`
	RequestedByService string   `json:"requestedByService"`
	Configuration      string   `json:"configuration"`
	FinishReason       string   `json:"finishReason"`
	PromptTokens       *int64   `json:"promptTokens"`
	CompletionTokens   *int64   `json:"completionTokens"`
	RequestedToolNames []string `json:"requestedToolNames"`
	ToolName           string   `json:"toolName"`
	ToolIsError        bool     `json:"toolIsError"`
}

func metaOf(e runtime.Event) eventMeta {
	var m eventMeta
	_ = json.Unmarshal(e.Payload, &m)
	return m
}

// people are the uids the timeline names (owner, starters, deciders, submitters).
func people(run runtime.Run, evs []runtime.Event) []int64 {
	out := []int64{run.BeUser}
	for _, e := range evs {
		m := metaOf(e)
		for _, p := range []*int64{m.DecidedBy, m.SubmittedBy, m.RequestedBy} {
			if p != nil {
				out = append(out, *p)
			}
		}
	}
	return out
}

// timeline describes each event from its allow-listed metadata.
func timeline(evs []runtime.Event, names nameBook) []views.TimelineEntry {
	out := make([]views.TimelineEntry, len(evs))
	for i, e := range evs {
		m := metaOf(e)
		t := views.TimelineEntry{Sequence: e.Sequence, Time: time.Unix(e.Crdate, 0), Kind: e.Kind, Round: e.Round,
			Duration: duration(e.DurationMS)}
		switch e.Kind {
		case runtime.EventRequest:
			t.Summary = "Started by " + names.actor(deref(m.RequestedBy), m.RequestedByService)
			if m.Configuration != "" {
				t.Details = append(t.Details, "configuration "+m.Configuration)
			}
		case runtime.EventLLM:
			t.Summary = "The model answered"
			if len(m.RequestedToolNames) > 0 {
				t.Summary = "The model asked for " + strings.Join(m.RequestedToolNames, ", ")
			}
			if m.FinishReason != "" {
				t.Details = append(t.Details, "finish reason "+m.FinishReason)
			}
			if m.PromptTokens != nil || m.CompletionTokens != nil {
				t.Details = append(t.Details, fmt.Sprintf("%s prompt + %s completion tokens",
					views.Count(deref(m.PromptTokens)), views.Count(deref(m.CompletionTokens))))
			}
		case runtime.EventTool:
			t.Summary, t.IsError = "Tool "+m.ToolName+" ran", m.ToolIsError
			if m.ToolIsError {
				t.Summary = "Tool " + m.ToolName + " answered with an error"
			}
		case runtime.EventApproval:
			verdict := "Denied by "
			if m.Approved != nil && *m.Approved {
				verdict = "Approved by "
			}
			t.Summary = verdict + names.actor(deref(m.DecidedBy), m.DecidedByService)
		case runtime.EventInput:
			t.Summary = "Input submitted by " + names.of(deref(m.SubmittedBy))
		}
		out[i] = t
	}
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// duration formats milliseconds for the timeline; 0 is blank.
func duration(ms float64) string {
	switch {
	case ms <= 0:
		return ""
	case ms < 1:
		return "< 1 ms"
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}
