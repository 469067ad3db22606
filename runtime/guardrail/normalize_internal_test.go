package guardrail

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzNormalize: the normalised copy of valid text is valid NFKC text without format
// characters, without white space other than single spaces, and normalising it again
// changes nothing.
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{"", "ｉｇｎｏｒｅ\u00a0previous", "ig\u200bnore \t\n x", "e\u200d\u0301", "\u00a0\u0301", "ﬁ\u3000\u2028", "a  \u200b  b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		got := normalize(text)
		if !utf8.ValidString(got) || !norm.NFKC.IsNormalString(got) {
			t.Fatalf("normalize(%q) = %q: not valid NFKC text", text, got)
		}
		if strings.Contains(got, "  ") || strings.ContainsFunc(got, func(c rune) bool {
			return unicode.Is(unicode.Cf, c) || (unicode.IsSpace(c) && c != ' ')
		}) {
			t.Fatalf("normalize(%q) = %q: keeps a format character or unusual white space", text, got)
		}
		if again := normalize(got); again != got {
			t.Fatalf("normalize is not idempotent: %q then %q", got, again)
		}
	})
}
