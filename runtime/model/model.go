// Package model is the language-model side of a run: the chat message shapes (OpenAI
// chat-completions compatible), the Provider interface, and its two implementations,
// openai (any OpenAI-compatible /chat/completions endpoint) and scripted (a fixed list of
// assistant turns).
package model

import (
	"context"
	"encoding/json"
	"time"
)

// Message is one chat message in OpenAI's wire shape.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is one function call requested by the assistant; Arguments is the JSON text the
// model produced (possibly malformed).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as a JSON string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is a tool offered to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one completion request.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
}

// Usage is the token count of one completion.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
}

// Response is the assistant's reply.
type Response struct {
	Message      Message
	FinishReason string
	Usage        Usage
}

// Provider produces assistant turns. Implementations are safe for concurrent use.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Settings configure a provider (tx_nrllm_configuration provider columns, `apply -f`).
type Settings struct {
	Kind       string // "openai" or "scripted"
	BaseURL    string
	Model      string
	APIKeyEnv  string
	Timeout    time.Duration // 0 = 60s
	MaxRetries *int          // retries after a failed attempt; nil = DefaultMaxRetries, 0 = none
	Script     []Turn        // scripted only
}

// Turn is one scripted assistant turn.
type Turn struct {
	Content   string         `json:"content,omitempty" yaml:"content,omitempty"`
	ToolCalls []ScriptedCall `json:"tool_calls,omitempty" yaml:"tool_calls,omitempty"`
}

// ScriptedCall is a tool call in a scripted turn.
type ScriptedCall struct {
	Name      string          `json:"name" yaml:"name"`
	Arguments json.RawMessage `json:"arguments" yaml:"arguments"`
}
