package views

import (
	"strings"
	"testing"
)

// TestModelWordsHead: the first ModelWordsLines lines show, the rest is collapsed; one long
// line is cut at a space (never inside a character) within the bound; nothing is lost.
func TestModelWordsHead(t *testing.T) {
	long := strings.Repeat("wörd ", 120)
	cases := []struct {
		name, text, head string
		collapsed        bool
	}{
		{"short", "Refund it.", "Refund it.", false},
		{"four lines", "a\nb\nc\nd\n", "a\nb\nc\nd", false},
		{"five lines", "a\nb\nc\nd\ne", "a\nb\nc\nd", true},
		{"one long line", long, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head, rest := ModelWords{Text: c.text}.head()
			if c.head != "" && head != c.head {
				t.Errorf("head %q, want %q", head, c.head)
			}
			if (rest != "") != c.collapsed {
				t.Errorf("rest %q, collapsed want %v", rest, c.collapsed)
			}
			if len(head) > maxModelWordsHead || !strings.HasPrefix(strings.TrimSpace(c.text), head) {
				t.Errorf("head %q is not a bounded prefix", head)
			}
			if flat := func(s string) string { return strings.ReplaceAll(s, "\n", "") }; flat(head+rest) != flat(strings.TrimSpace(c.text)) {
				t.Errorf("text lost: head %q rest %q", head, rest)
			}
		})
	}
}

// TestRunCallsSection: the run page lists each call with its proposed, approved and effective
// arguments apart, saying so in words where a call has none (no approval, not executed), and
// an edited call with who edited it and the change table.
func TestRunCallsSection(t *testing.T) {
	r := RunView{Summary: RunSummary{UUID: cardUUID, Status: "completed"}, Calls: []CallView{
		{CallID: "call_0_0", Tool: "refund", Executed: true, EditedBy: "rita", Proposed: `{"amount": 100}`, Approved: `{"amount": 40}`,
			Effective: `{"amount": 40}`, Rows: []ChangeRow{{Path: "/amount", Change: "changed", Before: "100", After: "40"}}},
		{CallID: "call_1_0", Tool: "lookup", Executed: true, Proposed: `{"q": "x"}`, Effective: `{"q": "x"}`},
		{CallID: "call_2_0", Tool: "refund", EditedBy: "rita", Proposed: `{"amount": 5}`, Approved: `{"amount": 6}`},
	}}
	doc := render(t, RunPage(Page{Title: "Run"}, r))
	cards := doc.Find(`[data-testid="run-call"]`)
	if cards.Length() != 3 {
		t.Fatalf("%d call cards, want 3", cards.Length())
	}
	text := func(i int, id string) string {
		return strings.TrimSpace(cards.Eq(i).Find(`[data-testid="` + id + `"]`).Text())
	}
	for _, c := range []struct {
		card     int
		id, want string
	}{
		{0, "call-proposed", `{"amount": 100}`}, {0, "call-approved", `{"amount": 40}`}, {0, "call-effective", `{"amount": 40}`},
		{1, "call-approved", "No approval decided this call."}, {1, "call-effective", `{"q": "x"}`},
		{2, "call-effective", "Not executed."},
	} {
		if got := text(c.card, c.id); got != c.want {
			t.Errorf("card %d %s = %q, want %q", c.card, c.id, got, c.want)
		}
	}
	if !strings.Contains(cards.Eq(0).Text(), "call call_0_0, edited by rita") || cards.Eq(0).Find(`[data-testid="change-table"]`).Length() != 1 ||
		cards.Eq(1).Find(`[data-testid="change-table"]`).Length() != 0 || strings.Contains(cards.Eq(1).Text(), "edited by") {
		t.Errorf("who edited: %q / %q", cards.Eq(0).Text(), cards.Eq(1).Text())
	}
}
