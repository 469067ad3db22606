package views

import (
	"fmt"
	"strings"
	"time"

	"runsdesk/runtime"
)

// PendingCard is a waiting run as the run page shows it: what it waits for, since when, the
// pending calls, and the form the viewer may use. At most one of Unreadable, Approval and Form
// decides what follows the calls (none: a read-only viewer of an approval).
type PendingCard struct {
	RunUUID       string
	Configuration string
	Status        string
	// Input reports an input pause (waiting_for_input); otherwise the run waits for approval.
	Input bool
	// InputTool is the tool the typed input is for.
	InputTool string
	Since     time.Time
	Now       time.Time
	// Expires is when the pause expires (zero: never); Escalated whether it was escalated.
	Expires   time.Time
	Escalated bool
	// OnBehalfOf is the username of the person an external request's agent acts for ("":
	// none).
	OnBehalfOf string
	// Unreadable: the run's state could not be read; no calls, no action.
	Unreadable bool
	Calls      []PendingCallView
	// Notes explain what the viewer cannot do here, and why.
	Notes []string
	// Approval is the approve/deny form; nil when the viewer may not decide.
	Approval *ApprovalForm
	// Form is the input form (InputForm) of an input pause; nil for an approval.
	Form *InputFormProps
	// Changes list how the tools or the decision policy changed since the run paused (none:
	// unchanged); a decision from this card is bound to them as they are now.
	Changes []DefinitionChangeView
	// Words is what the model wrote beside the calls (shown apart, as untrusted text).
	Words ModelWords
	// InRunPage: the card is on its run page, whose head shows the configuration, status
	// and run id, and whose section heading (id RunPendingTitleID) what it waits for; the
	// card repeats none of them.
	InRunPage bool
	// Votes is set when the turn needs several approvals: those counted so far.
	Votes *VotesView
}

// VotesView is the approvals of a turn that needs several: how many (Required), who approved
// and when, and whether the viewer is one of them (then they may not approve again).
type VotesView struct {
	Required int
	Voters   []VoterView
	Voted    bool
	// Voids is how many approvals an edit by the viewer would void (0: none, or the viewer
	// is offered no edit).
	Voids int
	// Edited is who edited the pending calls and when (nil: they are the model's).
	Edited *VoterView
}

// VoterView is one approval counted toward a turn: who and when.
type VoterView struct {
	Name string
	At   time.Time
}

// Tally is "1 of 2 approvals".
func (v VotesView) Tally() string {
	return fmt.Sprintf("%d of %d approvals", len(v.Voters), v.Required)
}

// Colon is what follows the tally: ":" when someone approved, else nothing.
func (v VotesView) Colon() string {
	if len(v.Voters) == 0 {
		return ""
	}
	return ":"
}

// Separator is what precedes the i-th voter's name: a space, after the first a comma too.
func (v VotesView) Separator(i int) string {
	if i == 0 {
		return " "
	}
	return ", "
}

// VoidNote is what a viewer who may edit reads before editing: "Editing voids the 1 approval
// so far: they approved other arguments."
func (v VotesView) VoidNote() string {
	noun := "approvals"
	if v.Voids == 1 {
		noun = "approval"
	}
	return fmt.Sprintf("Editing voids the %d %s so far: they approved other arguments.", v.Voids, noun)
}

// EditVote is what the confirmation of an edit on such a turn reads: "This turn needs 2
// approvals: approving with these changes counts as 1 of them.", then VoidNote when it voids any.
func (v VotesView) EditVote() string {
	s := fmt.Sprintf("This turn needs %d approvals: approving with these changes counts as 1 of them.", v.Required)
	if v.Voids > 0 {
		s += " " + v.VoidNote()
	}
	return s
}

// Waiting is what the viewer who voted reads: "You approved; waiting for 1 more".
func (v VotesView) Waiting() string {
	return fmt.Sprintf("You approved; waiting for %d more", max(v.Required-len(v.Voters), 0))
}

// RunPendingTitleID is the id of the run page's heading of its pending card.
const RunPendingTitleID = "pending-title"

// DefinitionChangeView is one line of a card's "what changed": the tool ("" for the
// configuration's policy), what changed (Field, runtime.DefinitionChange's), and its value
// when the run paused and now. Setting marks a setting of the configuration.
type DefinitionChangeView struct {
	Tool    string
	Field   string
	Was     string
	Now     string
	Setting bool
}

// changeWords name each Field in words.
var changeWords = map[string]string{
	"registered":   "registered",
	"effect":       "effect",
	"admin_only":   "admins only",
	"approval":     "needs approval",
	"editable":     "arguments editable",
	"parameters":   "parameters",
	"input_schema": "input form",
	"wait":         "wait policy",
	"four_eyes":    "a second person must approve (four-eyes)",
	"pinned":       "definitions",
}

// What names what changed in words (the field's name when it has none).
func (ch DefinitionChangeView) What() string {
	if w, ok := changeWords[ch.Field]; ok {
		return w
	}
	return ch.Field
}

// ToolChangedText heads a card's list of what changed since the run paused when a tool
// changed, and is the flash of a decision refused because of it.
const ToolChangedText = "The tool changed since this run paused — review it again."

// SettingChangedText is the flash of a decision refused because only settings of the
// run's configuration changed (the card names them).
const SettingChangedText = "A setting of the run's configuration changed since this run paused — review it again."

// ChangesHeading heads a card's list of what changed: ToolChangedText when a tool changed,
// else the configuration's settings named in words.
func ChangesHeading(changes []DefinitionChangeView) string {
	var settings []string
	for _, ch := range changes {
		if !ch.Setting {
			return ToolChangedText
		}
		settings = append(settings, fmt.Sprintf("“%s” (was %s, now %s)", ch.What(), ch.Was, ch.Now))
	}
	return "The configuration's setting " + strings.Join(settings, " and ") + " changed since this run paused — review it again."
}

// FieldPinDigest is the hidden field of the approval and input forms carrying the digest of
// the definitions the card showed (runtime.Pause.PinDigest).
const FieldPinDigest = "pin_digest"

// PendingCallView is one call of the paused turn. Arguments is pretty-printed JSON, shown as
// text (escaped); Long ones are collapsed. Preview is nil when no preview section applies.
type PendingCallView struct {
	Tool      string
	Arguments string
	Long      bool
	Lines     int
	Badges    []Badge
	Preview   *PreviewView
	// ArgumentsError is why the model's arguments were refused ("": they were not).
	ArgumentsError string
	// Guardrail is set when a guardrail asked for this call's approval: its reason.
	Guardrail *GuardrailView
	// EditHref is the call's "Edit and approve" form; "" when the viewer may not edit it.
	EditHref string
}

// GuardrailView is why a guardrail asked a person to approve a call (Reason may be empty).
type GuardrailView struct {
	Reason string
}

// GuardrailPersonText says on the card why a call a guardrail flagged waits for a person.
const GuardrailPersonText = "Only a person can approve this call: a guardrail flagged it, so no standing approval, service account or expiry approves it."

// PreviewView is what the tool said the call would do, captured when the run paused. With no
// Lines, or Failed, the person decides without a preview (Lines then explain why).
type PreviewView struct {
	Lines  []string
	Failed bool
}

// Shown reports whether there is a preview to show.
func (p PreviewView) Shown() bool { return !p.Failed && len(p.Lines) > 0 }

// ApprovalForm is the approve/deny form of an approval card. Digest and IdempotencyKey are
// echoed as hidden fields; a fresh key per rendered form makes a double submit replay.
// CanApprove false hides the Approve button (Deny stays); the Notes of the card say why.
type ApprovalForm struct {
	Action         string
	CSRF           string
	Digest         string
	IdempotencyKey string
	CanApprove     bool
	// PinDigest is echoed as FieldPinDigest.
	PinDigest string
}

// Approval form field names and limits.
const (
	FieldDecision   = "decision"
	FieldReason     = "reason"
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	// DecisionRequestChanges sends the reason back to the model as what to revise.
	DecisionRequestChanges = "request_changes"
	MaxReasonCharacters    = runtime.MaxReasonCharacters
)

// ReasonHelpText says under a decision's reason field where the reason goes.
const ReasonHelpText = "Shown on the run's timeline to everyone who may read the run; a denial's reason is told to the model, and with Request changes it is what the model is asked to revise."

// Why is the sentence saying what the run waits for.
func (c PendingCard) Why() string {
	if c.Input {
		return "Waiting for typed input"
	}
	return "Waiting for approval of a tool call"
}

// Kind is "input" or "approval".
func (c PendingCard) Kind() string {
	if c.Input {
		return "input"
	}
	return "approval"
}

func (c PendingCard) titleID() string  { return "run-" + c.RunUUID + "-title" }
func (c PendingCard) reasonID() string { return "reason-" + c.RunUUID }
