package schema

import (
	"net/url"
	"strconv"
	"strings"
)

// escapeToken escapes one JSON pointer token (RFC 6901): "~" → "~0", "/" → "~1".
func escapeToken(tok string) string {
	tok = strings.ReplaceAll(tok, "~", "~0")
	return strings.ReplaceAll(tok, "/", "~1")
}

// unescapeToken reverses escapeToken.
func unescapeToken(tok string) string {
	tok = strings.ReplaceAll(tok, "~1", "/")
	return strings.ReplaceAll(tok, "~0", "~")
}

// splitPointer splits a JSON pointer into unescaped tokens; "" is the root (no tokens).
func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		parts[i] = unescapeToken(p)
	}
	return parts
}

// joinPointer builds a JSON pointer from unescaped tokens.
func joinPointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// libraryPointer converts a location as the jsonschema library writes it (each token
// additionally URL-path-escaped) into unescaped tokens.
func libraryPointer(loc string) []string {
	if loc == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
		parts[i] = unescapeToken(p)
	}
	return parts
}

// arrayIndex parses a JSON pointer array index token.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || len(tok) > 9 {
		return 0, false
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}
