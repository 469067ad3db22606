package runtime

import "runsdesk/runtime/redact"

// Privacy is what a configuration's runs keep of what their events said (`privacy:`), and, as
// `support_sees:`, which of that content support staff may read.
type Privacy string

// The privacy modes. A run under PrivacyMetadata keeps no content: its events hold counts and
// lengths only, as they always do. PrivacyRedacted keeps each text with its secrets masked and
// capped (package redact); PrivacyFull keeps it verbatim. Content is never kept in the event
// payload, only beside it (NewEvent.Content).
const (
	PrivacyMetadata Privacy = "metadata"
	PrivacyRedacted Privacy = "redacted"
	PrivacyFull     Privacy = "full"
)

// ParsePrivacy is the mode a `privacy:` value names ("none" is PrivacyMetadata); ok is false
// for any other value.
func ParsePrivacy(s string) (p Privacy, ok bool) {
	switch s {
	case "none", string(PrivacyMetadata):
		return PrivacyMetadata, true
	case string(PrivacyRedacted), string(PrivacyFull):
		return Privacy(s), true
	}
	return "", false
}

// OrMetadata is p, or PrivacyMetadata when p is empty (a configuration that sets none).
func (p Privacy) OrMetadata() Privacy {
	if p == "" {
		return PrivacyMetadata
	}
	return p
}

// Keeps reports whether runs under p keep their events' content.
func (p Privacy) Keeps() bool { return p == PrivacyRedacted || p == PrivacyFull }

// EventContent is what one event said, as a transcript shows it. A request event holds the
// system prompt and the prompt; an llm event the model's text and its tool calls; a tool
// event the arguments the tool was sent and its result; a decision event (approval, input,
// elicitation, expiry) the values a person gave (a JSON object as text), the arguments an
// approval edited and the reason the decider gave. Empty fields are absent.
type EventContent struct {
	System    string        `json:"system,omitempty"`
	Prompt    string        `json:"prompt,omitempty"`
	Text      string        `json:"text,omitempty"`
	ToolCalls []ContentCall `json:"toolCalls,omitempty"`
	Arguments string        `json:"arguments,omitempty"`
	Result    string        `json:"result,omitempty"`
	Values    string        `json:"values,omitempty"`
	Note      string        `json:"note,omitempty"`
}

// ContentCall is one tool call the model asked for in an llm event's content.
type ContentCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Empty reports whether c says nothing.
func (c EventContent) Empty() bool {
	return c.System == "" && c.Prompt == "" && c.Text == "" && len(c.ToolCalls) == 0 && c.Arguments == "" &&
		c.Result == "" && c.Values == "" && c.Note == ""
}

// KeptContent is an event's content as a run keeps it: the mode it was kept under and what
// it says, redacted when that mode is PrivacyRedacted.
type KeptContent struct {
	Privacy Privacy
	Content EventContent
}

// Keep is c as a run under p keeps it: nil when p keeps no content or c says nothing; under
// PrivacyRedacted every text redacted (redact.Text), under PrivacyFull c as it is.
func Keep(p Privacy, c EventContent) *KeptContent {
	if !p.Keeps() || c.Empty() {
		return nil
	}
	if p == PrivacyRedacted {
		c = c.redacted()
	}
	return &KeptContent{Privacy: p, Content: c}
}

func (c EventContent) redacted() EventContent {
	out := EventContent{
		System: redact.Text(c.System), Prompt: redact.Text(c.Prompt), Text: redact.Text(c.Text),
		Arguments: redact.Text(c.Arguments), Result: redact.Text(c.Result), Values: redact.Text(c.Values),
		Note: redact.Text(c.Note),
	}
	for _, tc := range c.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ContentCall{ID: tc.ID, Name: tc.Name, Arguments: redact.Text(tc.Arguments)})
	}
	return out
}

// StoredContent is one event's kept content as read back: the event's sequence, the content,
// or, when it is sealed with a key the store lacks, that key's id in SealedWith (Content then
// empty: refused, never guessed).
type StoredContent struct {
	Sequence   int
	Kept       KeptContent
	SealedWith string
}

// Transcript is what a reader is shown of what a run said: its steps in event order, each
// with the content the run kept of it. Privacy is the mode of the run's configuration as it
// is now (PrivacyMetadata when it no longer exists). Withheld says why no step shows content,
// when none does: WithheldScope (the reader may not read the run's content), WithheldPrivacy
// (nothing was kept) or WithheldRetention (it was kept and retention removed it).
type Transcript struct {
	Privacy  Privacy
	Entries  []TranscriptEntry
	Withheld string
}

// TranscriptEntry is one step of a transcript: its event and, when the reader may read it,
// the content kept with it (nil when none was kept) and the mode it was kept under. Withheld
// is WithheldRole for content support staff may not read (kept in full while the
// configuration says `support_sees: redacted`); SealedWith names the missing key of content
// the store could not open.
type TranscriptEntry struct {
	Event      Event
	Content    *EventContent
	Privacy    Privacy
	Withheld   string
	SealedWith string
}

// WithheldRole is content withheld from support staff: it was kept in full, and the run's
// configuration lets support read redacted content only.
const WithheldRole = "role"

// TranscriptKinds are the event kinds a transcript shows: the request, model turns, tool
// calls and decisions; reminders, escalations and context bookkeeping are the timeline's.
func TranscriptKinds() []string {
	return []string{EventRequest, EventLLM, EventTool, EventApproval, DecisionRequestChanges, EventInput, EventElicitation, EventExpiry}
}

// MayReadKept reports whether actor, who may read a run's content, may read content the run
// kept under kept, its configuration being cfg: support staff read content kept in full only
// when cfg says `support_sees: full`.
func MayReadKept(actor Actor, cfg Configuration, kept Privacy) bool {
	return actor.Role != RoleSupport || kept != PrivacyFull || cfg.SupportSeesFull()
}
