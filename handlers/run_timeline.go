package handlers

import (
	"encoding/json"
	"fmt"
	"sort"
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
	DecidedByRule      string   `json:"decidedByRule"`
	SubmittedBy        *int64   `json:"submittedBy"`
	RequestedBy        *int64   `json:"requestedBy"`
	RequestedByService string   `json:"requestedByService"`
	Configuration      string   `json:"configuration"`
	FinishReason       string   `json:"finishReason"`
	PromptTokens       *int64   `json:"promptTokens"`
	CompletionTokens   *int64   `json:"completionTokens"`
	UsageEstimated     bool     `json:"usageEstimated"`
	RequestedToolNames []string `json:"requestedToolNames"`
	ToolName           string   `json:"toolName"`
	ToolIsError        bool     `json:"toolIsError"`
	DroppedMessages    int64    `json:"droppedMessages"`
	DroppedToolCalls   int64    `json:"droppedToolCalls"`
	DroppedToolResults int64    `json:"droppedToolResults"`
	TokensBefore       int64    `json:"estimatedTokensBefore"`
	TokensAfter        int64    `json:"estimatedTokensAfter"`
	MaxContextTokens   int64    `json:"maxContextTokens"`
	Action             string   `json:"action"`
	Expired            bool     `json:"expired"`
	Edited             bool     `json:"edited"`
	ChangedPaths       []string `json:"changedPaths"`
	ReasonGiven        bool     `json:"reasonGiven"`
	Refusal            string   `json:"refusal"`
	Votes              int      `json:"votes"`
	Required           int      `json:"required"`
	By                 *int64   `json:"by"`
	ByService          string   `json:"byService"`
	Mentioned          []int64  `json:"mentioned"`
	Assignee           *int64   `json:"assignee"`
	Previous           int64    `json:"previous"`
	Forced             bool     `json:"forced"`
	Auto               bool     `json:"auto"`
	Voided             int      `json:"voided"`
	EditedBy           *int64   `json:"editedBy"`
}

func metaOf(e runtime.Event) eventMeta {
	var m eventMeta
	_ = json.Unmarshal(e.Payload, &m)
	return m
}

// people are the uids the timeline names (owner, starters, deciders, submitters, deciders
// the tool gate refused, commenters and the people they mention, assignees).
func people(run runtime.Run, evs []runtime.Event, gov []runtime.GovernanceEvent) []int64 {
	out := []int64{run.BeUser}
	for _, e := range evs {
		m := metaOf(e)
		for _, p := range []*int64{m.DecidedBy, m.SubmittedBy, m.RequestedBy, m.EditedBy, m.By, m.Assignee, &m.Previous} {
			if p != nil && *p > 0 {
				out = append(out, *p)
			}
		}
		out = append(out, m.Mentioned...)
	}
	for _, g := range gov {
		out = append(out, g.BeUser)
	}
	return out
}

// timeline describes the run's steps, in sequence order, with its governance rows merged in
// by time then sequence: a row follows the step it names (the one it was written with, or
// for a decider refused while the run waited the last step then); a row naming no step
// follows the last step at or before its time. A decision's event carries its decider's
// reason (tl.Reasons), a comment's event its text (tl.Comments).
func timeline(tl runtime.Timeline, names nameBook) []views.TimelineEntry {
	evs, gov := tl.Events, tl.Governance
	after := governanceAfter(evs, gov)
	out := make([]views.TimelineEntry, 0, len(evs)+len(gov))
	place := func(i int) {
		for _, g := range after[i] {
			round := 0
			if i >= 0 && evs[i].Sequence == g.Sequence {
				round = evs[i].Round
			}
			out = append(out, governanceEntry(g, round, names))
		}
	}
	place(-1)
	denied := ""
	for i, e := range evs {
		t := stepEntry(e, names)
		denied = decisionWords(&t, e, names, tl.Reasons, denied)
		if c, ok := tl.Comments[e.Sequence]; ok {
			t.Text = commentText(c)
		}
		out = append(out, t)
		place(i)
	}
	return out
}

// decisionWords completes t, the entry of e, with what a decision adds: an approval's reason
// (a denial without one says so), and for a call a denial refused, instead of a tool error, who
// denied it, when and why. denied is that sentence of the latest denial before e; it returns
// the one after e.
func decisionWords(t *views.TimelineEntry, e runtime.Event, names nameBook, reasons map[int]string, denied string) string {
	m := metaOf(e)
	switch {
	case e.Kind == runtime.DecisionRequestChanges:
		if text, given := reasons[e.Sequence]; given {
			t.Details = append(t.Details, "asked: "+text)
		}
	case e.Kind == runtime.EventApproval:
		reason, given := reasons[e.Sequence]
		if given {
			t.Details = append(t.Details, "reason: "+reason)
		}
		if m.Approved != nil && *m.Approved {
			return denied
		}
		why := "; no reason given"
		if given {
			why = ": " + reason
		} else {
			t.Details = append(t.Details, "no reason given")
		}
		return "denied by " + names.actor(deref(m.DecidedBy), m.DecidedByService) + " at " + views.DecisionTime(time.Unix(e.Crdate, 0)) + why
	case e.Kind == runtime.EventTool && m.Refusal == runtime.ReasonDeniedByOperator && denied != "":
		t.Summary, t.IsError = "Tool "+m.ToolName+" was not run: "+denied, false
	}
	return denied
}

// governanceAfter groups the governance rows by the index in evs of the step each follows
// (-1: before every step), keeping their order (oldest first): the step with its sequence
// when there is one, else the last step at or before its time (steps are in time order).
func governanceAfter(evs []runtime.Event, gov []runtime.GovernanceEvent) map[int][]runtime.GovernanceEvent {
	bySequence := make(map[int]int, len(evs))
	for i, e := range evs {
		bySequence[e.Sequence] = i
	}
	out := map[int][]runtime.GovernanceEvent{}
	for _, g := range gov {
		i, ok := bySequence[g.Sequence]
		if !ok {
			i = sort.Search(len(evs), func(k int) bool { return evs[k].Crdate > g.Crdate }) - 1
		}
		out[i] = append(out[i], g)
	}
	return out
}

// stepEntry describes one event from its allow-listed metadata.
func stepEntry(e runtime.Event, names nameBook) views.TimelineEntry {
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
			tokens := fmt.Sprintf("%s prompt + %s completion tokens", views.Count(deref(m.PromptTokens)), views.Count(deref(m.CompletionTokens)))
			if m.UsageEstimated {
				tokens += " (estimated)"
			}
			t.Details = append(t.Details, tokens)
		}
	case runtime.EventTool:
		t.Summary, t.IsError = "Tool "+m.ToolName+" ran", m.ToolIsError
		if why, refused := governanceReasons[m.Refusal]; refused {
			t.Summary, t.IsError = "Tool "+m.ToolName+" was not run: "+why, false
		} else if m.ToolIsError {
			t.Summary = "Tool " + m.ToolName + " answered with an error"
		}
	case runtime.EventApproval:
		verdict := "Denied by "
		if m.Approved != nil && *m.Approved {
			verdict = "Approved by "
		}
		t.DecidedBy = names.actor(deref(m.DecidedBy), m.DecidedByService)
		if m.DecidedByRule != "" {
			t.DecidedBy = "rule " + m.DecidedByRule
		}
		t.Summary = verdict + t.DecidedBy
		t.Decision = t.DecidedBy + " denied this"
		if m.Approved != nil && *m.Approved {
			t.Decision = t.DecidedBy + " approved this"
		}
		if m.Edited {
			t.Summary += ", with edited arguments"
		}
		editDetails(&t, m, names)
		if m.Required > 1 {
			t.Details = append(t.Details, fmt.Sprintf("approval %d of %d: the turn's quorum", m.Votes, m.Required))
		}
	case runtime.DecisionRequestChanges:
		t.DecidedBy = names.actor(deref(m.DecidedBy), m.DecidedByService)
		t.Summary, t.Decision = "Changes requested by "+t.DecidedBy, t.DecidedBy+" requested changes"
	case runtime.EventVote:
		by := names.actor(deref(m.DecidedBy), m.DecidedByService)
		if m.Edited {
			by += ", with edited arguments"
		}
		t.Summary = fmt.Sprintf("Approval %d of %d by %s; waiting for more", m.Votes, m.Required, by)
		if m.DecidedByRule != "" {
			t.Summary = fmt.Sprintf("Approval %d of %d by rule %s; waiting for more", m.Votes, m.Required, m.DecidedByRule)
		}
		editDetails(&t, m, names)
	case runtime.EventComment:
		t.Summary = "Comment by " + names.of(deref(m.By))
		if len(m.Mentioned) > 0 {
			t.Details = append(t.Details, "mentions "+names.list(m.Mentioned))
		}
	case runtime.EventAssignment:
		t.Summary = assignmentWords(m, names)
	case runtime.EventInput:
		t.DecidedBy = names.of(deref(m.SubmittedBy))
		t.Summary, t.Decision = "Input submitted by "+t.DecidedBy, t.DecidedBy+" submitted the input"
	case runtime.EventDropped:
		t.Summary = "Older messages dropped to fit the context window"
		t.Details = append(t.Details,
			fmt.Sprintf("%d messages (tool calls: %d, tool results: %d)", m.DroppedMessages, m.DroppedToolCalls, m.DroppedToolResults),
			fmt.Sprintf("about %s → %s of %s tokens", views.Count(m.TokensBefore), views.Count(m.TokensAfter), views.Count(m.MaxContextTokens)))
	case runtime.EventReminder:
		t.Summary = "Reminder: the run is still waiting for a person"
	case runtime.EventEscalation:
		t.Summary = "Escalated: nobody decided in time, so the pause was escalated"
	case runtime.EventExpiry:
		t.Summary = views.ExpiryText(m.Action)
	case runtime.EventElicitation:
		t.Summary = "The server's request for input was declined by " + names.of(deref(m.DecidedBy))
		switch {
		case m.Expired:
			t.Summary = "The server's request for input expired; the desk cancelled it"
		case m.Action == "cancel":
			t.Summary = "The server's request for input was cancelled by " + names.of(deref(m.DecidedBy))
		}
	}
	return t
}

// commentText is what the timeline shows of comment c: its text, or why it cannot be shown.
func commentText(c runtime.Comment) string {
	if c.SealedWith != "" {
		return "(sealed with key " + c.SealedWith + ", which this desk does not hold)"
	}
	return c.Body
}

// assignmentWords says what an assignment event did: "Taken by rita", "Assigned to rita by
// ada", "Assigned to rita automatically", "Released by rita", with "(forced)" when an admin
// took the run from its assignee.
func assignmentWords(m eventMeta, names nameBook) string {
	to, by := deref(m.Assignee), deref(m.By)
	var s string
	switch {
	case to == 0:
		s = "Released by " + names.actor(by, m.ByService)
	case m.Auto:
		s = "Assigned to " + names.of(to) + " automatically"
	case to == by:
		s = "Taken by " + names.of(by)
	default:
		s = "Assigned to " + names.of(to) + " by " + names.actor(by, m.ByService)
	}
	if m.Forced {
		s += " (forced)"
	}
	return s
}

// governanceReasons are the timeline's words for the reasons runsdesk writes; another
// producer's reason is shown as its code.
var governanceReasons = map[string]string{
	runtime.ReasonToolNotOffered:             "not offered to this run",
	runtime.ReasonToolNoLongerPermitted:      "no longer permitted",
	runtime.ReasonDeniedByOperator:           "the turn was denied",
	runtime.ReasonInputResumeWithoutApproval: "it needs an approval, and the run was resumed with input only",
	runtime.ReasonToolNotRegistered:          "the tool is not registered",
	runtime.ReasonToolAdminOnly:              "the tool is admin-only",
	runtime.ReasonDeciderDisabled:            "the account is disabled",
	runtime.ReasonServiceAccountSubmit:       "a service account may not submit input",
	runtime.ReasonServiceAccountWrite:        "a service account may not approve a write",
	runtime.ReasonGuardrailDenied:            "a guardrail denied it",
	runtime.ReasonGuardrailFailed:            "a guardrail failed, so it denied",
	runtime.ReasonGuardrailApproval:          "a guardrail asked for a person's approval",
	runtime.ReasonServiceAccountGuardrail:    "a service account may not approve what a guardrail asked a person to approve",
	runtime.ReasonDeniedByExpiry:             "nobody decided before the wait expired, so it was denied automatically",
	runtime.ReasonRuleGuardrail:              "a standing approval may not approve what a guardrail asked a person to approve",
	runtime.ReasonUsageNegative:              "the provider reported a negative token count, so the call was counted at the estimate",
	runtime.ReasonUsageTooLarge:              "the provider reported more than 1,000,000 tokens for one call, so the call was counted at the estimate",
}

// governanceEntry describes a governance row from its codes and names: what was refused
// (a tool call, or a decider at the approver or submitter gate) and why.
// editDetails adds what an approval or vote event m says of edited arguments to t's details:
// the pointers changed, who edited them when an earlier vote's edit made them the pending
// turn, and the earlier approvals an edit voided.
func editDetails(t *views.TimelineEntry, m eventMeta, names nameBook) {
	if !m.Edited {
		return
	}
	t.Details = append(t.Details, "changed "+strings.Join(m.ChangedPaths, ", "))
	if m.EditedBy != nil {
		t.Details = append(t.Details, "edited by "+names.of(*m.EditedBy))
	}
	switch {
	case m.Voided == 1:
		t.Details = append(t.Details, "the 1 earlier approval was voided: it approved other arguments")
	case m.Voided > 1:
		t.Details = append(t.Details, fmt.Sprintf("the %d earlier approvals were voided: they approved other arguments", m.Voided))
	}
}

func governanceEntry(g runtime.GovernanceEvent, round int, names nameBook) views.TimelineEntry {
	t := views.TimelineEntry{Sequence: g.Sequence, Time: time.Unix(g.Crdate, 0), Kind: views.KindGovernance, Round: round}
	why := governanceReasons[g.Reason]
	if why == "" {
		why = g.Reason
	}
	who := names.actor(g.BeUser, detailValue(g.Detail, "serviceAccount"))
	if rule := detailValue(g.Detail, "rule"); rule != "" {
		who = "rule " + rule
	}
	switch gate := detailValue(g.Detail, "gate"); {
	case gate == "approver":
		t.Summary = "Approval by " + who + " refused: " + why
	case gate == "submitter":
		t.Summary = "Input from " + who + " refused: " + why
	case g.Decision == runtime.GovernanceResponseBlocked:
		t.Summary = "The model's final answer was blocked: " + why
	case g.Decision == runtime.GovernanceApprovalRequired:
		t.Summary = "Approval required: " + why
	case g.Decision == runtime.GovernanceUsageUntrusted:
		t.Summary = "The model's usage was not trusted: " + why
	default:
		t.Summary = "Tool " + g.ToolName + " refused: " + why
	}
	if g.Guardrail != "" {
		t.Details = append(t.Details, g.Guardrail)
	}
	if g.ToolName != "" && !strings.HasPrefix(t.Summary, "Tool ") {
		t.Details = append(t.Details, "tool "+g.ToolName)
	}
	t.Details = append(t.Details, g.Decision)
	if g.Detail != "" {
		t.Details = append(t.Details, g.Detail)
	}
	return t
}

// detailValue returns the value of key in a governance detail ("k=v; k=v"), "" when absent.
func detailValue(detail, key string) string {
	for _, pair := range strings.Split(detail, "; ") {
		if k, v, ok := strings.Cut(pair, "="); ok && k == key {
			return v
		}
	}
	return ""
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
