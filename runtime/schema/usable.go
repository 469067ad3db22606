package schema

import (
	"bytes"
	"encoding/json"
)

// Usable is the one predicate deciding whether an input schema can carry a pause
// (docs/state-machine.md): used when a run is about to suspend for input (an unusable schema refuses the
// suspension) and when a suspended run is read back (an unusable schema means corrupt state).
// Anything that is not a JSON object, and the empty object, is unusable; an object with a
// "type" key (of any value) is usable; otherwise it is usable exactly when "properties" is a
// non-empty object.
func Usable(raw json.RawMessage) bool {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || len(top) == 0 {
		return false
	}
	if _, ok := top["type"]; ok {
		return true
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(top["properties"], &props); err != nil {
		return false
	}
	return len(props) > 0
}

// DeclaredKeys returns the keys of the schema's top-level "properties" object, in the order
// they are written, each once. It returns nil when raw is not an object or has no
// "properties" object. These are the only keys a person's input may set (see Overlay).
func DeclaredKeys(raw json.RawMessage) []string {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil
	}
	props, ok := top["properties"]
	if !ok {
		return nil
	}
	return orderedKeys(props)
}

// orderedKeys returns the keys of the JSON object raw in the order they are written, each
// once; nil when raw is not an object.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	return keys
}
