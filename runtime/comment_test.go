package runtime_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"runsdesk/runtime"
)

// TestMentions: an @ at the start or after a character that cannot be part of a username
// mentions the username after it, lower-cased, once, less a sentence's final punctuation; an
// e-mail address and a lone @ mention nobody.
func TestMentions(t *testing.T) {
	for body, want := range map[string]string{
		"@ada please look":                   "[ada]",
		"ask @Rita.":                         "[rita]",
		"(@bob) and @bob again, @BOB!":       "[bob]",
		"mail ada@example.com":               "[]",
		"@ada@example.com can you":           "[ada@example.com]",
		"@ @ @- @.":                          "[]",
		"cc:@sam_1-x, @j.doe...":             "[sam_1-x j.doe]",
		"über@ada — ¿@rita?":                 "[rita]",
		"line one\n@ops-team\tand @dev_lead": "[ops-team dev_lead]",
		"":                                   "[]",
	} {
		if got := fmt.Sprint(runtime.Mentions(body)); got != want {
			t.Errorf("Mentions(%q) = %s, want %s", body, got, want)
		}
	}
}

// FuzzMentions: every mention is a non-empty lower-case username of the safe characters, not
// ending in . - or @, that the body holds right after an @, and none repeats.
func FuzzMentions(f *testing.F) {
	for _, s := range []string{"@ada", "a@b @c.", "@@x", "@é@ada", "x@y@z @Q-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		seen := map[string]bool{}
		lower := strings.ToLower(body)
		for _, m := range runtime.Mentions(body) {
			if m == "" || seen[m] || !utf8.ValidString(m) || strings.ToLower(m) != m ||
				strings.TrimRight(m, ".-@") != m || !strings.Contains(lower, "@"+m) {
				t.Fatalf("Mentions(%q) has %q", body, m)
			}
			for _, r := range m {
				if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@", r)) {
					t.Fatalf("Mentions(%q) has %q with %q", body, m, r)
				}
			}
			seen[m] = true
		}
	})
}
