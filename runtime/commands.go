package runtime

import (
	"errors"
	"net/url"

	"runsdesk/runtime/jsonpatch"
)

// MaxPromptBytes bounds a run's prompt.
const MaxPromptBytes = 32 << 10

// MaxIdempotencyKey bounds the length of a caller's idempotency key.
const MaxIdempotencyKey = 64

// MaxReasonCharacters bounds a decision's reason, in characters, wherever one is given (the
// web forms, bulk decisions and the API).
const MaxReasonCharacters = 1000

// Outcome is what an accepted decision or submission returns. Replayed is set when the
// idempotency key matched an earlier accepted request; Decision is that first decision.
type Outcome struct {
	RunUUID  string
	Decision Decision
	Replayed bool
	// Votes and Required are, for an approval, how many distinct approvals its turn has
	// counted and needs (1 and 1 for a turn one approval decides); Resumed whether the
	// decision resumed the run (false for a vote that leaves it waiting for more).
	Votes    int
	Required int
	Resumed  bool
	// Request reports that the decision answers an external request: it goes back to the
	// caller that asked, and nothing runs here.
	Request bool
}

// ApprovalDecision is a person's (or service account's) verdict on a paused turn.
// TurnDigest binds it to the turn that was reviewed; "" is stale. IdempotencyKey, when set,
// makes a repeat return the first outcome. Audit, when not nil, is the audit row written with
// an accepted verdict (AuditNote).
//
// PinDigest, when set, binds it to the definitions the reviewer was shown (Pause's
// PinDigest); "" binds it to those pinned with the pause.
// Edits, when not empty, approves the turn with some calls' arguments edited: pending call id
// → RFC 6902 patch over the model's arguments. Only an approval carries edits; each call's
// tool must be editable (admin-only ones by admins), and each edited result must validate
// against the tool's parameters (else InvalidEdit, with per-field errors). PatchDigest, when
// set, must be schema.PatchDigest of the pending turn's digest and Edits (the confirmation
// page's), else the approval is stale. Batch marks one decision of a bulk batch: it never
// carries edits (InvalidRequest).
//
// Reason, when not empty, says why (at most MaxReasonCharacters characters of valid UTF-8,
// else InvalidRequest): it is stored with the decision (Decision.Reason), shown on the
// timeline, and for a denial it is what the model is told beside who denied.
type ApprovalDecision struct {
	Approved       bool
	TurnDigest     string
	IdempotencyKey string
	Audit          *AuditNote
	PinDigest      string
	Edits          map[string]jsonpatch.Patch
	PatchDigest    string
	Reason         string
	Batch          bool
}

// ChangeRequest is a reviewer's request for changes to a paused turn: Text (at most
// MaxReasonCharacters characters) is what the model is told to revise, bound to the turn that
// was reviewed (TurnDigest; "" is stale) and, like an approval, to the definitions shown
// (PinDigest), with IdempotencyKey and Audit as for ApprovalDecision.
type ChangeRequest struct {
	Text           string
	TurnDigest     string
	PinDigest      string
	IdempotencyKey string
	Audit          *AuditNote
}

// ErrNoInputForm is wrapped by the CorruptSuspendedState error of a submission to a run whose
// input schema does not compile or, for a posted form, yields no form field: no form can be
// shown or read for it.
var ErrNoInputForm = errors.New("the stored input schema yields no form")

// InputSubmission is what a person supplies to a run waiting for input: typed Data, or the
// posted Form. TurnDigest binds it to the form that was shown; "" is stale.
//
// Data must be JSON-typed (as produced by schema.Coerce or encoding/json); it is used when
// Form is nil.
//
// Form, when not nil, replaces Data: it is a posted form (every value a string) that the
// runtime coerces with the compiled schema the run waits with (schema.Schema.Coerce). For a
// form the digest is checked before its values, so a stale form is refused as
// StaleInputTurn whatever it holds; a schema that yields no form field is
// CorruptSuspendedState; InvalidInputSubmission carries the coercion and validation errors
// of schema.Schema.CoerceAndValidate, one per field in form order.
//
// Audit, when not nil, is the audit row written with an accepted submission (AuditNote).
// PinDigest binds it to definitions as ApprovalDecision's does.
type InputSubmission struct {
	Data           map[string]any
	Form           url.Values
	TurnDigest     string
	IdempotencyKey string
	Audit          *AuditNote
	PinDigest      string
}

// ElicitationDecision declines or cancels a remote server's request for input (Action
// "decline" or "cancel"; an accept is an InputSubmission). TurnDigest, IdempotencyKey and
// Audit are as for an InputSubmission.
type ElicitationDecision struct {
	Action         string
	TurnDigest     string
	IdempotencyKey string
	Audit          *AuditNote
}

// Verdict is the outcome word of an accepted approval: "approved" or "denied".
func Verdict(approved bool) string {
	if approved {
		return "approved"
	}
	return "denied"
}

// NotAccepted is the outcome word of a decision attempt that was not newly accepted:
// "replayed", the refusal's code, or "error" for a failure that is not a refusal.
func NotAccepted(out Outcome, err error) string {
	var re *Error
	switch {
	case err == nil && out.Replayed:
		return "replayed"
	case errors.As(err, &re):
		return string(re.Code)
	}
	return "error"
}
