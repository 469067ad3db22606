package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"runsdesk/seal"

	"runsdesk/runtime/model"
)

// ArgumentsNotObject is the ArgumentsError of a call whose arguments are not a JSON object.
const ArgumentsNotObject = "not a JSON object"

// PendingCall is one call of the paused assistant turn, with its arguments decoded to a JSON
// object. ArgumentsError is set (and Arguments is {}) when the model's arguments were refused:
// larger than the tool's bound, not one JSON object (ArgumentsNotObject), or read strictly a
// key given twice ("duplicate key amount") or text that is not UTF-8; such a call is answered
// with a tool error, never executed.
type PendingCall struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Function       PendingFunction `json:"function"`
	ArgumentsError string          `json:"argumentsError,omitempty"`
	// ModelArguments are the model's arguments when an edit-and-approve on a turn that needs
	// several approvals replaced Function.Arguments by the editor's (PauseState.Edit); nil
	// when the call is as the model proposed it.
	ModelArguments json.RawMessage `json:"modelArguments,omitempty"`
}

// Proposed is the call's arguments as the model gave them: ModelArguments when an edit
// replaced them, else Function.Arguments.
func (c PendingCall) Proposed() json.RawMessage {
	if c.ModelArguments != nil {
		return c.ModelArguments
	}
	return c.Function.Arguments
}

// PendingFunction names the tool and carries the model's arguments.
type PendingFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallPreview is what a tool said a pending call would do, captured when the run paused.
// Index is the call's position in PendingCalls.
type CallPreview struct {
	Index  int      `json:"index"`
	Tool   string   `json:"tool"`
	Lines  []string `json:"lines"`
	Failed bool     `json:"failed"`
}

// SuspendedState is the sealed state of a paused run (suspended_state): the transcript up to
// and including the assistant turn, and the PauseState: the whole pending turn, the loop's
// counters, and for an input pause the target tool and its schema. InputToolName non-empty ⇔
// input pause. Encoded, the PauseState's fields stand beside "messages" in one object.
type SuspendedState struct {
	Messages []model.Message `json:"messages"`
	PauseState
}

// IsInputPause reports whether the state describes a pause for typed input.
func (s PauseState) IsInputPause() bool {
	return s.InputToolName != nil && *s.InputToolName != ""
}

// InputTool returns the input pause's target tool name, or "".
func (s PauseState) InputTool() string {
	if s.InputToolName == nil {
		return ""
	}
	return *s.InputToolName
}

// errCorruptState is wrapped by every state decoding failure.
var errCorruptState = errors.New("suspended state is corrupt")

// unopened refuses a state the store left sealed because it does not open: sealed with a key
// that is missing (or does not open it) when it names one, else corrupt.
func unopened(raw string) error {
	if id := UnopenedKey(raw); id != "" {
		return sealingKeyMissing{id: id}
	}
	if strings.HasPrefix(raw, seal.Prefix) {
		return fmt.Errorf("%w: sealed, and its envelope is malformed", errCorruptState)
	}
	return nil
}

// UnopenedKey is the key id of the first of values the store left sealed (an envelope it could
// not open), "" when none is.
func UnopenedKey(values ...string) string {
	for _, v := range values {
		if id := seal.KeyID(v); id != "" {
			return id
		}
	}
	return ""
}

// sealingKeyMissing is a stored value sealed with key id, which is missing from the key set
// or does not open it.
type sealingKeyMissing struct{ id string }

func (e sealingKeyMissing) Error() string {
	return fmt.Sprintf("sealed with key %q, which is missing from the key set or does not open it", e.id)
}

// SealingKeyMissing is the *Error of run uuid's value sealed with key id, which the store's
// key set lacks (or which does not open it): never reported as corrupt state. MissingSealingKey
// reads id back from it.
func SealingKeyMissing(uuid, id string) *Error {
	return &Error{Code: CodeSealingKeyMissing, RunUUID: uuid, Err: sealingKeyMissing{id: id},
		Message: fmt.Sprintf("stored data is sealed with key %q, which is missing from the key set", id)}
}

// MissingSealingKey is the key id err reports a value sealed with and not opened, if any.
func MissingSealingKey(err error) (string, bool) {
	var e sealingKeyMissing
	if errors.As(err, &e) {
		return e.id, true
	}
	return "", false
}

// DecodeState parses a stored suspended_state. It refuses, rather than repairs, anything
// malformed: not a JSON object, no pending calls, a pending call without id or tool name,
// arguments that are not an object, or a preview pointing at no call.
func DecodeState(raw string) (SuspendedState, error) {
	var s SuspendedState
	if raw == "" {
		return s, fmt.Errorf("%w: empty", errCorruptState)
	}
	if err := unopened(raw); err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return SuspendedState{}, fmt.Errorf("%w: %v", errCorruptState, err)
	}
	if err := s.check(); err != nil {
		return SuspendedState{}, err
	}
	s.ModelText = modelText(s.Messages)
	return s, nil
}

// modelText is the text of the last assistant message of msgs: what the model wrote beside
// the calls of the paused turn.
func modelText(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return msgs[i].Content
		}
	}
	return ""
}

// PauseState is a suspended state without its transcript: what a list card reads of it (see
// DecodePause) and what the pause is checked by.
type PauseState struct {
	PendingCalls     []PendingCall   `json:"pendingCalls"`
	Iterations       int             `json:"iterations"`
	PromptTokens     int64           `json:"promptTokens"`
	CompletionTokens int64           `json:"completionTokens"`
	AllowedToolNames []string        `json:"allowedToolNames"`
	InputToolName    *string         `json:"inputToolName"`
	InputSchema      json.RawMessage `json:"inputSchema"`
	CallPreviews     []CallPreview   `json:"callPreviews"`
	// Definitions pins the pending calls' tools and the decision policy as they were when the
	// run paused; nil in a pause stored before pins existed (it counts as changed).
	Definitions *DefinitionPin `json:"definitions,omitempty"`
	// EstimatedCost is the run's cost so far (Pricing), carried across pauses like the token
	// counters.
	EstimatedCost float64 `json:"estimatedCost,omitempty"`
	// GuardrailApprovals are the calls a guardrail asked a person to approve, with its reason.
	GuardrailApprovals []GuardrailApproval `json:"guardrailApprovals,omitempty"`
	// Elicitation is set on an input pause a remote server asked for in the middle of a call.
	Elicitation *ElicitationPause `json:"elicitation,omitempty"`
	// ModelText is the text of the paused turn's assistant message, set by DecodeState (a
	// view of the transcript, never stored on its own).
	ModelText string `json:"-"`
	// Edit is set when an edit-and-approve on a turn that needs several approvals made the
	// edited calls the pending turn (their ModelArguments keep the model's): the latest edit.
	Edit *PauseEdit `json:"edit,omitempty"`
}

// PauseEdit is the latest edit-and-approve that rewrote a pause's pending turn: who edited
// (By, ByName), when (At, unix seconds), the patch digest the editor bound to, and the
// pointers it changed (/<call id>/<path>).
type PauseEdit struct {
	By           int64    `json:"by"`
	ByName       string   `json:"byName"`
	At           int64    `json:"at"`
	PatchDigest  string   `json:"patchDigest"`
	ChangedPaths []string `json:"changedPaths"`
}

// GuardrailApproval is a pending call (Index into PendingCalls, its Tool) that Guardrail asked
// a person to approve, and the guardrail's Reason, shown on the approval card.
type GuardrailApproval struct {
	Index     int    `json:"index"`
	Tool      string `json:"tool"`
	Guardrail string `json:"guardrail"`
	Reason    string `json:"reason"`
}

// ElicitationPause is an input pause a remote (MCP) server asked for while its call (the one
// pending call) was under way: the server's request (RequestID, Message and the opaque
// RequestState, echoed byte for byte when answering), the arguments the call was made with,
// the turn's plan steps still to answer after it (Rest, as the engine encodes them), and when
// the request expires (ExpiresAt, unix seconds), after which it is answered cancel.
//
// Holder is set instead of RequestID for a request the server sent during the call
// (elicitation/create) that a process holds open while a person answers: the owner a
// decision claims the run for, so that process sends the answer on the open session.
type ElicitationPause struct {
	RequestID    string          `json:"requestId"`
	Message      string          `json:"message"`
	RequestState string          `json:"requestState"`
	Arguments    json.RawMessage `json:"arguments"`
	Rest         json.RawMessage `json:"rest,omitempty"`
	ExpiresAt    int64           `json:"expiresAt"`
	Holder       string          `json:"holder,omitempty"`
	// Approved marks a call an approval let run before its server asked for input: its
	// executed call's record keeps the approval (runtime.ExecutedCall.Approved).
	Approved bool `json:"approved,omitempty"`
	// Asked is how many requests for input the call has made so far (tool.Elicitation.Asked).
	Asked int `json:"asked,omitempty"`
}

// Held reports whether the request is held open in-session by a process (Holder).
func (e *ElicitationPause) Held() bool { return e != nil && e.Holder != "" }

// check refuses a pause without pending calls, a pending call without id or tool name or
// with arguments that are not an object, a preview pointing at no call, and negative counters.
func (p PauseState) check() error {
	if len(p.PendingCalls) == 0 {
		return fmt.Errorf("%w: no pending calls", errCorruptState)
	}
	for i, c := range p.PendingCalls {
		if c.ID == "" || c.Function.Name == "" {
			return fmt.Errorf("%w: pending call %d has no id or tool name", errCorruptState, i)
		}
		if !isJSONObject(c.Function.Arguments) || c.ModelArguments != nil && !isJSONObject(c.ModelArguments) {
			return fmt.Errorf("%w: pending call %d arguments are not an object", errCorruptState, i)
		}
	}
	for _, pv := range p.CallPreviews {
		if pv.Index < 0 || pv.Index >= len(p.PendingCalls) {
			return fmt.Errorf("%w: preview for missing call %d", errCorruptState, pv.Index)
		}
	}
	for _, g := range p.GuardrailApprovals {
		if g.Index < 0 || g.Index >= len(p.PendingCalls) {
			return fmt.Errorf("%w: guardrail approval for missing call %d", errCorruptState, g.Index)
		}
	}
	if p.Iterations < 0 || p.PromptTokens < 0 || p.CompletionTokens < 0 || p.EstimatedCost < 0 {
		return fmt.Errorf("%w: negative counters", errCorruptState)
	}
	if e := p.Elicitation; e != nil {
		switch {
		case !p.IsInputPause() || len(p.PendingCalls) != 1 || p.PendingCalls[0].Function.Name != p.InputTool():
			return fmt.Errorf("%w: an elicitation pause must wait for input on its one pending call", errCorruptState)
		case (e.RequestID == "") == (e.Holder == "") || e.ExpiresAt <= 0 || !isJSONObject(e.Arguments):
			return fmt.Errorf("%w: elicitation without request id or holder, expiry or arguments", errCorruptState)
		case e.Asked < 0:
			return fmt.Errorf("%w: negative counters", errCorruptState)
		}
	}
	return nil
}

// DecodeProgress parses a checkpoint's suspended_state: the transcript and counters of a
// running segment (it has no pending calls; those are in the plan).
func DecodeProgress(raw string) (SuspendedState, error) {
	var s SuspendedState
	if err := decodeNumbers(raw, &s); err != nil {
		return SuspendedState{}, fmt.Errorf("%w: %v", errCorruptState, err)
	}
	if s.Iterations < 0 || s.PromptTokens < 0 || s.CompletionTokens < 0 || s.EstimatedCost < 0 {
		return SuspendedState{}, fmt.Errorf("%w: negative counters", errCorruptState)
	}
	return s, nil
}

// Encode serialises the state for storage.
func (s SuspendedState) Encode() (string, error) {
	if s.InputSchema == nil {
		s.InputSchema = json.RawMessage("[]")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode suspended state: %w", err)
	}
	return string(b), nil
}

// isJSONObject reports whether raw is valid JSON whose value is an object.
func isJSONObject(raw json.RawMessage) bool {
	start := bytes.TrimLeft(raw, " \t\r\n")
	return len(start) > 0 && start[0] == '{' && json.Valid(raw)
}

// ToolNames returns the distinct tool names of the pending calls, in order.
func (s PauseState) ToolNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range s.PendingCalls {
		if !seen[c.Function.Name] {
			seen[c.Function.Name] = true
			out = append(out, c.Function.Name)
		}
	}
	return out
}

// decodeNumbers decodes raw into v keeping numbers as json.Number (a stored state's
// arguments keep their exact digits).
func decodeNumbers(raw string, v any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
