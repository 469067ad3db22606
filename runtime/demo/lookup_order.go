package demo

import (
	"context"
	"encoding/json"

	"runsdesk/runtime/tool"
)

// lookupOrder reads an order from the book. It declares no effect (read only) and needs no
// decision.
type lookupOrder struct{ book *book }

// Name is "lookup_order".
func (t *lookupOrder) Name() string { return "lookup_order" }

// Description tells the model what the tool does.
func (t *lookupOrder) Description() string {
	return "Look an order up by its id: customer, items, total, status and support ticket."
}

// Parameters asks for the order id.
func (t *lookupOrder) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string","description":"Order id, like A-1001."}}}`)
}

// Effect declares the tool read only.
func (t *lookupOrder) Effect() tool.Effect { return tool.EffectReadOnly }

// Execute returns the order as JSON, or a tool error for an unknown order.
func (t *lookupOrder) Execute(_ context.Context, call tool.Call) (tool.Result, error) {
	var args struct {
		OrderID string `json:"order_id"`
	}
	if err := decodeArgs(call, &args); err != nil {
		return failed("%v", err), nil
	}
	o, err := t.book.find(args.OrderID)
	if err != nil {
		return failed("%v", err), nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return failed("the order could not be encoded"), nil
	}
	return tool.Result{Content: string(b)}, nil
}
