package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"runsdesk/runtime/subject"
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
// end of the script the answer is "Done." without tool calls. A turn's content and the string
// values of its arguments may name earlier tool results, {{tool.field}} (see fillTurn), so
// the script goes on with what a person submitted or edited. A call without a name, or
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
		msg = fillTurn(s.turns[n], req.Messages)
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

// fillTurn is turn with its placeholders filled from the latest result of each tool in
// messages that is a JSON object: {{issue_refund.amount}} names the field amount of the last
// issue_refund result (nested by dots, runtime/subject). An argument string that is one
// placeholder takes the value as it is typed there (a number stays a number); placeholders
// inside text take its text; a missing value is empty. Arguments that are not JSON, or hold
// no placeholder, are left as written.
func fillTurn(turn Message, messages []Message) Message {
	turn.ToolCalls = append([]ToolCall(nil), turn.ToolCalls...)
	if !strings.Contains(turn.Content, "{{") && !slices.ContainsFunc(turn.ToolCalls, func(c ToolCall) bool {
		return strings.Contains(c.Function.Arguments, "{{")
	}) {
		return turn
	}
	results := toolResults(messages)
	turn.Content = fillText(turn.Content, results)
	for i, c := range turn.ToolCalls {
		if !strings.Contains(c.Function.Arguments, "{{") {
			continue
		}
		var b bytes.Buffer
		dec := json.NewDecoder(strings.NewReader(c.Function.Arguments))
		dec.UseNumber()
		if err := fillJSON(dec, &b, results); err == nil {
			turn.ToolCalls[i].Function.Arguments = b.String()
		}
	}
	return turn
}

// toolResults maps each tool name to its latest result in messages that is a JSON object.
func toolResults(messages []Message) map[string]any {
	names := map[string]string{}
	out := map[string]any{}
	for _, m := range messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
		}
		name, ok := names[m.ToolCallID]
		if m.Role != "tool" || !ok {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(m.Content))
		dec.UseNumber()
		var v map[string]any
		if dec.Decode(&v) == nil {
			out[name] = v
		}
	}
	return out
}

// fillText is s with its placeholders filled from results; s when it is no template.
func fillText(s string, results map[string]any) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	t, err := subject.Parse(s)
	if err != nil {
		return s
	}
	return t.Expand(results)
}

// fillJSON copies the JSON value read from dec to out, compactly, with the placeholders of
// its strings filled from results.
func fillJSON(dec *json.Decoder, out *bytes.Buffer, results map[string]any) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		out.WriteString(v.String())
		for first := true; dec.More(); first = false {
			if !first {
				out.WriteByte(',')
			}
			if v == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				writeJSON(out, key)
				out.WriteByte(':')
			}
			if err := fillJSON(dec, out, results); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		out.WriteString(end.(json.Delim).String())
	case string:
		if t, err := subject.Parse(v); err == nil && strings.Contains(v, "{{") {
			if typed, ok := t.Value(results); ok {
				writeJSON(out, typed)
				return nil
			}
			v = t.Expand(results)
		}
		writeJSON(out, v)
	default:
		writeJSON(out, v)
	}
	return nil
}

// writeJSON appends v's compact JSON to out, <, > and & as they are.
func writeJSON(out *bytes.Buffer, v any) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		out.WriteString("null")
		return
	}
	out.Truncate(out.Len() - 1)
}
