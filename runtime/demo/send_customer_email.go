package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime/tool"
)

// sendCustomerEmail writes to a customer. It declares no effect but asks for approval of every
// call, and shows the message it would send as its preview.
type sendCustomerEmail struct{ book *book }

type emailArgs struct {
	OrderID string `json:"order_id"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// Name is "send_customer_email".
func (t *sendCustomerEmail) Name() string { return "send_customer_email" }

// Description tells the model what the tool does.
func (t *sendCustomerEmail) Description() string {
	return "Email the customer of an order. A person approves every message before it is sent."
}

// Parameters asks for the order, a subject and a body.
func (t *sendCustomerEmail) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","required":["order_id","subject","body"],"properties":{` +
		`"order_id":{"type":"string"},"subject":{"type":"string","maxLength":200},"body":{"type":"string","maxLength":5000}}}`)
}

// RequiresApproval reports that every call needs approval.
func (t *sendCustomerEmail) RequiresApproval() bool { return true }

// Preview shows the recipient, the subject and the body.
func (t *sendCustomerEmail) Preview(_ context.Context, call tool.Call) ([]string, error) {
	var args emailArgs
	if err := decodeArgs(call, &args); err != nil {
		return nil, err
	}
	o, err := t.book.find(args.OrderID)
	if err != nil {
		return nil, err
	}
	lines := []string{
		fmt.Sprintf("To: %s <%s>", o.Customer, o.Email),
		"Subject: " + args.Subject,
	}
	return append(lines, strings.Split(args.Body, "\n")...), nil
}

// Execute records the message as sent and returns its reference.
func (t *sendCustomerEmail) Execute(_ context.Context, call tool.Call) (tool.Result, error) {
	var args emailArgs
	if err := decodeArgs(call, &args); err != nil {
		return failed("%v", err), nil
	}
	o, err := t.book.find(args.OrderID)
	if err != nil {
		return failed("%v", err), nil
	}
	if strings.TrimSpace(args.Subject) == "" || strings.TrimSpace(args.Body) == "" {
		return failed("subject and body must not be empty"), nil
	}
	return text("Email %s sent to the customer of order %s.", t.book.email(), o.ID), nil
}
