// Package strictjson decodes JSON that a person or a client sent, refusing what encoding/json
// lets through silently: a key given twice in one object (encoding/json keeps the last), a key
// that matches a struct field only without regard to case, and text that is not valid UTF-8
// (encoding/json replaces it with U+FFFD).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth bounds how deeply a decoded value may nest.
const MaxDepth = 256

// ErrTrailingData is returned when data holds more than one JSON value.
var ErrTrailingData = errors.New("strictjson: more than one JSON value")

// Problem is what is wrong with a key or a value.
type Problem int

// The problems an *Error reports.
const (
	// Duplicate: Key is given more than once in the object at Path.
	Duplicate Problem = iota + 1
	// Unknown: Key is not exactly the name of a field of the object at Path (Known lists them).
	Unknown
	// InvalidKeyText: a key of the object at Path is not valid UTF-8 (Key is empty).
	InvalidKeyText
	// InvalidText: the string at Path is not valid UTF-8.
	InvalidText
	// TooDeep: the value at Path nests more than MaxDepth levels.
	TooDeep
)

// Error is a key or value strict decoding refused. Path locates the object or value
// ("" is the top level, then keys joined by "." and list positions as "[2]"); it and Key
// name only keys that are valid UTF-8, never a submitted value.
type Error struct {
	Problem Problem
	Path    string
	Key     string
	Known   []string
}

// maxKeyInMessage bounds how much of a key a message repeats.
const maxKeyInMessage = 64

// Error returns a sentence for the sender that names the key or field, never a value.
func (e *Error) Error() string {
	key := strconv.Quote(Clip(e.Key))
	in := ""
	if e.Path != "" {
		in = " in " + strconv.Quote(Clip(e.Path))
	}
	switch e.Problem {
	case Duplicate:
		return "key " + key + " is given twice" + in
	case Unknown:
		for _, k := range e.Known {
			if strings.EqualFold(k, e.Key) {
				return fmt.Sprintf("key %s is not a field%s; did you mean %q? (field names are case-sensitive)", key, in, k)
			}
		}
		if len(e.Known) == 0 {
			return "key " + key + " is not accepted" + in + " (no fields are)"
		}
		return "key " + key + " is not a field" + in + " (fields: " + strings.Join(e.Known, ", ") + ")"
	case InvalidKeyText:
		return "a key" + in + " is not valid UTF-8"
	case InvalidText:
		if e.Path == "" {
			return "the text is not valid UTF-8"
		}
		return "field " + strconv.Quote(Clip(e.Path)) + " is not valid UTF-8"
	case TooDeep:
		return fmt.Sprintf("the value%s is nested more than %d levels deep", in, MaxDepth)
	}
	return "the JSON was refused"
}

// Clip shortens s, a key or path, as an *Error's message repeats it: at most 64 bytes, cut at
// a rune boundary and marked "…".
func Clip(s string) string {
	if len(s) <= maxKeyInMessage {
		return s
	}
	cut := maxKeyInMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Decode decodes data, exactly one JSON value, into v (a non-nil pointer) as encoding/json
// does with UseNumber and DisallowUnknownFields, after checking all of it: a key given twice
// in any object, a key of an object decoded into a struct that is not exactly one of its
// fields' JSON names, and a string or key that is not valid UTF-8 (a lone surrogate escape
// included) are an *Error. Objects decoded into maps, interfaces or json.RawMessage may hold
// any keys, each once. Malformed JSON and type mismatches are encoding/json's errors; a second
// value is ErrTrailingData.
func Decode(data []byte, v any) error {
	w := &walker{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	w.dec.UseNumber()
	if err := w.value(reflect.TypeOf(v), "", 0); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		if err == nil {
			return ErrTrailingData
		}
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// walker reads tokens, following the Go type each value decodes into.
type walker struct {
	dec  *json.Decoder
	data []byte
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

// value checks the next value, which decodes into t (nil: free-form).
func (w *walker) value(t reflect.Type, path string, depth int) error {
	if depth > MaxDepth {
		return &Error{Problem: TooDeep, Path: path}
	}
	t = deref(t)
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	switch tok {
	case json.Delim('{'):
		return w.object(t, path, depth)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && !custom(t) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err := w.dec.Token()
		return err
	}
	if _, ok := tok.(string); ok && !validString(w.data[start:w.dec.InputOffset()]) {
		return &Error{Problem: InvalidText, Path: path}
	}
	return nil
}

// object checks the members of an object whose '{' was just read.
func (w *walker) object(t reflect.Type, path string, depth int) error {
	var fields map[string]reflect.Type
	var known []string
	var elem reflect.Type
	switch {
	case t == nil || custom(t):
	case t.Kind() == reflect.Struct:
		fields, known = structFields(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for w.dec.More() {
		start := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if !validString(w.data[start:w.dec.InputOffset()]) {
			return &Error{Problem: InvalidKeyText, Path: path}
		}
		if seen[key] {
			return &Error{Problem: Duplicate, Path: path, Key: key}
		}
		seen[key] = true
		next := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				return &Error{Problem: Unknown, Path: path, Key: key, Known: known}
			}
			next = ft
		}
		if err := w.value(next, join(path, key), depth+1); err != nil {
			return err
		}
	}
	_, err := w.dec.Token()
	return err
}

// deref strips pointers.
func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// custom reports whether t decodes itself (json.RawMessage, time.Time…): its content is
// free-form here.
func custom(t reflect.Type) bool {
	return t == rawMessageType || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// structFields maps the JSON names of t's fields to their types, as encoding/json names them:
// the tag's name, else the Go name; "-" and unexported fields are left out; the fields of an
// untagged embedded struct are promoted.
func structFields(t reflect.Type) (map[string]reflect.Type, []string) {
	fields := map[string]reflect.Type{}
	var known []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct {
				walk(deref(f.Type))
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := fields[name]; !dup {
				fields[name] = f.Type
				known = append(known, name)
			}
		}
	}
	walk(t)
	return fields, slices.Clip(known)
}

// join appends key to path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// validString reports whether raw, one quoted JSON string token as written (possibly
// preceded by separators), is valid UTF-8 and pairs every surrogate escape.
func validString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw[i+1:])
		if !ok {
			continue
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return false
			}
			low, ok := hex4(raw[i+3:])
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}
