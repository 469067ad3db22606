package tool

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Limits and defaults of an HTTP tool definition.
const (
	DefaultTimeout          = 30 * time.Second
	MaxTimeout              = 5 * time.Minute
	DefaultMaxResponseBytes = 1 << 20
	MaxResponseBytesLimit   = 16 << 20
)

// Check validates def as data, without building a tool, and returns a *Problem for every rule
// it breaks (nil when it breaks none): the name rule, the effect value, parameters as a JSON
// object schema, a usable input schema when one is set, no input schema on a tool that needs
// approval (requires_approval or a write effect), an absolute http(s) URL with a host and no
// credentials, a timeout in (0, 5m] or 0 for the default, a response limit in (0, 16 MiB] or 0
// for the default, an arguments bound in (0, 1 MiB] or 0 for the default, and headers with
// valid names, values free of control characters and well-formed ${NAME} references. A
// declared tool (Declared) has no endpoint to check. Check does not look at the environment; see EnvRefs.
func Check(def Definition) []error {
	errs := capabilityProblems(capabilitiesOfDefinition(def))
	add := func(field string, rule error, detail string) {
		errs = append(errs, &Problem{Tool: def.Name, Field: field, Rule: rule, Detail: detail})
	}
	if d := urlProblem(def.HTTP.URL); d != "" && !def.Declared() {
		add("http.url", ErrInvalidURL, d)
	}
	if t := def.HTTP.Timeout; t < 0 || t > MaxTimeout {
		add("http.timeout", ErrInvalidTimeout, "got "+t.String())
	}
	if n := def.HTTP.MaxResponseBytes; n < 0 || n > MaxResponseBytesLimit {
		add("http.max_response_bytes", ErrInvalidResponseLimit, fmt.Sprintf("got %d", n))
	}
	if n := def.MaxArgumentsBytes; n < 0 || n > MaxArgumentsBytesLimit {
		add("max_arguments_bytes", ErrInvalidArgumentsLimit, fmt.Sprintf("got %d", n))
	}
	for _, name := range sortedKeys(def.HTTP.Headers) {
		if d := headerProblem(name, def.HTTP.Headers[name]); d != "" {
			add("http.headers."+truncate(name, 80), ErrInvalidHeader, d)
		}
	}
	return errs
}

// capabilitiesOfDefinition reads the declared capabilities of def the way NewHTTP's tool
// reports them.
func capabilitiesOfDefinition(def Definition) capabilities {
	return capabilities{
		name:           def.Name,
		effect:         def.Effect,
		parameters:     def.Parameters,
		approvalMarker: def.RequiresApproval,
		hasInput:       !emptyJSON(def.InputSchema),
		inputSchema:    def.InputSchema,
		remote:         def.MCP != nil,
	}
}

// EnvRefs returns the environment variable names referenced as ${NAME} in def's header values,
// sorted and without repeats. Malformed references are not listed; Check reports them.
func EnvRefs(def Definition) []string {
	var names []string
	for _, v := range def.HTTP.Headers {
		refs, err := scanRefs(v)
		if err != nil {
			continue
		}
		names = append(names, refs...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// urlProblem returns why raw is not an acceptable endpoint URL, or "" when it is.
func urlProblem(raw string) string {
	if raw == "" {
		return "missing"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "does not parse"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("scheme %q", truncate(u.Scheme, 20))
	case u.Host == "" || u.Hostname() == "":
		return "no host"
	case u.User != nil:
		return "credentials in the URL; pass them in a header with ${NAME}"
	}
	return ""
}

// headerProblem returns why a header is not acceptable, or "" when it is. It never quotes the
// value.
func headerProblem(name, value string) string {
	if !validHeaderName(name) {
		return "invalid name"
	}
	if hasControl(value) {
		return "control character in the value"
	}
	if _, err := scanRefs(value); err != nil {
		return err.Error()
	}
	return ""
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// hasControl reports whether s holds a byte that may not appear in a header value.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
