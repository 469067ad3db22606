package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"runsdesk/runtime/strictjson"
)

// FieldError is one problem with a submission, keyed to the field it belongs to.
type FieldError struct {
	// Pointer is the JSON pointer of the field (as in Field.Pointer); "" is the form as a whole.
	Pointer string
	// Message is a short sentence for a person. It never contains the submitted value.
	Message string
}

// Summary counts the distinct fields with errors in a sentence for the top of a form:
// "" for none, "1 field needs attention", "3 fields need attention".
func Summary(errs []FieldError) string {
	seen := map[string]bool{}
	for _, e := range errs {
		seen[e.Pointer] = true
	}
	switch len(seen) {
	case 0:
		return ""
	case 1:
		return "1 field needs attention"
	}
	return fmt.Sprintf("%d fields need attention", len(seen))
}

// Messages Coerce and Validate report; none of them repeats the submitted value.
const (
	msgNumber       = "Enter a number."
	msgInteger      = "Enter a whole number."
	msgOption       = "Choose one of the listed options."
	msgOnlyOptions  = "Choose only from the listed options."
	msgJSON         = "Enter valid JSON."
	msgJSONObject   = "Enter a JSON object."
	msgJSONRange    = "A number in this value is too large, too small or too long."
	msgJSONDeep     = "This value is nested too deeply."
	msgJSONTwice    = "A key is given twice in one object of this value."
	msgTrueFalse    = "Enter true or false."
	msgRequired     = "This field is required."
	msgUnreadable   = "The submitted data could not be read."
	msgNotCheckable = "The input could not be checked against the schema."
	msgNotText      = "This holds bytes that are not text (invalid UTF-8 or a NUL character); type it again."
)

// maxDataDepth bounds how deeply submitted JSON may nest.
const maxDataDepth = 256

// localDateTimeRE and localTimeRE match what browsers' datetime-local and time inputs send:
// no offset, seconds optional.
var (
	localDateTimeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?$`)
	localTimeRE     = regexp.MustCompile(`^[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?$`)
)

// Coerce turns a posted form (every value a string) into typed JSON, reading each input
// exactly as Fields describes it, and reports the inputs it could not read. Rules:
//
//   - Text-like fields (string, textarea, enum, date, date-time, time, email, uri, number,
//     integer, array, json) left empty are omitted, so "required" fires for required ones.
//     Text is kept as typed (CRLF becomes LF); date, time, email and uri values are trimmed.
//   - A date-time or time without an offset, as browsers send them ("2024-05-01T09:30",
//     "09:30"), is completed with seconds and "Z": the form collects UTC.
//   - integer: "12" → 12, "1e3" → 1000; "12.5" is the error "Enter a whole number." (never
//     truncated). number: a decimal, kept exactly as typed (as a json.Number).
//   - boolean: a checkbox is a two-state control that is always shown, so its absence means
//     false: checked with 1/on/true/yes (any case) → true, anything else or absent → false.
//     multi-enum likewise: no box checked → [].
//   - enum: the value must be one of Options and becomes the original typed enum value.
//   - array: one item per line; lines are trimmed, blank lines dropped, each item coerced by
//     Item's kind.
//   - object: its fields, recursively. An optional object in which nothing was entered (no
//     text, no checked box) is omitted as a whole; a required one is always present.
//   - rows: the posted value is the number of rows; each row is an object read like one,
//     in row order, a row left empty an empty object; no rows omits the field.
//   - json: the text must be one JSON value (numbers kept as written), each object key once.
//   - A value that is not text (invalid UTF-8, a NUL character) is an error on its field.
//
// Keys the schema does not declare never reach the result. Coerce never panics.
func (s *Schema) Coerce(form url.Values) (map[string]any, []FieldError) {
	out := map[string]any{}
	var errs []FieldError
	if s.rootJSON {
		return s.coerceWhole(form)
	}
	for _, n := range s.nodes {
		if v, present, _ := coerceNode(n, form, &errs); present {
			out[n.field.Name] = v
		}
	}
	return out, errs
}

// CoerceAndValidate runs Coerce and then Validate on its result, and returns the data with
// every error, one per field, in form order. A field that could not be read reports only its
// coercion error. The data is fit to use only when no errors are returned.
func (s *Schema) CoerceAndValidate(form url.Values) (map[string]any, []FieldError) {
	data, cerrs := s.Coerce(form)
	verrs := s.Validate(data)
	failed := map[string]bool{}
	for _, e := range cerrs {
		failed[e.Pointer] = true
	}
	errs := slices.Clone(cerrs)
	for _, e := range verrs {
		if !failed[e.Pointer] {
			errs = append(errs, e)
		}
	}
	s.sortErrors(errs)
	return data, errs
}

func (s *Schema) coerceWhole(form url.Values) (map[string]any, []FieldError) {
	out := map[string]any{}
	text := strings.TrimSpace(form.Get("input"))
	if text == "" {
		return out, nil
	}
	if !IsText(text) {
		return out, []FieldError{{Pointer: "", Message: msgNotText}}
	}
	v, msg := decodeJSONText(text)
	if msg != "" {
		return out, []FieldError{{Pointer: "", Message: msg}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return out, []FieldError{{Pointer: "", Message: msgJSONObject}}
	}
	for _, k := range s.declared {
		if val, ok := m[k]; ok {
			out[k] = val
		}
	}
	return out, nil
}

// coerceNode reads one field. present says whether the value belongs in the result; entered
// says whether the person typed or checked anything (errors count as entered).
func coerceNode(n *node, form url.Values, errs *[]FieldError) (value any, present, entered bool) {
	f := &n.field
	fail := func(msg string) (any, bool, bool) {
		*errs = append(*errs, FieldError{Pointer: f.Pointer, Message: msg})
		return nil, false, true
	}
	switch f.Kind {
	case KindBoolean:
		checked := isChecked(form.Get(f.FormName))
		return checked, true, checked
	case KindMultiEnum:
		chosen := map[int]bool{}
		for _, raw := range form[f.FormName] {
			if raw == "" {
				continue
			}
			i := slices.Index(f.Options, raw)
			if i < 0 {
				return fail(msgOnlyOptions)
			}
			chosen[i] = true
		}
		list := []any{}
		for i, v := range n.values {
			if chosen[i] {
				list = append(list, v)
			}
		}
		return list, true, len(list) > 0
	case KindObject:
		obj := map[string]any{}
		for _, c := range n.children {
			v, p, e := coerceNode(c, form, errs)
			if p {
				obj[c.field.Name] = v
			}
			entered = entered || e
		}
		if !entered && !f.Required {
			return nil, false, false
		}
		return obj, true, entered
	case KindRows:
		return coerceRows(n, form, errs)
	}
	raw := strings.ReplaceAll(form.Get(f.FormName), "\r\n", "\n")
	if !IsText(raw) {
		return fail(msgNotText)
	}
	switch f.Kind {
	case KindString, KindTextarea:
		if raw == "" {
			return nil, false, false
		}
		return raw, true, true
	case KindEnum:
		if raw == "" {
			return nil, false, false
		}
		i := slices.Index(f.Options, raw)
		if i < 0 {
			return fail(msgOption)
		}
		return n.values[i], true, true
	case KindArray:
		var items []any
		for _, line := range strings.Split(raw, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			v, msg := coerceScalar(n.item.field.Kind, line)
			if msg != "" {
				return fail(fmt.Sprintf("Item %d: %s", len(items)+1, msg))
			}
			items = append(items, v)
		}
		if len(items) == 0 {
			return nil, false, false
		}
		return items, true, true
	case KindJSON:
		text := strings.TrimSpace(raw)
		if text == "" {
			return nil, false, false
		}
		v, msg := decodeJSONText(text)
		if msg != "" {
			return fail(msg)
		}
		return v, true, true
	}
	text := strings.TrimSpace(raw)
	if text == "" {
		return nil, false, false
	}
	v, msg := coerceScalar(f.Kind, text)
	if msg != "" {
		return fail(msg)
	}
	return v, true, true
}

// coerceScalar reads one non-empty, trimmed value of a scalar kind; msg is "" on success.
func coerceScalar(kind Kind, text string) (any, string) {
	switch kind {
	case KindNumber:
		lit, ok := parseHumanNumber(text)
		if !ok {
			return nil, msgNumber
		}
		return json.Number(lit), ""
	case KindInteger:
		lit, ok := parseHumanInteger(text)
		if !ok {
			return nil, msgInteger
		}
		return json.Number(lit), ""
	case KindBoolean:
		switch strings.ToLower(text) {
		case "1", "on", "true", "yes":
			return true, ""
		case "0", "off", "false", "no":
			return false, ""
		}
		return nil, msgTrueFalse
	case KindDateTime:
		if localDateTimeRE.MatchString(text) {
			text = text[:10] + "T" + text[11:]
			if len(text) == 16 {
				text += ":00"
			}
			text += "Z"
		}
		return text, ""
	case KindTime:
		if localTimeRE.MatchString(text) {
			if len(text) == 5 {
				text += ":00"
			}
			text += "Z"
		}
		return text, ""
	}
	return text, ""
}

// IsText reports whether s is text a form may submit: valid UTF-8 without NUL characters.
func IsText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// isChecked reports whether a checkbox value means "checked".
func isChecked(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "on", "true", "yes":
		return true
	}
	return false
}

// decodeJSONText decodes exactly one JSON value, numbers as json.Number, within the depth and
// number bounds; msg is "" on success.
func decodeJSONText(text string) (any, string) {
	var v any
	var strict *strictjson.Error
	switch err := strictjson.Decode([]byte(text), &v); {
	case errors.As(err, &strict) && strict.Problem == strictjson.Duplicate:
		return nil, msgJSONTwice
	case errors.As(err, &strict) && strict.Problem == strictjson.TooDeep:
		return nil, msgJSONDeep
	case err != nil:
		return nil, msgJSON
	}
	out, err := toJSON(v, 0)
	switch {
	case errors.Is(err, errTooDeep):
		return nil, msgJSONDeep
	case err != nil:
		return nil, msgJSONRange
	}
	return out, ""
}

var (
	errTooDeep  = errors.New("value nested too deeply")
	errNotJSON  = errors.New("value cannot be represented as JSON")
	errOutRange = errors.New("number out of range")
)

// toJSON returns a copy of v made only of the types the validator accepts (nil, bool, string,
// json.Number, []any, map[string]any), converting anything else through encoding/json. It
// fails with errTooDeep beyond maxDataDepth, errOutRange for a number outside the number
// bounds, and errNotJSON for what JSON cannot carry (NaN, channels…).
func toJSON(v any, depth int) (any, error) {
	if depth > maxDataDepth {
		return nil, errTooDeep
	}
	switch t := v.(type) {
	case nil, bool, string:
		return t, nil
	case json.Number:
		if !numberInRange(string(t)) {
			return nil, errOutRange
		}
		return t, nil
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNotJSON, err)
		}
		if !numberInRange(string(b)) {
			return nil, errOutRange
		}
		return json.Number(b), nil
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			c, err := toJSON(item, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, item := range t {
			c, err := toJSON(item, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotJSON, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("%w: %w", errNotJSON, err)
	}
	return toJSON(generic, depth)
}
