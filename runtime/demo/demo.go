// Package demo is the sample desk `runsdesk serve --demo` starts with: in-process tools over
// a small made-up order book (lookup_order, ask_refund_amount, issue_refund,
// send_customer_email, tag_ticket), an apply file whose scripted configurations call them so
// that runs pause for typed input and for approval, and the prompts of the runs a fresh desk
// starts. Nothing here leaves the process: refunds, emails and tags are only recorded in
// memory and described in the tool results.
package demo

import (
	_ "embed"
	"slices"

	"runsdesk/runtime/tool"
)

//go:embed desk.yaml
var deskYAML []byte

// Config returns the demo's apply file: configurations `refunds` and `customer-care`, both
// with the scripted provider, using the tools of Tools. The caller owns the returned slice.
func Config() []byte { return slices.Clone(deskYAML) }

// Tools returns a fresh set of the demo's in-process tools, sharing one order book; each call
// builds a new book, so two sets never see each other's refunds or tags.
func Tools() []tool.Tool {
	b := newBook()
	return []tool.Tool{
		&lookupOrder{book: b},
		&askRefundAmount{book: b},
		&issueRefund{book: b},
		&sendCustomerEmail{book: b},
		&tagTicket{book: b},
	}
}

// ServiceAccount is the service account that starts the demo runs: no person started them,
// so every role may act on them, four-eyes included.
const ServiceAccount = "demo"

// Run is a run the demo starts on a fresh desk: the configuration identifier and the prompt.
type Run struct {
	Configuration string
	Prompt        string
}

// Runs returns the runs a fresh demo desk starts (as ServiceAccount), so that its inbox shows
// runs waiting for input and runs waiting for approval. The prompts name the orders the
// scripts use.
func Runs() []Run {
	return []Run{
		{Configuration: "refunds", Prompt: "Order A-1001 arrived with a broken charger. Please refund the customer."},
		{Configuration: "refunds", Prompt: "Order A-1001: the customer sent the cable back as well. Refund it too."},
		{Configuration: "customer-care", Prompt: "Let the customer of order A-1003 know their parcel is delayed."},
		{Configuration: "customer-care", Prompt: "Order A-1003: the customer asked where the parcel is. Answer them."},
	}
}
