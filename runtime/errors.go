package runtime

import (
	"context"
	"errors"
	"fmt"

	"runsdesk/runtime/schema"
)

// Code names one row of the error catalogue (docs/state-machine.md), including the few errors runsdesk
// adds (RunNotFound, ConfigurationNotFound, InvalidRequest).
type Code string

// Error codes. Each is returned inside an *Error.
const (
	CodeRunNotFound            Code = "run_not_found"
	CodeRunNotAwaitingApproval Code = "run_not_awaiting_approval"
	CodeRunNotAwaitingInput    Code = "run_not_awaiting_input"
	CodeRunAccessDenied        Code = "run_access_denied"
	CodeRunConfigurationGone   Code = "run_configuration_gone"
	CodeSelfApprovalDenied     Code = "self_approval_denied"
	CodeCorruptSuspendedState  Code = "corrupt_suspended_state"
	CodeSealingKeyMissing      Code = "sealing_key_missing"
	CodeRunStateUnavailable    Code = "run_state_unavailable"
	CodeRunAlreadyResuming     Code = "run_already_resuming"
	CodeInvalidInputSubmission Code = "invalid_input_submission"
	CodeStaleApprovalTurn      Code = "stale_approval_turn"
	CodeStaleInputTurn         Code = "stale_input_turn"
	CodeApproverNotPermitted   Code = "approver_not_permitted"
	CodeSubmitterNotPermitted  Code = "submitter_not_permitted"
	CodeApprovalNotAuditable   Code = "approval_not_auditable"
	CodeRunNotCancellable      Code = "run_not_cancellable"
	CodeConfigurationNotFound  Code = "configuration_not_found"
	CodeInvalidRequest         Code = "invalid_request"
	CodeToolChanged            Code = "tool_changed"
	CodeElicitationExpired     Code = "elicitation_expired"
	CodeEditNotPermitted       Code = "edit_not_permitted"
	CodeInvalidEdit            Code = "invalid_edit"
	CodeRunExpired             Code = "run_expired"
	// CodeUnknownTool: an external request names a tool its configuration does not declare.
	CodeUnknownTool Code = "unknown_tool"
	// CodeExternalIDConflict: a request names an external id that a different request of its
	// configuration already holds; CodeIdempotencyKeyConflict: likewise for the caller's
	// Idempotency-Key.
	CodeExternalIDConflict     Code = "external_id_conflict"
	CodeIdempotencyKeyConflict Code = "idempotency_key_conflict"
	// CodeAlreadyAssigned: the run is assigned to someone else; CodeAssignedToOther: under
	// `assignment: {strict: true}` only its assignee may decide it.
	CodeAlreadyAssigned Code = "already_assigned"
	CodeAssignedToOther Code = "assigned_to_other"
	// CodeAlreadyVoted: the voter already approved this turn, which waits for more approvals;
	// CodeQuorumReached: the turn already had the approvals it needed (runtime/quorum).
	CodeAlreadyVoted  Code = "already_voted"
	CodeQuorumReached Code = "quorum_reached"
	// CodeCallbackNotAllowed: a request's callback_url is not an http(s) URL without
	// credentials whose host its configuration's callback_hosts list; CodeCallbacksNotEnabled:
	// it has a callback_url, and its configuration takes no callbacks.
	CodeCallbackNotAllowed  Code = "callback_not_allowed"
	CodeCallbacksNotEnabled Code = "callbacks_not_enabled"
)

// DeniesAsker reports whether c refuses who asks (the role matrix, a submitter's or an
// editor's gate) rather than the run's state: an input attempt so refused is audited
// "denied", not "failure".
func (c Code) DeniesAsker() bool {
	return c == CodeRunAccessDenied || c == CodeSubmitterNotPermitted || c == CodeEditNotPermitted
}

// Error is every failure an operation reports to its caller. It names the run and the
// reason, never arguments, submitted values or secrets. Fields and View are set for
// InvalidInputSubmission: the per-field errors, and the run as the input was checked against
// it (View.Pause.Form is the compiled schema), so a form page is shown without reading or
// compiling anything again. Decided is the decision that came first, when known: for
// RunAlreadyResuming, and for a stale turn of a run decided since (the latest decision).
// How each code is answered over HTTP (status, page flash, API message) is the refusal table
// of package handlers/refusal.
type Error struct {
	Code    Code
	RunUUID string
	Message string
	Fields  []schema.FieldError
	View    *RunView
	Decided *Decision
	// ExpiredAt and Expiry are set for RunExpired: when the pause expired and what its
	// expiry did (deny, answer, cancel).
	ExpiredAt int64
	Expiry    string
	Err       error
	// CallID is the pending call an EditNotPermitted or InvalidEdit refers to; Fields then
	// point into that call's arguments ("" for the patch as a whole).
	CallID string
	// GateDenial is the governance row of a decider the tool gate refused, which the
	// decision pipeline writes once the refusal stands.
	GateDenial *GovernanceEvent
	// Changes are, for ToolChanged, how the current definitions differ from those the
	// decision was bound to.
	Changes []DefinitionChange
	// Holder is, for AlreadyAssigned, the username of the person who holds the run.
	Holder string
}

func (e *Error) Error() string {
	if e.RunUUID == "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("run %s: %s: %s", e.RunUUID, e.Code, e.Message)
}

// Unwrap returns the underlying cause, if any (a store error, for example).
func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error with the same Code, so errors.Is(err, ErrRunAlreadyResuming) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.RunUUID == "" && t.Message == ""
}

// Sentinels for errors.Is; compare by code only.
var (
	ErrRunNotFound            = &Error{Code: CodeRunNotFound}
	ErrRunNotAwaitingApproval = &Error{Code: CodeRunNotAwaitingApproval}
	ErrRunNotAwaitingInput    = &Error{Code: CodeRunNotAwaitingInput}
	ErrRunAccessDenied        = &Error{Code: CodeRunAccessDenied}
	ErrRunConfigurationGone   = &Error{Code: CodeRunConfigurationGone}
	ErrSelfApprovalDenied     = &Error{Code: CodeSelfApprovalDenied}
	ErrCorruptSuspendedState  = &Error{Code: CodeCorruptSuspendedState}
	ErrRunStateUnavailable    = &Error{Code: CodeRunStateUnavailable}
	ErrRunAlreadyResuming     = &Error{Code: CodeRunAlreadyResuming}
	ErrInvalidInputSubmission = &Error{Code: CodeInvalidInputSubmission}
	ErrStaleApprovalTurn      = &Error{Code: CodeStaleApprovalTurn}
	ErrStaleInputTurn         = &Error{Code: CodeStaleInputTurn}
	ErrApproverNotPermitted   = &Error{Code: CodeApproverNotPermitted}
	ErrSubmitterNotPermitted  = &Error{Code: CodeSubmitterNotPermitted}
	ErrApprovalNotAuditable   = &Error{Code: CodeApprovalNotAuditable}
	ErrRunNotCancellable      = &Error{Code: CodeRunNotCancellable}
	ErrConfigurationNotFound  = &Error{Code: CodeConfigurationNotFound}
	ErrInvalidRequest         = &Error{Code: CodeInvalidRequest}
	ErrToolChanged            = &Error{Code: CodeToolChanged}
	ErrElicitationExpired     = &Error{Code: CodeElicitationExpired}
	ErrEditNotPermitted       = &Error{Code: CodeEditNotPermitted}
	ErrInvalidEdit            = &Error{Code: CodeInvalidEdit}
	ErrRunExpired             = &Error{Code: CodeRunExpired}
	ErrSealingKeyMissing      = &Error{Code: CodeSealingKeyMissing}
)

// Unavailable reports whether err is a store that did not answer in time: the request's
// deadline passed while a store call waited, or a connection to the database timed out. Such a
// request is answered 503 with Retry-After (the store is unavailable, nothing was refused).
func Unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout()
}

// ErrEventNotRecorded is wrapped by a Store when ClaimForResume failed because its event
// could not be written (the whole claim was rolled back).
var ErrEventNotRecorded = errors.New("event not recorded")
