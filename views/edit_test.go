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
