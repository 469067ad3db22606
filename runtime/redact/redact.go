// Package redact masks the secret shapes in a text and caps its length at MaxChars characters:
// API keys and tokens (OpenAI and Anthropic sk-, GitHub, AWS access key ids, Slack), JWTs,
// Bearer and Authorization credentials, passwords in URLs, values assigned to keys that name a
// secret (password, token, api_key, …) and e-mail addresses.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxChars is the cap, in characters (runes), of a text returned by Text.
const MaxChars = 2000

const maxPasses = 4

type rule struct {
	re      *regexp.Regexp
	repl    string
	hints   []string
	bounded bool
}

const (
	secretKey   = `(?i)((?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|token|client[_-]?secret|private[_-]?key|secret[_-]?(?:access[_-]?)?key)`
	escapedBody = `(?:[^"\\]|\\\\\\\\|\\\\\\"|\\[^"])*`
)

var keyHints = []string{"pass", "pwd", "secret", "key", "token"}

var rules = [...]rule{
	{re: regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#"'<>\\]*:[^\s/?#"'<>\\]*@`), repl: "${1}[redacted]@", hints: []string{"://"}},
	{re: regexp.MustCompile(`(?i)(authorization(?:\\?"[ \t]*:[ \t]*\\?"|'?[ \t]*[:=][ \t]*(?:\\?["'])?)(?:(?:bearer|basic|token)[ \t]+)?)(?:\[redacted\]|[^\s"'\\,;:<>(){}\[\]]+)`), repl: "${1}[redacted]", hints: []string{"authorization"}},
	{re: regexp.MustCompile(`(?i)(bearer[ \t]+)(?:[A-Za-z0-9._~+/=-]*(?:[0-9_~+/=-]|\.[A-Za-z0-9_~+/=-])[A-Za-z0-9._~+/=-]*|[A-Za-z]{20,})`), repl: "${1}[redacted]", hints: []string{"bearer"}},
	{re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`), repl: "[redacted]", hints: []string{"sk-"}, bounded: true},
	{re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}`), repl: "[redacted]", hints: []string{"gh"}},
	{re: regexp.MustCompile(`A[KS]IA[0-9A-Z]{16}`), repl: "[redacted]", hints: []string{"akia", "asia"}, bounded: true},
	{re: regexp.MustCompile(`xox[abposr]-[0-9]+-[A-Za-z0-9-]+`), repl: "[redacted]", hints: []string{"xox"}},
	{re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), repl: "[redacted]", hints: []string{"eyj"}, bounded: true},
	{re: regexp.MustCompile(secretKey + `"\s*:\s*")(?:[^"\\]|\\.)*(")`), repl: "${1}[redacted]${2}", hints: keyHints},
	{re: regexp.MustCompile(secretKey + `\\"[ \t]*:[ \t]*\\")` + escapedBody + `(\\")`), repl: "${1}[redacted]${2}", hints: keyHints},
	{re: regexp.MustCompile(secretKey + `'?[ \t]*(?::=|=>|[:=])[ \t]*)` +
		`(?:(\\")` + escapedBody + `(\\")` +
		`|(")(?:[ \t]*(?:[^"\\\s,:}\]]|\\.)(?:[^"\\\n]|\\.)*)?(")` +
		`|(')[^'"\n]*(')` +
		`|[^\s"'\\,;&<>(){}\[\]]+)`), repl: "${1}${2}${4}${6}[redacted]${3}${5}${7}", hints: keyHints},
	{re: regexp.MustCompile(`(?:(\\(?:u[0-9A-Fa-f]{4}|[^u]))[A-Za-z0-9._%+-]*|[A-Za-z0-9._%+-]+)@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), repl: "${1}[email]", hints: []string{"@"}},
}

// Text is s with every secret shape masked ("[redacted]", e-mail addresses "[email]"), then
// cut to MaxChars runes ending in "…" if longer. Invalid UTF-8 is replaced by U+FFFD first.
func Text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for range maxPasses {
		next := mask(s)
		if next == s {
			break
		}
		s = next
	}
	return capped(s)
}

func mask(s string) string {
	lower := strings.ToLower(s)
	for _, r := range rules {
		if !slices.ContainsFunc(r.hints, func(h string) bool { return strings.Contains(lower, h) }) {
			continue
		}
		if r.bounded {
			s = r.replaceBounded(s)
		} else if r.re.MatchString(s) {
			s = r.re.ReplaceAllString(s, r.repl)
		}
	}
	return s
}

func (r rule) replaceBounded(s string) string {
	var b strings.Builder
	last := 0
	for pos := 0; pos < len(s); {
		loc := r.re.FindStringIndex(s[pos:])
		if loc == nil {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		if afterWord(s, start) {
			pos = start + 1
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(r.repl)
		last, pos = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func afterWord(s string, i int) bool {
	if i == 0 || !isAlnum(s[i-1]) {
		return false
	}
	return i < 2 || s[i-2] != '\\' || '0' <= s[i-1] && s[i-1] <= '9'
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func capped(s string) string {
	if utf8.RuneCountInString(s) <= MaxChars {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxChars-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
