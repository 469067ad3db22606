package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// scriptDone is the content of every turn past the end of a script.
const scriptDone = "Done."

// scripted replays a fixed list of assistant turns.
type scripted struct {
	turns []Message
}

// NewScripted builds a provider that answers with script[n], where n is the number of assistant
// messages already in the request, so a run resumed after a restart continues where it was.
// Tool call n.i gets the ID "call_<n>_<i>" and type "function". Arguments that are a JSON
// string are used verbatim as the arguments text (so a script can produce malformed
// arguments); any other JSON value is re-encoded compactly; absent arguments are "{}". Past the
// end of the script the answer is "Done." without tool calls. A call without a name, or
// arguments that are not JSON, is refused, with every such problem reported. Usage is a
// deterministic estimate of about four characters per token, never zero.
func NewScripted(script []Turn) (Provider, error) {
	s := &scripted{turns: make([]Message, len(script))}
	var errs []error
	for n, turn := range script {
		msg := Message{Role: "assistant", Content: turn.Content}
		for i, c := range turn.ToolCalls {
			if c.Name == "" {
				errs = append(errs, fmt.Errorf("model: script turn %d call %d: the tool name is empty: %w", n, i, ErrInvalidSettings))
			}
			args, err := scriptedArguments(c.Arguments)
			if err != nil {
				errs = append(errs, fmt.Errorf("model: script turn %d call %d (%s): %w", n, i, c.Name, err))
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{
				ID:       fmt.Sprintf("call_%d_%d", n, i),
				Type:     "function",
				Function: FunctionCall{Name: c.Name, Arguments: args},
			})
		}
		s.turns[n] = msg
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// scriptedArguments is the arguments text of one scripted call.
func scriptedArguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", fmt.Errorf("arguments are not JSON: %w", ErrInvalidSettings)
	}
	return b.String(), nil
}

// Complete returns the scripted turn for req; see NewScripted. It fails only when ctx is done.
func (s *scripted) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("model: request abandoned: %w", err)
	}
	n := 0
	promptChars := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
		promptChars += messageChars(m)
	}
	msg := Message{Role: "assistant", Content: scriptDone}
	if n < len(s.turns) {
		msg = s.turns[n]
		msg.ToolCalls = append([]ToolCall(nil), msg.ToolCalls...)
	}
	finish := "stop"
	if len(msg.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	usage := Usage{PromptTokens: estimateTokens(promptChars), CompletionTokens: estimateTokens(messageChars(msg))}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	return Response{Message: msg, FinishReason: finish, Usage: usage}, nil
}

// messageChars is the length of the text of m that a model would read.
func messageChars(m Message) int {
	n := len(m.Content)
	for _, c := range m.ToolCalls {
		n += len(c.Function.Name) + len(c.Function.Arguments)
	}
	return n
}

// estimateTokens approximates a token count from a character count.
func estimateTokens(chars int) int64 {
	return int64(1 + chars/4)
}
