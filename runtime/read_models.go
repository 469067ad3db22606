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
}

// PauseElicitation is what the desk shows of a remote server's request for input: the
// server's message and when the request expires (unix seconds).
type PauseElicitation struct {
	Message   string
	ExpiresAt int64
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
	// Calls are the calls the run executed, in the order they were answered.
	Calls []ExecutedCall
}

// CallEdit is one call an approval edited, as the run page shows it to those who may read
// the run: the model's (proposed) arguments, the reviewer's (approved), the RFC 6902 patch
// between them, and the decision's digest over the pending turn and its edits. What the tool
// was sent is the call's ExecutedCall, recorded when it ran.
type CallEdit struct {
	CallID       string          `json:"callId"`
	Tool         string          `json:"tool"`
	Proposed     json.RawMessage `json:"proposed"`
	Approved     json.RawMessage `json:"approved"`
	Patch        jsonpatch.Patch `json:"patch"`
	PatchDigest  string          `json:"patchDigest"`
	ChangedPaths []string        `json:"changedPaths"`
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
