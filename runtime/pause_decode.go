package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxNesting is encoding/json's limit on nested objects and arrays; a state nested deeper is
// refused here as DecodeState refuses it.
const maxNesting = 10000

// DecodePause parses a stored suspended_state as far as a list card needs it, in one pass of
// a small validating JSON reader: the transcript (the "messages" member) is checked to be
// valid JSON and a list of objects but not decoded; the input schema is kept as written, as
// encoding/json keeps a json.RawMessage; every other member is decoded by encoding/json as
// DecodeState decodes it. Member names match fields as encoding/json matches them. It refuses
// what DecodeState refuses, except a message of the transcript whose fields do not fit a
// message. Like DecodeState it reads the first JSON value and ignores what follows.
func DecodePause(raw string) (PauseState, error) {
	var p PauseState
	start := skipSpace(raw, 0)
	if start == len(raw) {
		return p, fmt.Errorf("%w: empty", errCorruptState)
	}
	if err := unopened(raw); err != nil {
		return p, err
	}
	if raw[start] != '{' {
		return p, fmt.Errorf("%w: not a JSON object", errCorruptState)
	}
	rest := append(make([]byte, 0, 1024), '{')
	member := func(key string, at int) int {
		name := memberName(key)
		if strings.EqualFold(name, "messages") {
			return skipTranscript(raw, at)
		}
		end := skipValue(raw, at, 1)
		switch {
		case end < 0:
		case strings.EqualFold(name, "inputSchema"):
			p.InputSchema = json.RawMessage(raw[at:end])
		default:
			if len(rest) > 1 {
				rest = append(rest, ',')
			}
			rest = append(append(append(rest, key...), ':'), raw[at:end]...)
		}
		return end
	}
	if skipObject(raw, start, 1, member) < 0 {
		return PauseState{}, fmt.Errorf("%w: not valid JSON, or a transcript that is not a list of objects", errCorruptState)
	}
	rest = append(rest, '}')
	if err := json.Unmarshal(rest, &p); err != nil {
		return PauseState{}, fmt.Errorf("%w: %v", errCorruptState, err)
	}
	if err := p.check(); err != nil {
		return PauseState{}, err
	}
	return p, nil
}

// memberName is the quoted (and valid) member name key, unquoted.
func memberName(key string) string {
	name := key[1 : len(key)-1]
	if strings.IndexByte(name, '\\') >= 0 {
		_ = json.Unmarshal([]byte(key), &name)
	}
	return name
}

// skipTranscript returns the end of the transcript starting at s[i]: null or a list whose
// elements are objects or null; -1 for anything else.
func skipTranscript(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], "null"):
		return i + len("null")
	case i < len(s) && s[i] == '[':
		return skipArray(s, i, 2, func(v string) bool { return v[0] == '{' || v == "null" })
	}
	return -1
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at s[i] (not a space) nested at depth,
// or -1 when none starts there.
func skipValue(s string, i, depth int) int {
	if i >= len(s) {
		return -1
	}
	switch c := s[i]; {
	case c == '{':
		return skipObject(s, i, depth+1, nil)
	case c == '[':
		return skipArray(s, i, depth+1, nil)
	case c == '"':
		return skipString(s, i)
	case c == '-' || '0' <= c && c <= '9':
		return skipNumber(s, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(s[i:], lit) {
			return i + len(lit)
		}
	}
	return -1
}

// skipObject returns the end of the object starting at s[i], or -1. value, when not nil,
// skips each member's value itself: it gets the member's quoted name and where the value
// starts, and returns where it ends (or -1).
func skipObject(s string, i, depth int, value func(key string, at int) int) int {
	if depth > maxNesting {
		return -1
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return -1
		}
		k := skipString(s, i)
		if k < 0 {
			return -1
		}
		colon := skipSpace(s, k)
		if colon >= len(s) || s[colon] != ':' {
			return -1
		}
		at := skipSpace(s, colon+1)
		var end int
		if value != nil {
			end = value(s[i:k], at)
		} else {
			end = skipValue(s, at, depth)
		}
		next, closed := skipSeparator(s, end, '}')
		if closed || next < 0 {
			return next
		}
		i = next
	}
}

// skipArray returns the end of the array starting at s[i], or -1. elem, when not nil, sees
// each element and may refuse it.
func skipArray(s string, i, depth int, elem func(value string) bool) int {
	if depth > maxNesting {
		return -1
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1
	}
	for {
		end := skipValue(s, i, depth)
		if end < 0 || elem != nil && !elem(s[i:end]) {
			return -1
		}
		next, closed := skipSeparator(s, end, ']')
		if closed || next < 0 {
			return next
		}
		i = next
	}
}

// skipSeparator reads what follows a member or element ending at s[i]: a comma (it returns
// where the next one starts) or the closing byte (it returns the end of the container and
// true); -1 for anything else, or when i is already -1.
func skipSeparator(s string, i int, closing byte) (int, bool) {
	if i < 0 {
		return -1, false
	}
	i = skipSpace(s, i)
	switch {
	case i >= len(s):
		return -1, false
	case s[i] == ',':
		return skipSpace(s, i+1), false
	case s[i] == closing:
		return i + 1, true
	}
	return -1, false
}

// skipString returns the end of the string starting at s[i] (a quote), or -1.
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c < 0x20 || i+1 >= len(s):
			return -1
		case strings.IndexByte(`"\/bfnrt`, s[i+1]) >= 0:
			i++
		case i+5 < len(s) && s[i+1] == 'u' && isHex(s[i+2:i+6]):
			i += 5
		default:
			return -1
		}
	}
	return -1
}

func isHex(s string) bool {
	for i := range len(s) {
		if c := s[i] | 0x20; !('0' <= s[i] && s[i] <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// skipNumber returns the end of the number starting at s[i], or -1.
func skipNumber(s string, i int) int {
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		if i = skipDigits(s, i+1); i < 0 {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i = skipDigits(s, i); i < 0 {
			return -1
		}
	}
	return i
}

// skipDigits returns the end of the digits starting at s[i], or -1 when there is none.
func skipDigits(s string, i int) int {
	j := i
	for j < len(s) && '0' <= s[j] && s[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
