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
	re      *regexp.Regexp
	repl    string
	hints   []string
	bounded bool
	local   bool
}

const (
	secretKey   = `(?i)(pass(?:word|wd)|pwd|secret(?:[_-]?(?:access[_-]?)?key)?|token|api[_-]?key|private[_-]?key)`
	escapedBody = `(?:[^"\\]|\\\\\\\\|\\\\\\"|\\[^"])*`
)

var rules = [...]rule{
	{re: anchored(`://[^\s/?#"'<>\\]*:[^\s/?#"'<>\\]*@`), repl: "://[redacted]@", hints: []string{"://"}},
	{re: anchored(`(?i)(authorization(?:\\?"[ \t]*:[ \t]*\\?"|'?[ \t]*[:=][ \t]*(?:\\?["'])?)(?:(?:bearer|basic|token)[ \t]+)?)(?:\[redacted\]|[^\s"'\\,;:<>(){}\[\]]+)`), repl: "${1}[redacted]", hints: []string{"authorization"}},
	{re: anchored(`(?i)(bearer[ \t]+)(?:[A-Za-z0-9._~+/=-]*(?:[0-9_~+/=-]|\.[A-Za-z0-9_~+/=-])[A-Za-z0-9._~+/=-]*|[A-Za-z]{20,})`), repl: "${1}[redacted]", hints: []string{"bearer"}},
	{re: anchored(`A[KS]IA[0-9A-Z]{16}`), repl: "[redacted]", hints: []string{"akia", "asia"}, bounded: true},
	{re: anchored(`sk-[A-Za-z0-9_-]{20,}`), repl: "[redacted]", hints: []string{"sk-"}, bounded: true},
	{re: anchored(`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}`), repl: "[redacted]", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{re: anchored(`xox[abposr]-[0-9]+-[A-Za-z0-9-]+`), repl: "[redacted]", hints: []string{"xox"}},
	{re: anchored(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), repl: "[redacted]", hints: []string{"eyj"}, bounded: true},
	{re: anchored(secretKey + `(?:("[ \t]*:[ \t]*")(?:[^"\\]|\\.)*(")` +
		`|(\\"[ \t]*:[ \t]*\\")` + escapedBody + `(\\")` +
		`|('?[ \t]*(?::=|=>|[:=])[ \t]*)(?:(\\")` + escapedBody + `(\\")` +
		`|(")(?:[ \t]*(?:[^"\\\s,:}\]]|\\.)(?:[^"\\\n]|\\.)*)?(")` +
		`|(')[^'"\n]*(')` +
		`|[^\s"'\\,;&<>(){}\[\]]+))`), repl: "${1}${2}${4}${6}${7}${9}${11}[redacted]${3}${5}${8}${10}${12}", hints: []string{"pass", "pwd", "secret", "token", "api", "private"}},
	{re: anchored(`(?:(\\(?:u[0-9A-Fa-f]{4}|[^u]))[A-Za-z0-9._%+-]*|[A-Za-z0-9._%+-]+)@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), repl: "${1}[email]", hints: []string{"@"}, local: true},
}

func anchored(expr string) *regexp.Regexp { return regexp.MustCompile(`\A(?:` + expr + `)`) }

// Text is s with every secret shape masked ("[redacted]", e-mail addresses "[email]"), then
// cut to MaxChars runes ending in "…" if longer. Invalid UTF-8 is replaced by U+FFFD first.
func Text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for range maxPasses {
		next, lower := s, asciiLower(s)
		for i := range rules {
			if masked := rules[i].apply(next, lower); masked != next {
				next, lower = masked, asciiLower(masked)
			}
		}
		if next == s {
			break
		}
		s = next
	}
	return capped(s)
}

func (r *rule) apply(s, lower string) string {
	var next [8]int
	for i, h := range r.hints {
		next[i] = index(lower, h, 0)
	}
	var out []byte
	last := 0
	for {
		hit := -1
		for i := range r.hints {
			if next[i] >= 0 && (hit < 0 || next[i] < hit) {
				hit = next[i]
			}
		}
		if hit < 0 {
			break
		}
		pos := hit + 1
		for start := range r.starts(s, last, hit) {
			m := r.re.FindStringSubmatchIndex(s[start:])
			if m == nil || r.bounded && afterWord(s, start) {
				continue
			}
			if out == nil {
				out = make([]byte, 0, len(s)+64)
			}
			out = append(out, s[last:start]...)
			out = r.re.ExpandString(out, r.repl, s[start:], m)
			last = start + m[1]
			pos = last
			break
		}
		for i, h := range r.hints {
			if next[i] >= 0 && next[i] < pos {
				next[i] = index(lower, h, pos)
			}
		}
	}
	if out == nil {
		return s
	}
	return string(append(out, s[last:]...))
}

func (r *rule) starts(s string, last, hit int) func(func(int) bool) {
	return func(yield func(int) bool) {
		if !r.local {
			yield(hit)
			return
		}
		i := hit
		for i > last && isLocal(s[i-1]) {
			i--
		}
		if i > last && s[i-1] == '\\' && !yield(i-1) {
			return
		}
		if i < hit {
			yield(i)
		}
	}
}

func index(s, sub string, from int) int {
	if i := strings.Index(s[from:], sub); i >= 0 {
		return from + i
	}
	return -1
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
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

func isLocal(c byte) bool {
	return isAlnum(c) || strings.IndexByte("._%+-", c) >= 0
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
