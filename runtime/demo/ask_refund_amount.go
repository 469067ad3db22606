package demo

import (
	"context"
	"encoding/json"
	"fmt"

	"runsdesk/runtime/tool"
)

// refundDetailsSchema is the form a person fills in for ask_refund_amount. It uses every
// widget the desk renders: text with minLength and pattern, a text area (maxLength over 200),
// number with minimum, maximum and step, integer, checkbox, select of a titled enum, date,
// date-time, time, email, URL, a nested object, an array of text, an array of enum values
// (checkboxes), rows (an array of objects), a JSON fallback (an object without properties),
// defaults, descriptions and required fields.
const refundDetailsSchema = `{
  "type": "object",
  "title": "Refund details",
  "required": ["amount", "reason", "refund_method", "customer_email"],
  "properties": {
    "amount": {"type": "number", "title": "Amount (EUR)", "description": "How much to pay back, in euros, cent by cent.", "minimum": 0.01, "maximum": 500, "multipleOf": 0.01, "default": 25},
    "reason": {"type": "string", "title": "Reason", "description": "Why the customer gets money back. The customer reads this.", "minLength": 10, "maxLength": 2000},
    "case_reference": {"type": "string", "title": "Case reference", "description": "CASE- and at least four digits.", "minLength": 9, "maxLength": 20, "pattern": "^CASE-[0-9]{4,}$"},
    "items_returned": {"type": "integer", "title": "Items returned", "minimum": 0, "maximum": 10, "default": 1},
    "refund_shipping": {"type": "boolean", "title": "Refund the shipping cost too", "default": false},
    "refund_method": {"type": "string", "title": "Refund method", "oneOf": [{"const": "original_payment", "title": "Back to the original payment"}, {"const": "store_credit", "title": "Store credit"}, {"const": "bank_transfer", "title": "Bank transfer"}], "default": "original_payment"},
    "value_date": {"type": "string", "format": "date", "title": "Value date", "description": "When the money should arrive."},
    "follow_up_at": {"type": "string", "format": "date-time", "title": "Follow up at"},
    "callback_time": {"type": "string", "format": "time", "title": "Preferred callback time"},
    "customer_email": {"type": "string", "format": "email", "title": "Customer email", "description": "Where the confirmation goes.", "default": "ada@example.com"},
    "evidence_url": {"type": "string", "format": "uri", "title": "Evidence link", "description": "A photo or document showing the damage."},
    "bank_account": {
      "type": "object",
      "title": "Bank account",
      "description": "Only for bank transfers.",
      "required": ["holder", "iban"],
      "properties": {
        "holder": {"type": "string", "title": "Account holder", "maxLength": 70},
        "iban": {"type": "string", "title": "IBAN", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$"}
      }
    },
    "notes_for_finance": {"type": "array", "title": "Notes for finance", "description": "One note per line.", "items": {"type": "string", "maxLength": 200}, "maxItems": 5},
    "affected_items": {"type": "array", "title": "Affected items", "items": {"type": "string", "enum": ["charger", "cable", "case", "manual"]}, "uniqueItems": true, "default": ["charger"]},
    "attachments": {"type": "array", "title": "Attachments", "description": "Photos or documents of the damage.", "maxItems": 5, "items": {"type": "object", "title": "Attachment", "required": ["name"], "properties": {"name": {"type": "string", "title": "File name"}, "url": {"type": "string", "format": "uri", "title": "Link"}}}},
    "finance_data": {"type": "object", "title": "Data for finance", "description": "Advanced: any JSON object, passed on as it is."}
  }
}`

// askRefundAmount asks a person for the refund details. It needs typed input (the run pauses
// with refundDetailsSchema until a person submits it) and declares no write, so it never needs
// approval.
type askRefundAmount struct{ book *book }

// Name is "ask_refund_amount".
func (t *askRefundAmount) Name() string { return "ask_refund_amount" }

// Description tells the model what the tool does.
func (t *askRefundAmount) Description() string {
	return "Ask a person how much to refund for an order, and how. The run waits for their answer."
}

// Parameters asks the model only for the order id; the details come from the person.
func (t *askRefundAmount) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","required":["order_id"],"properties":{"order_id":{"type":"string"}}}`)
}

// Effect declares the tool read only.
func (t *askRefundAmount) Effect() tool.Effect { return tool.EffectReadOnly }

// InputSchema is the form of the refund details.
func (t *askRefundAmount) InputSchema() json.RawMessage { return json.RawMessage(refundDetailsSchema) }

// Execute confirms the details the person gave (the order from the model, the rest from the
// person) as a JSON object, so the model can go on to issue the refund with them.
func (t *askRefundAmount) Execute(_ context.Context, call tool.Call) (tool.Result, error) {
	var args refundArgs
	if err := decodeArgs(call, &args); err != nil {
		return failed("%v", err), nil
	}
	o, err := t.book.find(args.OrderID)
	if err != nil {
		return failed("%v", err), nil
	}
	return refundResult(args, "", fmt.Sprintf("A person decided: refund %s for order %s by %s.", euros(args.Amount), o.ID, args.Method)), nil
}
