package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/retention"
)

// RunView is the run page: the summary, the pending decision or form while the run waits,
// the timeline, and what the viewer may do. Live is set while the run is queued or running:
// the page offers a Refresh link and static/app.js reloads it every few seconds.
type RunView struct {
	Summary  RunSummary
	Pending  *PendingCard
	Timeline []TimelineEntry
	// CancelURL is the cancel confirmation page; "" when the viewer may not cancel or the run
	// has finished.
	CancelURL string
	Live      bool
	Now       time.Time
	// Notifications are the run's notifications; the section is left out when there are none.
	Notifications []NotificationRow
	// Calls are the calls the run executed, and those its approvals edited that have not run.
	Calls []CallView
	// Late is set when the viewer's decision came too late: after the run's wait expired, or
	// after another decision.
	Late *LateDecision
	// Answer is the finished run's output as the viewer is shown it; nil while the run is not
	// finished or when it keeps none.
	Answer *AnswerView
	// Transcript shows the Overview and Transcript tabs: the run's configuration keeps content
	// (privacy redacted or full). While the run waits, a Transcript link beside Cancel takes
	// their place, so the pending card (and a form's first field) stays on the first screen.
	Transcript bool
	// Assignment is a waiting run's assignment box; nil when the run does not wait.
	Assignment *AssignmentBox
	// Comments is the comment form: while the run waits, or after a refused post (its text
	// kept); nil otherwise.
	Comments *CommentBox
}

// AnswerView is a finished run's output: Text as the model (or the tool it ended on) wrote
// it, shown as text with its line breaks, never as HTML or Markdown; or, with Text empty,
// Withheld saying why it is not shown (runtime.Answer.Withheld, or WithheldSealed with
// SealedWith the key it is sealed with, missing from the desk's key set).
type AnswerView struct {
	Text       string
	Finished   time.Time
	Withheld   string
	SealedWith string
}

// WithheldSealed is AnswerView.Withheld of an answer sealed with a key the desk does not hold:
// it is refused, never shown as stored, and the rest of the run page still shows.
const WithheldSealed = "sealed"

// WithheldText is why the answer is not shown, in words.
func (a AnswerView) WithheldText() string {
	switch a.Withheld {
	case runtime.WithheldPrivacy:
		return "This configuration keeps no answers (keep_output: false)."
	case runtime.WithheldRetention:
		return "The answer was removed by the retention policy."
	case WithheldSealed:
		return fmt.Sprintf("The answer is sealed with key %q, which is missing from this desk's key set (RUNSDESK_KEYS).", a.SealedWith)
	}
	return "You may not see this run's answer."
}

// LateDecision is a decision refused because the run's wait had expired (when it expired,
// what the expiry did) or because another decision came first (DecidedFirst: who decided,
// when and what, as "Approved by ada at 1 Dec 2026, 18:57 UTC"; NewTurn: the run waits again
// on another turn), and what the person typed (field name and value as posted, kept on the
// page so nothing they typed is lost).
type LateDecision struct {
	ExpiredAt    time.Time
	Action       string
	DecidedFirst string
	NewTurn      bool
	Typed        []TypedValue
}

// TypedValue is one value a person posted.
type TypedValue struct {
	Name  string
	Value string
}

// Outcome words what the expiry did to the run ("denied automatically").
func (l LateDecision) Outcome() string {
	switch l.Action {
	case "deny":
		return "was denied automatically"
	case "answer":
		return "was answered automatically with its configured input"
	case "cancel":
		return "was cancelled automatically"
	}
	return "is handled automatically"
}

// RunSummary is what the run page says about a run. Owner is a username (or a phrase such
// as "a service account"); zero times are shown as a dash. RetryAt is set while a queued run
// waits to be retried after a provider failure.
type RunSummary struct {
	// Retention is how long the run's configuration keeps its content (the default when the
	// configuration no longer exists).
	Retention        retention.Policy
	UUID             string
	Status           string
	Reason           string
	Configuration    string
	Owner            string
	Created          time.Time
	Paused           time.Time
	Finished         time.Time
	Iterations       int
	Truncated        bool
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	Cost             float64
	ErrorClass       string
	RetryAt          time.Time
	// Expiry is what the latest expiry of one of its pauses did ("" when none expired).
	Expiry string
}

// TimelineEntry is one event of a run, described from allow-listed metadata only: never
// arguments, results, prompts or submitted values. Actor is who decided or submitted ("" for
// machine steps); IsError marks a tool step that answered with an error.
type TimelineEntry struct {
	Sequence int
	Time     time.Time
	Kind     string
	Round    int
	Duration string
	Summary  string
	Details  []string
	IsError  bool
	// Text is what a person wrote (a comment), shown as text with its line breaks.
	Text string
	// DecidedBy is who decided the run's pause in this entry (an approval, a denial, a
	// request for changes, an input), and Decision says so ("ada approved this"); both ""
	// for other entries. The live page names them when someone else decided.
	DecidedBy string
	Decision  string
}

// KindGovernance is the Kind of a timeline entry that is a governance row (a gate's refusal),
// not a step: its Sequence is the step it was written with (or -1), so it shows no number.
const KindGovernance = "governance"

// Number is the entry's "#" column: the step's sequence, blank for a governance row.
func (e TimelineEntry) Number() string {
	if e.Kind == KindGovernance {
		return ""
	}
	return strconv.Itoa(e.Sequence)
}

// KindLabel names an event kind for people.
func KindLabel(kind string) string {
	switch kind {
	case KindGovernance:
		return "Governance"
	case "request":
		return "Started"
	case "llm":
		return "Model call"
	case "tool":
		return "Tool call"
	case "approval":
		return "Decision"
	case "vote":
		return "Vote"
	case "comment":
		return "Comment"
	case "assignment":
		return "Assignment"
	case "request_changes":
		return "Changes requested"
	case "input":
		return "Input"
	case "assembled":
		return "Context assembled"
	case "context":
		return "Context"
	case "dropped":
		return "Context dropped"
	case "reminder":
		return "Reminder"
	case "escalation":
		return "Escalation"
	case "expiry":
		return "Expiry"
	}
	return kind
}

// ShowReason reports whether the reason (FinishedReason) adds to the status badge (a completed
// run that ended "completed" needs no second word; one whose pause expired says what the
// expiry did).
func (s RunSummary) ShowReason() bool {
	return s.Expiry != "" || (s.Reason != "" && ReasonLabel(s.Reason) != StatusOf(s.Status).Label)
}

// LiveText says what a live run is doing.
func (s RunSummary) LiveText() string {
	if s.Status == "queued" && !s.RetryAt.IsZero() {
		return "This run is queued, retrying after a provider failure."
	}
	if s.Status == "queued" {
		return "This run is queued and will start shortly."
	}
	return "This run is working."
}

// RetentionNote says when a finished run's output and transcript, and the run itself when
// its retention is not forever, are (or were, by now) removed: "Output and transcript removed
// on 2027-01-01 (retention 30 days)". "" while the run has not finished.
func RetentionNote(p retention.Policy, finished, now time.Time) string {
	if finished.IsZero() {
		return ""
	}
	part := func(what string, class retention.Class) string {
		at := p.RemovedAt(class, finished)
		verb := " removed on "
		switch {
		case at.After(now):
		case strings.Contains(what, " and "):
			verb = " were removed on "
		default:
			verb = " was removed on "
		}
		return what + verb + at.UTC().Format("2006-01-02") + " (retention " + retentionDays(at.Sub(finished)) + ")"
	}
	out := part("Output", retention.Outputs) + "; " + strings.ToLower(part("Transcript", retention.Transcripts)[:1]) + part("Transcript", retention.Transcripts)[1:]
	if p.RemovedAt(retention.Outputs, finished).Equal(p.RemovedAt(retention.Transcripts, finished)) {
		out = part("Output and transcript", retention.Outputs)
	}
	if p.Of(retention.Runs) > 0 {
		out += "; the run" + strings.TrimPrefix(part("Run", retention.Runs), "Run")
	}
	return out
}

// retentionDays is d in days when whole ("30 days"), else as Go writes it.
func retentionDays(d time.Duration) string {
	if d%retention.Day != 0 {
		return d.String()
	}
	n := int64(d / retention.Day)
	if n == 1 {
		return "1 day"
	}
	return strconv.FormatInt(n, 10) + " days"
}
