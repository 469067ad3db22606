package model

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func demoScript() []Turn {
	return []Turn{
		{Content: "Let me look.", ToolCalls: []ScriptedCall{
			{Name: "lookup_order", Arguments: json.RawMessage(`{ "order_id" : "42" }`)},
			{Name: "ask_refund_amount", Arguments: json.RawMessage(`"{\"order_id\": broken"`)},
		}},
		{ToolCalls: []ScriptedCall{{Name: "issue_refund"}}},
		{Content: "Refunded."},
	}
}

func newTestScripted(t *testing.T, script []Turn) Provider {
	t.Helper()
	p, err := NewScripted(script)
	if err != nil {
		t.Fatalf("NewScripted: %v", err)
	}
	return p
}

// transcript is a conversation with n assistant turns.
func transcript(n int) Request {
	req := Request{Messages: []Message{{Role: "system", Content: "You help."}, {Role: "user", Content: "Refund 42."}}}
	for i := range n {
		req.Messages = append(req.Messages,
			Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "x", Type: "function", Function: FunctionCall{Name: "t", Arguments: "{}"}}}},
			Message{Role: "tool", ToolCallID: "x", Content: strings.Repeat("r", i)})
	}
	return req
}

func TestScriptedAnswersByAssistantCount(t *testing.T) {
	p := newTestScripted(t, demoScript())
	ctx := context.Background()

	r0, err := p.Complete(ctx, transcript(0))
	if err != nil {
		t.Fatal(err)
	}
	want0 := []ToolCall{
		{ID: "call_0_0", Type: "function", Function: FunctionCall{Name: "lookup_order", Arguments: `{"order_id":"42"}`}},
		{ID: "call_0_1", Type: "function", Function: FunctionCall{Name: "ask_refund_amount", Arguments: `{"order_id": broken`}},
	}
	if r0.Message.Role != "assistant" || r0.Message.Content != "Let me look." || r0.FinishReason != "tool_calls" || len(r0.Message.ToolCalls) != 2 {
		t.Fatalf("turn 0 = %+v", r0)
	}
	for i, c := range r0.Message.ToolCalls {
		if c != want0[i] {
			t.Errorf("turn 0 call %d = %+v, want %+v", i, c, want0[i])
		}
	}

	r1, err := p.Complete(ctx, transcript(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Message.ToolCalls) != 1 || r1.Message.ToolCalls[0] != (ToolCall{ID: "call_1_0", Type: "function", Function: FunctionCall{Name: "issue_refund", Arguments: "{}"}}) {
		t.Errorf("turn 1 = %+v", r1)
	}

	r2, err := p.Complete(ctx, transcript(2))
	if err != nil {
		t.Fatal(err)
	}
	if r2.Message.Content != "Refunded." || len(r2.Message.ToolCalls) != 0 || r2.FinishReason != "stop" {
		t.Errorf("turn 2 = %+v", r2)
	}
}

func TestScriptedPastTheEndSaysDone(t *testing.T) {
	for _, script := range [][]Turn{nil, demoScript()} {
		p := newTestScripted(t, script)
		resp, err := p.Complete(context.Background(), transcript(len(script)+2))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Role != "assistant" || resp.Message.Content != "Done." || len(resp.Message.ToolCalls) != 0 || resp.FinishReason != "stop" {
			t.Errorf("past the end of %d turns: %+v", len(script), resp)
		}
	}
}

func TestScriptedIsDeterministicAcrossInstances(t *testing.T) {
	req := transcript(1)
	a, err := newTestScripted(t, demoScript()).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newTestScripted(t, demoScript()).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("two instances differ:\n%s\n%s", ja, jb)
	}
}

func TestScriptedUsageIsNonZeroAndGrowsWithThePrompt(t *testing.T) {
	p := newTestScripted(t, []Turn{{Content: "a"}, {Content: "b"}, {Content: "c"}})
	short, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	u := short.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v", u)
	}
	long, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: strings.Repeat("word ", 100)}}})
	if err != nil {
		t.Fatal(err)
	}
	if long.Usage.PromptTokens <= u.PromptTokens {
		t.Errorf("prompt tokens %d for a long prompt, %d for a short one", long.Usage.PromptTokens, u.PromptTokens)
	}
}

func TestScriptedResponsesDoNotShareState(t *testing.T) {
	p := newTestScripted(t, demoScript())
	r, err := p.Complete(context.Background(), transcript(0))
	if err != nil {
		t.Fatal(err)
	}
	r.Message.ToolCalls[0].Function.Name = "mutated"
	again, err := p.Complete(context.Background(), transcript(0))
	if err != nil {
		t.Fatal(err)
	}
	if again.Message.ToolCalls[0].Function.Name != "lookup_order" {
		t.Error("a caller's change to a response leaked into the script")
	}
}

func TestScriptedRefusesBadScripts(t *testing.T) {
	_, err := NewScripted([]Turn{
		{ToolCalls: []ScriptedCall{{Name: "", Arguments: json.RawMessage(`{}`)}}},
		{ToolCalls: []ScriptedCall{{Name: "ok"}, {Name: "broken", Arguments: json.RawMessage(`{"a":`)}}},
	})
	if !errors.Is(err, ErrInvalidSettings) {
		t.Fatalf("error = %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "turn 0 call 0") || !strings.Contains(msg, "turn 1 call 1 (broken)") {
		t.Errorf("error %q does not report every problem", msg)
	}
}

func TestScriptedHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newTestScripted(t, demoScript()).Complete(ctx, transcript(0)); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v", err)
	}
}

// TestScriptedFillsEarlierResults: placeholders in a scripted turn take the values of the
// latest result of the tool they name: a whole argument keeps its type, text inside strings
// and the content its text; a missing value or a result that is not a JSON object is empty;
// argument order and malformed arguments stay as written.
func TestScriptedFillsEarlierResults(t *testing.T) {
	p := newTestScripted(t, []Turn{
		{ToolCalls: []ScriptedCall{{Name: "ask", Arguments: json.RawMessage(`{}`)}}},
		{Content: "Refunding {{ask.amount}} <EUR> by {{ask.method}}{{nope.x}}.", ToolCalls: []ScriptedCall{
			{Name: "refund", Arguments: json.RawMessage(`{"order":"A-1","amount":"{{ask.amount}}","note":"for {{ask.who.name}} & co","nested":["{{ask.ok}}",{"m":"{{plain.x}}"}],"gone":"{{ask.gone}}"}`)},
			{Name: "broken", Arguments: json.RawMessage(`"{\"x\": {{ask.amount}}"`)},
		}},
	})
	req := Request{Messages: []Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "a0", Function: FunctionCall{Name: "ask"}},
			{ID: "p0", Function: FunctionCall{Name: "plain"}}, {ID: "a1", Function: FunctionCall{Name: "ask"}}}},
		{Role: "tool", ToolCallID: "a0", Content: `{"amount":40,"method":"cash"}`},
		{Role: "tool", ToolCallID: "p0", Content: `not json`},
		{Role: "tool", ToolCallID: "a1", Content: `{"amount":42.50,"method":"store_credit","ok":true,"who":{"name":"Ada"}}`},
		{Role: "tool", ToolCallID: "zz", Content: `{"amount":1}`},
	}}
	r, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Refunding 42.50 <EUR> by store_credit."; r.Message.Content != want {
		t.Errorf("content %q, want %q", r.Message.Content, want)
	}
	if got, want := r.Message.ToolCalls[0].Function.Arguments, `{"order":"A-1","amount":42.50,"note":"for Ada & co","nested":[true,{"m":""}],"gone":""}`; got != want {
		t.Errorf("arguments\n%s\nwant\n%s", got, want)
	}
	if got := r.Message.ToolCalls[1].Function.Arguments; got != `{"x": {{ask.amount}}` {
		t.Errorf("malformed arguments changed: %s", got)
	}
	again, _ := p.Complete(context.Background(), req)
	if again.Message.ToolCalls[0] != r.Message.ToolCalls[0] {
		t.Error("the same transcript gave another turn")
	}
}
