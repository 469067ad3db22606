package views

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"
)

// BenchmarkInboxPage renders an inbox page of 25 rows, as the inbox bench's first page.
func BenchmarkInboxPage(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	in := Inbox{Now: now, ApprovalCount: 500, InputCount: 500, AllURL: "/runs", ApprovalURL: "/runs?kind=approval",
		InputURL: "/runs?kind=input", NextURL: "/runs?after=1", Ages: []Option{{Value: "1h", Label: "1 hour"}, {Value: "1d", Label: "1 day"}},
		Configurations: []Option{{Value: "refunds", Label: "Refunds"}, {Value: "support", Label: "Support"}},
		Tools:          []Option{{Value: "ask_refund_amount", Label: "ask_refund_amount"}, {Value: "send_email", Label: "send_email"}}}
	for i := range 25 {
		st := "waiting_for_approval"
		if i%2 == 0 {
			st = "waiting_for_input"
		}
		in.Rows = append(in.Rows, InboxRow{RunUUID: "0b6f3a1e-2c4d-4e5f-8a9b-" + strconv.Itoa(100000000000+i), Status: st,
			Configuration: "Refunds", Tools: []string{"ask_refund_amount"}, StartedBy: "bench-admin",
			Since: now.Add(-time.Duration(i) * time.Hour)})
	}
	p := Page{Title: "Inbox", User: &User{Name: "bench-admin", Role: "admin"}, CSRF: "csrf-token"}
	b.ReportAllocs()
	for b.Loop() {
		if err := InboxPage(p, in).Render(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
