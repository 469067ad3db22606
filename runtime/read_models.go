package runtime

import (
	"encoding/json"

	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// Pause describes what a waiting run waits for, derived from its stored state: the pending
// calls (with previews), for an input pause the target tool and its schema, and the digest a
// decision must echo (the engine's Get always sets it; Inbox only on approval pauses the
// viewer may decide). Tools describes each pending call's tool as registered at most 2 s ago
// (a decision checks the tools as registered when it is made). Form is the compiled input
// schema when it yields a form field (nil otherwise: no form can be shown).
type Pause struct {
	Status       Status
	PendingCalls []PendingCall
	Previews     []CallPreview
	InputTool    string
	InputSchema  json.RawMessage
	Digest       string
	Tools        map[string]ToolInfo
	Form         *schema.Schema
	// PinDigest is the digest of the pending calls' tools and the decision policy as they
	// are now (the DefinitionPin), which a decision made from this view carries (PinDigest of
	// ApprovalDecision, InputSubmission); Changes is how they differ from those pinned with
	// the pause (none: unchanged).
	PinDigest string
	Changes   []DefinitionChange
	// Guardrails are the calls a guardrail asked a person to approve, with its reason.
	Guardrails []GuardrailApproval
	// Elicitation is set when a remote server asked for the input in the middle of a call.
	Elicitation *PauseElicitation
	// ModelText is what the model wrote beside the paused turn's calls (its stated reason):
	// untrusted text, set when the whole state was read (Get), "" otherwise.
	ModelText string
	// Gate is what the decision pipeline's checks of the decider say of the viewer of Get
	// (zero elsewhere): the checks a decision makes, by the same functions.
	Gate DecisionGate
	// Quorum is set on an approval pause whose turn needs several approvals (Get only): how
	// many, the votes counted so far and whether the viewer cast one.
	Quorum *PauseQuorum
	// Edit is set when an edit-and-approve made the edited calls the pending turn (their
	// ModelArguments keep the model's): who edited, when and what.
	Edit *PauseEdit
}

// PauseQuorum is the approvals a turn needs (Required, more than one), whether one of them may
// be automatic, the votes counted on its pause so far (oldest first) and whether the viewer
// cast one (Voted).
type PauseQuorum struct {
	Required      int
	AutomaticVote bool
	Votes         []Vote
	Voted         bool
}

// Missing is how many approvals the turn still needs.
func (q PauseQuorum) Missing() int { return max(q.Required-len(q.Votes), 0) }

// DecisionGate is what the decision pipeline's checks of who decides say of one actor and
// one pause: Access is the role matrix's refusal of any decision (run_access_denied; nil: the
// actor may decide, a denial included); Refusals are the refusals of approving (four-eyes,
// the decider tool gate) or, on an input pause, of submitting (the decider tool gate), in the
// order the pipeline checks them: a decision gets the first. Empty when the actor may.
// Editable are the ids of the pending calls of an approval pause the actor may edit when
// approving (the check an approval with edits makes).
type DecisionGate struct {
	Access   *Error
	Refusals []*Error
	Editable []string
}

// Refusal is what a decision by the actor would be refused with first (nil: it would pass
// these checks).
func (g DecisionGate) Refusal() *Error {
	if g.Access != nil || len(g.Refusals) == 0 {
		return g.Access
	}
	return g.Refusals[0]
}

// PauseElicitation is what the desk shows of a remote server's request for input: the
// server's message and when the request expires (unix seconds). Confirmation: the request
// asks for no field (its schema yields no form field), so a person confirms (a submission
// without values, sent as accept with {}), declines or cancels it.
type PauseElicitation struct {
	Message      string
	ExpiresAt    int64
	Confirmation bool
}

// ToolInfo is what the desk shows about a pending call's tool.
type ToolInfo struct {
	Registered    bool
	Offered       bool
	Effect        tool.Effect
	AdminOnly     bool
	NeedsApproval bool
	// Editable: a reviewer may edit the call's arguments when approving it (tool.IsEditable).
	Editable bool
}

// RunView is a run as callers may see it: payload columns stripped; for a waiting run its
// Pause, or Unreadable with a reason when the state cannot be read (the run is still listed).
type RunView struct {
	Run        Run
	Pause      *Pause
	Unreadable string
}

// Timeline is a run's history as its page shows it: its events and its governance rows,
// oldest first.
type Timeline struct {
	Events     []Event
	Governance []GovernanceEvent
	// Edits are the calls approvals of the run edited, oldest first.
	Edits []CallEdit
	// Reasons are the reasons deciders gave, by the sequence of their decision's event.
	Reasons map[int]string
	// Calls are the calls the run executed, in the order they were answered.
	Calls []ExecutedCall
	// Comments are the comments people wrote on the run, by the sequence of their event.
	Comments map[int]Comment
}

// CallEdit is one call an approval edited, as the run page shows it to those who may read
// the run: the model's (proposed) arguments, the reviewer's (approved), the RFC 6902 patch
// between them, and the decision's digest over the pending turn and its edits. What the tool
// was sent is the call's ExecutedCall, recorded when it ran. DecidedBy is who edited: the
// decider, or EditedBy when an earlier vote's edit made the call the pending turn.
type CallEdit struct {
	CallID       string          `json:"callId"`
	Tool         string          `json:"tool"`
	Proposed     json.RawMessage `json:"proposed"`
	Approved     json.RawMessage `json:"approved"`
	Patch        jsonpatch.Patch `json:"patch"`
	PatchDigest  string          `json:"patchDigest"`
	ChangedPaths []string        `json:"changedPaths"`
	EditedBy     int64           `json:"editedBy,omitempty"`
	DecidedBy    int64           `json:"-"`
	Decided      int64           `json:"-"`
}

// EditView is one pending call of a run waiting for approval as "Edit and approve" shows it:
// the run and its pause, the call, the tool's compiled parameters (the form), the model's
// arguments and, once a valid form was posted, the edited arguments, the patch from the
// model's to them and the digest a confirmation must echo (PatchDigest).
type EditView struct {
	RunView
	Call        PendingCall
	Form        *schema.Schema
	Proposed    map[string]any
	Edited      map[string]any
	Patch       jsonpatch.Patch
	PatchDigest string
}

// Answer is what a reader is shown of a finished run's output: Output, or nil with Withheld
// saying why it is not shown ("" when the run keeps none, or is not finished).
type Answer struct {
	Output   *RunOutput
	Withheld string
}

// The reasons an output is withheld (Answer.Withheld, the API's output_withheld).
const (
	// WithheldPrivacy: the run's configuration keeps no outputs (`keep_output: false`).
	WithheldPrivacy = "privacy"
	// WithheldRetention: the output was kept and retention has removed it.
	WithheldRetention = "retention"
	// WithheldScope: the reader may not see the run's content (a token without the content
	// scope reading a run it did not start).
	WithheldScope = "scope"
)
