package schema

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// FormValues renders value, a JSON object as decoded (numbers as json.Number), as the posted
// form Coerce reads back into it: each field's value in its widget's format (date-times and
// times in UTC as their inputs show them), an array's items one per line, a rows field's
// count and rows, a ticked checkbox as "true", a multi-enum's options repeated, a JSON field
// indented. Keys the form has no field for are left out (Overlay keeps them when the form
// is read back). It prefills a form with values that were not typed into it.
func (s *Schema) FormValues(value map[string]any) url.Values {
	out := url.Values{}
	if s.rootJSON {
		out.Set("input", jsonDefault(value))
		return out
	}
	for _, n := range s.nodes {
		v, ok := value[n.field.Name]
		formValue(n, v, ok, out)
	}
	return out
}

func formValue(n *node, v any, present bool, out url.Values) {
	f := &n.field
	switch f.Kind {
	case KindObject:
		m, _ := v.(map[string]any)
		for _, c := range n.children {
			cv, ok := m[c.field.Name]
			formValue(c, cv, ok, out)
		}
		return
	case KindRows:
		list, _ := v.([]any)
		list = list[:min(len(list), MaxRows)]
		out.Set(f.FormName, strconv.Itoa(len(list)))
		for i, item := range list {
			formValue(n.item.at(f.Pointer+"/"+strconv.Itoa(i)), item, true, out)
		}
		return
	}
	if !present || v == nil {
		return
	}
	switch f.Kind {
	case KindBoolean:
		if b, _ := v.(bool); b {
			out.Set(f.FormName, "true")
		}
	case KindMultiEnum:
		list, _ := v.([]any)
		for _, item := range list {
			if text, ok := scalarString(item); ok {
				out.Add(f.FormName, text)
			}
		}
	case KindArray:
		list, _ := v.([]any)
		lines := make([]string, 0, len(list))
		for _, item := range list {
			lines = append(lines, scalarText(n.item.field.Kind, item))
		}
		out.Set(f.FormName, strings.Join(lines, "\n"))
	case KindJSON:
		out.Set(f.FormName, jsonDefault(v))
	default:
		out.Set(f.FormName, scalarText(f.Kind, v))
	}
}

// scalarText is v as a field of kind shows it: dates and times as their inputs take them,
// other scalars as text, anything else as JSON.
func scalarText(kind Kind, v any) string {
	text, ok := scalarString(v)
	if !ok {
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch kind {
	case KindDateTime:
		return FormDateTime(text)
	case KindTime:
		return FormTime(text)
	}
	return text
}

// FormDateTime turns an RFC 3339 date-time into the value of a datetime-local input, in UTC
// (seconds only when set); text that is not one is returned as it is.
func FormDateTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	t = t.UTC()
	if t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04")
	}
	return t.Format("2006-01-02T15:04:05")
}

// FormTime turns a "HH:MM:SS" time with an offset into the value of a time input, in UTC;
// text that is not one is returned as it is.
func FormTime(s string) string {
	t, err := time.Parse("15:04:05Z07:00", s)
	if err != nil {
		return s
	}
	t = t.UTC()
	if t.Second() == 0 {
		return t.Format("15:04")
	}
	return t.Format("15:04:05")
}
