// Package subject renders the one-line subject of a pause that tells inbox rows apart: a
// configuration's `subject:` template ("Refund {{order_id}} for {{amount}} EUR") filled from
// the first pending call's arguments, or without a template those arguments compactly
// ("order_id=A-1001, amount=25"). A subject is plain text on one line of at most MaxRunes
// characters (then cut with "…"); whoever shows it escapes it. The same placeholders fill the
// turns of a scripted model from earlier tool results (runtime/model).
package subject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRunes is the longest subject: a longer one is cut to MaxRunes characters followed by "…".
const MaxRunes = 120

// MaxTemplateRunes bounds a template's length (tx_nrllm_configuration.subject_template).
const MaxTemplateRunes = 1024

// Template is a parsed `subject:` template: literal text and placeholders, in order.
type Template struct {
	parts []part
}

// part is literal text, or (path set) a placeholder naming an argument by its path.
type part struct {
	text string
	path []string
}

// segmentRule is one dot-separated step of a placeholder: an object key or an array index.
var segmentRule = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Parse reads a template: text in which {{name}} or {{a.b}} (spaces inside the braces
// allowed) names an argument, nested by dots (a number steps into an array). An unclosed
// "{{", an empty name or a step other than letters, digits, _ and - is an error naming it;
// so is a template longer than MaxTemplateRunes or not valid UTF-8.
func Parse(s string) (Template, error) {
	if !utf8.ValidString(s) {
		return Template{}, errors.New("not valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(s); n > MaxTemplateRunes {
		return Template{}, fmt.Errorf("longer than %d characters", MaxTemplateRunes)
	}
	var t Template
	for s != "" {
		before, rest, found := strings.Cut(s, "{{")
		if before != "" {
			t.parts = append(t.parts, part{text: before})
		}
		if !found {
			break
		}
		name, after, closed := strings.Cut(rest, "}}")
		if !closed {
			return Template{}, errors.New(`"{{" is not closed by "}}"`)
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return Template{}, errors.New(`"{{}}" names no argument`)
		}
		path := strings.Split(name, ".")
		for _, seg := range path {
			if !segmentRule.MatchString(seg) {
				return Template{}, fmt.Errorf("{{%.40s}}: an argument is named by letters, digits, _ and -, nested by dots", name)
			}
		}
		t.parts = append(t.parts, part{path: path})
		s = after
	}
	return t, nil
}

// Render fills t from args, the JSON text of a call's arguments: each placeholder becomes the
// value at its path (a string as it is, numbers, booleans and null, arrays and objects as
// their compact JSON text); a value that is missing, or arguments that are not a JSON object,
// leave it empty. The result is one line (see Line).
func (t Template) Render(args string) string {
	root, _ := decode(args)
	return Line(t.Expand(root))
}

// Expand fills t from root, a decoded JSON value (numbers as json.Number keep their text),
// as Render does but without making the text one line.
func (t Template) Expand(root any) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.path == nil {
			b.WriteString(p.text)
			continue
		}
		if v, ok := lookup(root, p.path); ok {
			b.WriteString(valueText(v))
		}
	}
	return b.String()
}

// Value is, for a template that is one placeholder and nothing else, the value at its path
// in root, typed as decoded; ok is false for any other template and for a missing value.
func (t Template) Value(root any) (any, bool) {
	if len(t.parts) != 1 || t.parts[0].path == nil {
		return nil, false
	}
	return lookup(root, t.parts[0].path)
}

// Arguments is the default subject of a call: its arguments' top-level keys in the order
// written, "key=value" joined by ", " (values as Render writes them); "" for arguments that
// are not a JSON object or are empty. The result is one line (see Line).
func Arguments(args string) string {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	var b strings.Builder
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return ""
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(valueText(v))
		if utf8.RuneCountInString(b.String()) > MaxRunes {
			break
		}
	}
	return Line(b.String())
}

// Line makes s a subject: invalid UTF-8 replaced, bidirectional controls dropped, every run
// of white space or control characters one space, trimmed, and when longer than MaxRunes characters cut to MaxRunes
// followed by "…".
func Line(s string) string {
	out := make([]rune, 0, min(len(s), MaxRunes+1))
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.Is(unicode.Bidi_Control, r) {
			continue
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > MaxRunes {
			return strings.TrimRight(string(out[:MaxRunes]), " ") + "…"
		}
	}
	return string(out)
}

// decode reads args as JSON, numbers kept as written.
func decode(args string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// lookup follows path from root: object keys, or indexes into arrays.
func lookup(root any, path []string) (any, bool) {
	v := root
	for _, seg := range path {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// valueText is v as a subject shows it: a string as it is, anything else as compact JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
