package schema

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"runsdesk/runtime/jsonpatch"
)

// Undeclared lists the keys edited holds where the raw parameters schema declares properties
// and the key is not one of them, at every depth (through properties, additionalProperties and
// items), unless proposed holds the same key there with an equal value (a key the model sent,
// left alone): an edit may change only declared properties, whatever additionalProperties
// says, and may remove an undeclared key. Each error names the key's pointer, never a value.
func Undeclared(raw json.RawMessage, proposed, edited any) []FieldError {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var sch any
	if err := dec.Decode(&sch); err != nil {
		return nil
	}
	var out []FieldError
	undeclared(sch, proposed, edited, nil, &out)
	return out
}

func undeclared(sch, proposed, edited any, path []string, out *[]FieldError) {
	s, _ := sch.(map[string]any)
	switch ed := edited.(type) {
	case map[string]any:
		prop, _ := proposed.(map[string]any)
		props, declares := s["properties"].(map[string]any)
		extra := s["additionalProperties"]
		for _, k := range slices.Sorted(maps.Keys(ed)) {
			at := append(slices.Clip(path), k)
			pv, had := prop[k]
			switch sub, ok := props[k]; {
			case ok:
				undeclared(sub, pv, ed[k], at, out)
			case declares:
				if !had || !jsonpatch.Equal(pv, ed[k]) {
					*out = append(*out, FieldError{Pointer: jsonpatch.Pointer(at...),
						Message: "Not a parameter of this tool: an edit may change only the properties its parameters declare."})
				}
			default:
				undeclared(extra, pv, ed[k], at, out)
			}
		}
	case []any:
		prop, _ := proposed.([]any)
		for i, e := range ed {
			var pv any
			if i < len(prop) {
				pv = prop[i]
			}
			undeclared(s["items"], pv, e, append(slices.Clip(path), strconv.Itoa(i)), out)
		}
	}
}
