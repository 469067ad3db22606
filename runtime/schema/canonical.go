package schema

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxCanonicalDepth is the nesting canonicalize handles itself; deeper values take the
// decode-and-encode path, which refuses them as encoding/json does.
const maxCanonicalDepth = 1000

// canonicalize rewrites one JSON value exactly as encoding/json encodes it after decoding it
// into generic values with UseNumber: object keys unique (the last duplicate wins) and sorted
// byte-wise, strings re-encoded (HTML-escaped, invalid UTF-8 as U+FFFD), numbers and literals
// as written, no insignificant space. ok is false when data is not one well-formed value.
func canonicalize(data []byte) ([]byte, bool) {
	c := canonicalizer{in: data}
	out, ok := c.value(make([]byte, 0, len(data)), 0)
	if !ok || c.skipSpace() != len(data) {
		return nil, false
	}
	return out, true
}

// canonicalizer reads in from pos.
type canonicalizer struct {
	in  []byte
	pos int
}

// member is one encoded object member ("key":value) at out[from:to].
type member struct {
	key      string
	from, to int
}

func (c *canonicalizer) skipSpace() int {
	for c.pos < len(c.in) && strings.IndexByte(" \t\r\n", c.in[c.pos]) >= 0 {
		c.pos++
	}
	return c.pos
}

func (c *canonicalizer) value(out []byte, depth int) ([]byte, bool) {
	if depth > maxCanonicalDepth || c.skipSpace() >= len(c.in) {
		return out, false
	}
	switch c.in[c.pos] {
	case '{':
		return c.object(out, depth)
	case '[':
		return c.array(out, depth)
	case '"':
		out, _, ok := c.str(out)
		return out, ok
	}
	start := c.pos
	for c.pos < len(c.in) && strings.IndexByte(",:]} \t\r\n", c.in[c.pos]) < 0 {
		c.pos++
	}
	lit := c.in[start:c.pos]
	if !json.Valid(lit) {
		return out, false
	}
	return append(out, lit...), true
}

func (c *canonicalizer) array(out []byte, depth int) ([]byte, bool) {
	c.pos++
	out = append(out, '[')
	if c.skipSpace() < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		return append(out, ']'), true
	}
	for {
		var ok bool
		if out, ok = c.value(out, depth+1); !ok {
			return out, false
		}
		sep, ok := c.separator(']')
		if !ok {
			return out, false
		}
		out = append(out, sep)
		if sep == ']' {
			return out, true
		}
	}
}

func (c *canonicalizer) object(out []byte, depth int) ([]byte, bool) {
	c.pos++
	start := len(out)
	var members []member
	if c.skipSpace() < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		return append(out, '{', '}'), true
	}
	for {
		from := len(out)
		if c.skipSpace() >= len(c.in) || c.in[c.pos] != '"' {
			return out, false
		}
		var key string
		var ok bool
		if out, key, ok = c.str(out); !ok {
			return out, false
		}
		if c.skipSpace() >= len(c.in) || c.in[c.pos] != ':' {
			return out, false
		}
		c.pos++
		out = append(out, ':')
		if out, ok = c.value(out, depth+1); !ok {
			return out, false
		}
		members = append(members, member{key: key, from: from, to: len(out)})
		sep, ok := c.separator('}')
		if !ok {
			return out, false
		}
		if sep == '}' {
			return sortMembers(out, start, members), true
		}
	}
}

// separator reads the ',' or the closing byte after an item.
func (c *canonicalizer) separator(closing byte) (byte, bool) {
	if c.skipSpace() >= len(c.in) {
		return 0, false
	}
	b := c.in[c.pos]
	c.pos++
	return b, b == ',' || b == closing
}

// sortMembers rewrites out[start:], the members written one after the other, as an object of
// the members sorted by key, the last of duplicates kept.
func sortMembers(out []byte, start int, members []member) []byte {
	slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	written := slices.Clone(out[start:])
	out = append(out[:start], '{')
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue
		}
		if len(out) > start+1 {
			out = append(out, ',')
		}
		out = append(out, written[m.from-start:m.to-start]...)
	}
	return append(out, '}')
}

// str reads a string and appends it as encoding/json encodes it; key is its decoded value.
func (c *canonicalizer) str(out []byte) ([]byte, string, bool) {
	start := c.pos
	c.pos++
	plain := true
	for c.pos < len(c.in) && c.in[c.pos] != '"' {
		if c.in[c.pos] == '\\' {
			plain = false
			c.pos++
		}
		c.pos++
	}
	if c.pos >= len(c.in) {
		return out, "", false
	}
	c.pos++
	quoted := c.in[start:c.pos]
	body := quoted[1 : len(quoted)-1]
	if plain && encodesAsIs(body) {
		return append(out, quoted...), string(body), true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return out, "", false
	}
	enc, err := json.Marshal(s)
	if err != nil {
		return out, "", false
	}
	return append(out, enc...), s, true
}

// encodesAsIs reports whether encoding/json writes the string body (holding no escape) as it
// is: valid UTF-8 without control characters, HTML-sensitive characters, U+2028 or U+2029.
func encodesAsIs(body []byte) bool {
	wide := false
	for _, b := range body {
		switch {
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			return false
		case b >= utf8.RuneSelf:
			wide = true
		}
	}
	if !wide {
		return true
	}
	return utf8.Valid(body) && !bytes.Contains(body, []byte("\u2028")) && !bytes.Contains(body, []byte("\u2029"))
}
