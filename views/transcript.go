package views

import (
	"fmt"
	"time"
	"unicode/utf8"

	"runsdesk/runtime"
)

// TranscriptView is a run's Transcript tab: the run it belongs to (Summary), the privacy mode
// of its configuration, its steps in order, why none shows content when none does (Withheld,
// a runtime.Transcript reason) and when retention removes its content (zero: never, or not
// finished).
type TranscriptView struct {
	Summary  RunSummary
	Privacy  string
	Steps    []TranscriptStep
	Withheld string
	Removal  time.Time
	Now      time.Time
}

// TranscriptStep is one step of a transcript: the timeline's words for its event (Entry) and
// what it said, when the viewer may read it. Privacy is the mode its content was kept under;
// Withheld is runtime.WithheldRole for content the viewer's role may not read; SealedWith
// names the missing key of content the desk could not open. Calls are a model turn's tool
// calls.
type TranscriptStep struct {
	Entry                                                 TimelineEntry
	System, Prompt, Text, Arguments, Result, Values, Note string
	Calls                                                 []TranscriptCall
	Kept                                                  bool
	Privacy, Withheld, SealedWith                         string
}

// TranscriptCall is one tool call a model turn asked for.
type TranscriptCall struct {
	ID, Tool, Arguments string
}

// TranscriptPath is the Transcript tab of run uuid.
func TranscriptPath(uuid string) string { return RunPath(uuid) + "/transcript" }

// CollapseAbove is the length in characters above which a transcript text starts collapsed.
const CollapseAbove = 600

// Collapsed reports whether text starts collapsed: it is longer than CollapseAbove.
func Collapsed(text string) bool { return utf8.RuneCountInString(text) > CollapseAbove }

// CharCount is "N characters" for text.
func CharCount(text string) string {
	return Count(int64(utf8.RuneCountInString(text))) + " characters"
}

// WithheldText is why no step of the transcript shows content, in words.
func (t TranscriptView) WithheldText() string {
	switch t.Withheld {
	case runtime.WithheldPrivacy:
		return "This configuration keeps no transcripts (privacy: metadata): its steps are recorded without what they said."
	case runtime.WithheldRetention:
		return "The transcript was removed by the retention policy."
	case runtime.WithheldScope:
		return "You may not see what this run said."
	}
	return ""
}

// StepWithheldText is why a step's content is not shown, in words ("" when it is shown or
// none was kept).
func (s TranscriptStep) StepWithheldText() string {
	switch {
	case s.SealedWith != "":
		return fmt.Sprintf("This step's content is sealed with key %q, which is missing from this desk's key set (RUNSDESK_KEYS).", s.SealedWith)
	case s.Withheld == runtime.WithheldRole:
		return "This step was kept in full; support staff see redacted transcripts only (support_sees: redacted)."
	}
	return ""
}

// PrivacyText describes a privacy mode for the transcript's heading.
func PrivacyText(mode string) string {
	switch runtime.Privacy(mode) {
	case runtime.PrivacyRedacted:
		return "Kept redacted: secrets and e-mail addresses are masked and each text is cut at 2,000 characters."
	case runtime.PrivacyFull:
		return "Kept in full: every text as it was."
	}
	return "Kept as metadata only."
}
