// Package tool defines what a tool is to the agent runtime: a name, a description, a
// parameter schema and an Execute method, plus upstream's optional capabilities (approval,
// typed input, declared effect, admin-only, preview). It also holds the registry that refuses
// forbidden combinations and the HTTP tool built from data.
package tool

import (
	"context"
	"encoding/json"
	"time"

	"runsdesk/runtime/quorum"
	"runsdesk/runtime/wait"
)

// Effect is a tool's declared side effect (see the write fence in docs/state-machine.md).
type Effect string

// The three declared effects. An undeclared effect is EffectReadOnly; an unknown tool name is
// treated as EffectNonIdempotentWrite.
const (
	EffectReadOnly           Effect = "read_only"
	EffectIdempotentWrite    Effect = "idempotent_write"
	EffectNonIdempotentWrite Effect = "non_idempotent_write"
)

// IsWrite reports whether e declares a write (idempotent or not).
func (e Effect) IsWrite() bool {
	return e == EffectIdempotentWrite || e == EffectNonIdempotentWrite
}

// Call is one invocation of a tool chosen by the model (arguments possibly overlaid with a
// person's input).
type Call struct {
	RunUUID   string
	CallID    string
	Name      string
	Arguments json.RawMessage
	// Hold, when set, holds the call open while a person answers a request for input its
	// server sends during the call; nil: such a request is declined.
	Hold Holder
}

// Result is what the model sees of a tool's execution. IsError marks a tool error; the model
// is told, the run does not crash. Elicitation, when set, means the call is not finished: its
// server asks a person for typed input first (see Elicitor); Content is then empty.
type Result struct {
	Content     string
	IsError     bool
	Elicitation *Elicitation
}

// Elicitation is a remote server's request, in the middle of a call, for typed input from a
// person: Message says what for, Schema (a JSON Schema within the MCP elicitation subset) what
// to give. RequestID and State identify the request to the server; State is opaque and must
// be echoed byte for byte, once.
type Elicitation struct {
	RequestID string          `json:"requestId"`
	Message   string          `json:"message"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	State     string          `json:"requestState"`
	// Asked is how many requests for input the call has made, this one included; a call
	// may make MaxElicitationsPerCall.
	Asked int `json:"asked,omitempty"`
	// Timeout is how long the request may wait for a person (the server's
	// elicitation_timeout).
	Timeout time.Duration `json:"-"`
}

// The answers a person gives an elicitation, as MCP names them.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitationAnswer answers an Elicitation: Action is ElicitAccept (with Content, validated
// against the request's schema), ElicitDecline or ElicitCancel. Note, when set, is told to the
// model with the server's result (why the desk answered as it did); Failed reports the call
// to the model as a tool error whatever the server answers (nobody answered in time).
type ElicitationAnswer struct {
	Elicitation
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Note    string         `json:"note,omitempty"`
	Failed  bool           `json:"failed,omitempty"`
}

// Elicitor is implemented by a tool whose calls may ask for input (Result.Elicitation):
// Answer finishes call with the person's answer, and may ask again.
type Elicitor interface {
	Answer(ctx context.Context, call Call, answer ElicitationAnswer) (Result, error)
}

// Tool is a function the model may call.
type Tool interface {
	Name() string
	Description() string
	// Parameters is the JSON Schema of the arguments the model must produce.
	Parameters() json.RawMessage
	// Execute runs the tool. A returned error is turned into a tool error the model sees.
	Execute(ctx context.Context, call Call) (Result, error)
}

// ApprovalRequirer is implemented by a tool that declares whether a person must approve
// each call before it runs.
type ApprovalRequirer interface{ RequiresApproval() bool }

// InputRequirer is implemented by a tool that needs typed data from a person before it runs;
// InputSchema returns the JSON Schema of that data.
type InputRequirer interface{ InputSchema() json.RawMessage }

// EffectDeclarer is implemented by a tool that declares its side effect.
type EffectDeclarer interface{ Effect() Effect }

// AdminOnlyTool is implemented by a tool only admins may approve or submit input to.
type AdminOnlyTool interface{ AdminOnly() bool }

// Previewer is implemented by a tool that can describe what a call would do, in plain
// lines, without doing it.
type Previewer interface {
	Preview(ctx context.Context, call Call) ([]string, error)
}

// Waiter is implemented by a tool that declares a waiting policy for its own pauses.
type Waiter interface{ WaitPolicy() wait.Policy }

// Definition is a tool stored as data (tool definition table, `apply -f`).
type Definition struct {
	Name             string
	Description      string
	Parameters       json.RawMessage
	InputSchema      json.RawMessage // empty when the tool needs no input
	Effect           Effect          // "" = read_only
	AdminOnly        bool
	RequiresApproval bool
	Editable         bool // a reviewer may edit a call's arguments when approving it
	// MaxArgumentsBytes bounds the JSON arguments of one call, the model's and a reviewer's
	// edited ones (0 = DefaultMaxArgumentsBytes; at most MaxArgumentsBytesLimit).
	MaxArgumentsBytes int
	// Quorum is the tool's `approvals_required` and `allow_automatic_vote` (zero: the
	// configuration's).
	Quorum quorum.Policy
	HTTP   HTTPConfig
	// MCP is set for a remote tool: HTTP then reaches its MCP server (see NewMCP).
	MCP *MCPConfig
	// Wait is the tool's waiting policy for its own pauses (zero: none).
	Wait wait.Policy
}

// Declared reports whether def only declares what may be asked, with neither an HTTP endpoint
// nor an MCP server: nothing runs it, so only external configurations may offer it.
func (def Definition) Declared() bool {
	return def.MCP == nil && def.HTTP.URL == "" && len(def.HTTP.Headers) == 0 && def.HTTP.Timeout == 0 && def.HTTP.MaxResponseBytes == 0
}

// HTTPConfig is how an HTTP tool reaches its endpoint. Header values may reference
// environment variables as ${NAME}.
type HTTPConfig struct {
	URL              string
	Headers          map[string]string
	Timeout          time.Duration // 0 = 30s
	MaxResponseBytes int64         // 0 = 1 MiB
}
