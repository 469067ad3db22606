package handlers

import (
	"net/url"
	"strings"
)

// localRedirect returns target if it is a path on this site ("/runs?x=1"), else fallback.
// Refused: empty, absolute or scheme-relative URLs ("https://evil", "//evil"), backslashes
// ("/\evil", which browsers treat as "//evil"), control characters, and anything that does
// not parse to a bare path.
func localRedirect(target, fallback string) string {
	if target == "" || len(target) > 2048 || target[0] != '/' {
		return fallback
	}
	if strings.HasPrefix(target, "//") || strings.ContainsAny(target, "\\") {
		return fallback
	}
	for _, r := range target {
		if r < 0x20 || r == 0x7f {
			return fallback
		}
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") ||
		strings.HasPrefix(u.Path, "//") {
		return fallback
	}
	return target
}
