// Package redact masks the secret shapes in a text and caps its length at MaxChars characters:
// API keys and tokens (OpenAI and Anthropic sk-, GitHub, AWS access key ids, Slack), JWTs,
// Bearer and Authorization credentials, passwords in URLs, values assigned to keys that name a
// secret (password, token, api_key, …) and e-mail addresses.
package redact

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxChars is the cap, in characters (runes), of a text returned by Text.
const MaxChars = 2000

const maxPasses = 4

type rule struct {
	re   *regexp.Regexp
	repl string
}

const (
	notAfterWord = `(^|[^A-Za-z0-9]|\\[A-Za-z])`
	secretKey    = `(?i)([A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|token|client[_-]?secret|private[_-]?key)`
	escapedBody  = `(?:[^"\\]|\\\\\\\\|\\\\\\"|\\[^"])*`
)

var rules = [...]rule{
	{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#"'<>\\]*:[^\s/?#"'<>\\]*@`), "${1}[redacted]@"},
	{regexp.MustCompile(`(?i)(authorization(?:\\?"[ \t]*:[ \t]*\\?"|'?[ \t]*[:=][ \t]*(?:\\?["'])?)(?:(?:bearer|basic|token)[ \t]+)?)(?:\[redacted\]|[^\s"'\\,;:<>(){}\[\]]+)`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)(bearer[ \t]+)(?:[A-Za-z0-9._~+/=-]*(?:[0-9_~+/=-]|\.[A-Za-z0-9_~+/=-])[A-Za-z0-9._~+/=-]*|[A-Za-z]{20,})`), "${1}[redacted]"},
	{regexp.MustCompile(notAfterWord + `sk-[A-Za-z0-9_-]{20,}`), "${1}[redacted]"},
	{regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}`), "[redacted]"},
	{regexp.MustCompile(notAfterWord + `(?:AKIA|ASIA)[0-9A-Z]{16}`), "${1}[redacted]"},
	{regexp.MustCompile(`xox[abposr]-[0-9]+-[A-Za-z0-9-]+`), "[redacted]"},
	{regexp.MustCompile(notAfterWord + `eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), "${1}[redacted]"},
	{regexp.MustCompile(secretKey + `"\s*:\s*")(?:[^"\\]|\\.)*(")`), "${1}[redacted]${2}"},
	{regexp.MustCompile(secretKey + `\\"[ \t]*:[ \t]*\\")` + escapedBody + `(\\")`), "${1}[redacted]${2}"},
	{regexp.MustCompile(secretKey + `'?[ \t]*(?::=|=>|[:=])[ \t]*)` +
		`(?:(\\")` + escapedBody + `(\\")` +
		`|(")(?:[ \t]*(?:[^"\\\s,:}\]]|\\.)(?:[^"\\\n]|\\.)*)?(")` +
		`|(')[^'"\n]*(')` +
		`|[^\s"'\\,;&<>(){}\[\]]+)`), "${1}${2}${4}${6}[redacted]${3}${5}${7}"},
	{regexp.MustCompile(`(?:(\\(?:u[0-9A-Fa-f]{4}|[^u]))[A-Za-z0-9._%+-]*|[A-Za-z0-9._%+-]+)@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), "${1}[email]"},
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
	for _, r := range rules {
		if r.re.MatchString(s) {
			s = r.re.ReplaceAllString(s, r.repl)
		}
	}
	return s
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
