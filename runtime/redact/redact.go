// Package redact masks the secrets a text may carry — API keys (OpenAI, Anthropic, GitHub,
// AWS, Slack), JWTs, bearer and basic credentials, passwords in URLs, secret-named
// assignments — and e-mail addresses, and caps the text at MaxChars characters.
package redact

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxChars is the cap, in characters (runes), of a redacted text.
const MaxChars = 2000

// Masked replaces a secret; Email replaces an e-mail address. Neither holds a quote or a
// backslash, so JSON text stays JSON.
const (
	Masked = "[redacted]"
	Email  = "[email]"
)

// rule is one secret shape: its pattern and the replacement (regexp.Expand syntax).
type rule struct {
	re   *regexp.Regexp
	with string
}

// rules are the shapes in the order they are masked: credentials in URLs before e-mail
// addresses, so user:pass@host is not read as an address.
var rules = []rule{
	{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@"'<>]+@`), "${1}" + Masked + "@"},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), Masked},
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`), Masked},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`), Masked},
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), Masked},
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), Masked},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`), Masked},
	{regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}`), "${1}${2}" + Masked},
	{regexp.MustCompile(`(?i)("?\b(?:password|passwd|pwd|secret|client_secret|private_key|api[_-]?key|access_token|token)"?\s*[:=]\s*)("?)[^\s"',;&}]+`), "${1}${2}" + Masked},
	{regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`), Email},
}

// Text is s with every secret shape masked, then capped: a text longer than MaxChars
// characters is cut so that, with "…" appended, it is MaxChars long. Invalid UTF-8 is
// replaced by U+FFFD first.
func Text(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	for _, r := range rules {
		s = r.re.ReplaceAllString(s, r.with)
	}
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
