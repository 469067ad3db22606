package seed

import (
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// syntheticSchema is a small but realistic input form.
const syntheticSchema = `{"type":"object","required":["amount","reason"],"properties":{` +
	`"amount":{"type":"number","title":"Amount (EUR)","minimum":0.01,"maximum":500},` +
	`"reason":{"type":"string","title":"Reason","minLength":10,"maxLength":2000},` +
	`"refund_method":{"type":"string","enum":["original_payment","store_credit","bank_transfer"]}}}`

// Synthetic returns one approval and one input pause on configuration (uid, identifier),
// each with a transcript of about transcriptBytes, valid for runtime.DecodeState. Tools named
// in them need not exist: the inbox lists such runs as pausing for an unknown tool.
func Synthetic(uid int64, identifier string, transcriptBytes int) ([]Template, error) {
	msgs := transcript(transcriptBytes)
	approval := runtime.SuspendedState{Messages: msgs, PauseState: runtime.PauseState{
		Iterations: 2, PromptTokens: 1800, CompletionTokens: 120,
		AllowedToolNames: []string{"lookup_order", "issue_refund", "ask_refund_amount"},
		PendingCalls: []runtime.PendingCall{{ID: "call_2_0", Type: "function", Function: runtime.PendingFunction{
			Name: "issue_refund", Arguments: json.RawMessage(`{"order_id":"A-1001","amount":25}`)}}},
		CallPreviews: []runtime.CallPreview{{Index: 0, Tool: "issue_refund", Lines: []string{"Refund 25.00 EUR on order A-1001"}}},
	}}
	input := approval
	tool := "ask_refund_amount"
	input.InputToolName = &tool
	input.InputSchema = json.RawMessage(syntheticSchema)
	input.PendingCalls = []runtime.PendingCall{{ID: "call_1_0", Type: "function", Function: runtime.PendingFunction{
		Name: tool, Arguments: json.RawMessage(`{"order_id":"A-1001"}`)}}}
	input.CallPreviews = nil
	out := make([]Template, 0, 2)
	for _, p := range []struct {
		status string
		st     runtime.SuspendedState
	}{{StatusApproval, approval}, {StatusInput, input}} {
		raw, err := p.st.Encode()
		if err != nil {
			return nil, fmt.Errorf("seed: synthetic %s state: %w", p.status, err)
		}
		out = append(out, Template{Status: p.status, ConfigurationUID: uid, ConfigurationIdentifier: identifier,
			State: raw, Tools: []string{p.st.PendingCalls[0].Function.Name}})
	}
	return out, nil
}

func transcript(size int) []model.Message {
	line := "Order A-1001 arrived with a broken charger; the customer asks for a refund. "
	user := strings.Repeat(line, max(1, size/2/len(line)))
	return []model.Message{
		{Role: "system", Content: "You help support staff process refunds."},
		{Role: "user", Content: user},
		{Role: "assistant", Content: "Let me look the order up first.", ToolCalls: []model.ToolCall{{ID: "call_0_0",
			Type: "function", Function: model.FunctionCall{Name: "lookup_order", Arguments: `{"order_id":"A-1001"}`}}}},
		{Role: "tool", ToolCallID: "call_0_0", Content: strings.Repeat("Order A-1001: 1 charger, 39.90 EUR, delivered. ", max(1, size/2/48))},
	}
}
