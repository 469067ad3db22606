package demo

import (
	"context"
	"encoding/json"
	"fmt"

	"runsdesk/runtime/tool"
)

// issueRefund pays money back. It declares a non-idempotent write (so every call needs
// approval, and a crash while it runs is dead-lettered, never retried), is admin-only and
// editable (an admin may change the arguments when approving).
type issueRefund struct{ book *book }

type refundArgs struct {
	OrderID string  `json:"order_id"`
	Amount  float64 `json:"amount"`
	Method  string  `json:"refund_method"`
}

// Name is "issue_refund".
func (t *issueRefund) Name() string { return "issue_refund" }

// Description tells the model what the tool does.
func (t *issueRefund) Description() string {
	return "Issue a refund for an order. Money leaves the company: a person approves every call."
}

// Parameters asks for the order, the amount and optionally the method.
func (t *issueRefund) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","required":["order_id","amount"],"properties":{` +
		`"order_id":{"type":"string"},"amount":{"type":"number","exclusiveMinimum":0},` +
		`"refund_method":{"type":"string","title":"Refund method","oneOf":[{"const":"original_payment","title":"Back to the original payment"},` +
		`{"const":"store_credit","title":"Store credit"},{"const":"bank_transfer","title":"Bank transfer"}]}}}`)
}

// Effect declares a non-idempotent write.
func (t *issueRefund) Effect() tool.Effect { return tool.EffectNonIdempotentWrite }

// AdminOnly reports that only admins may approve a refund.
func (t *issueRefund) AdminOnly() bool { return true }

// Editable lets an admin fix the amount or method instead of denying the refund.
func (t *issueRefund) Editable() bool { return true }

// Preview describes the refund the call would issue.
func (t *issueRefund) Preview(_ context.Context, call tool.Call) ([]string, error) {
	var args refundArgs
	if err := decodeArgs(call, &args); err != nil {
		return nil, err
	}
	o, err := t.book.find(args.OrderID)
	if err != nil {
		return nil, err
	}
	method := args.Method
	if method == "" {
		method = "original_payment"
	}
	return []string{
		fmt.Sprintf("Refund %s of order %s to %s (%s).", euros(args.Amount), o.ID, o.Customer, method),
		fmt.Sprintf("The order totals %s, placed %s, status %s.", euros(o.Total), o.Placed, o.Status),
	}, nil
}

// Execute records the refund and returns its reference; an amount above the order total is
// a tool error.
func (t *issueRefund) Execute(_ context.Context, call tool.Call) (tool.Result, error) {
	var args refundArgs
	if err := decodeArgs(call, &args); err != nil {
		return failed("%v", err), nil
	}
	o, err := t.book.find(args.OrderID)
	if err != nil {
		return failed("%v", err), nil
	}
	if args.Amount <= 0 || args.Amount > o.Total {
		return failed("the amount must be above 0 and at most the order total of %s", euros(o.Total)), nil
	}
	ref := t.book.refund(o.ID)
	return refundResult(args, ref, fmt.Sprintf("Refund %s of %s issued for order %s.", ref, euros(args.Amount), o.ID)), nil
}

// refundResult is the JSON result of a refund's step, so a scripted model goes on with the
// values the tool was given (a person's input, an admin's edit): the order, the amount (and
// as text), the method and its words for the customer, the refund's reference once issued
// ("" before), and message, what happened.
func refundResult(args refundArgs, ref, message string) tool.Result {
	method := args.Method
	if method == "" {
		method = "original_payment"
	}
	how := map[string]string{"original_payment": "to your original payment method", "store_credit": "as store credit",
		"bank_transfer": "by bank transfer"}[method]
	b, err := json.Marshal(map[string]any{
		"order_id": args.OrderID, "amount": args.Amount, "amount_text": euros(args.Amount), "refund_method": method,
		"refund": ref, "customer_message": "we are refunding " + euros(args.Amount) + " " + how + ".", "message": message,
	})
	if err != nil {
		return failed("%v", err)
	}
	return tool.Result{Content: string(b)}
}
