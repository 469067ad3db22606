package schema

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Tier is how far an input schema travels: TierPortable fits the MCP elicitation subset (any
// MCP client can render it), TierDeskOnly needs this desk's form engine.
type Tier string

// The two tiers.
const (
	TierPortable Tier = "portable"
	TierDeskOnly Tier = "desk-only"
)

// TierReport is the tier of one schema and, when desk-only, the first construct (in written
// order) that makes it so, with the JSON Pointer where it stands.
type TierReport struct {
	Tier      Tier
	Construct string
	At        string
}

// String renders the report as `portable` or `desk-only: CONSTRUCT at POINTER`.
func (r TierReport) String() string {
	if r.Tier == TierPortable {
		return string(TierPortable)
	}
	at := r.At
	if at == "" {
		at = "/"
	}
	return fmt.Sprintf("%s: %s at %s", TierDeskOnly, r.Construct, at)
}

// Keywords of the MCP elicitation subset: a flat object whose properties are strings (with
// lengths and one of four formats), numbers or integers (with bounds), booleans, string enums
// (single-select, titled or not) or arrays of string enums (multi-select), each with title,
// description and default.
var (
	tierTopKeys    = []string{"$schema", "type", "title", "description", "properties", "required"}
	tierCommonKeys = []string{"type", "title", "description", "default"}
	tierStringKeys = []string{"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"}
	tierNumberKeys = []string{"minimum", "maximum"}
	tierArrayKeys  = []string{"items", "minItems", "maxItems", "uniqueItems"}
	tierFormats    = []string{"email", "uri", "date", "date-time"}
)

// Classify labels raw portable when it fits the MCP elicitation subset, else desk-only naming
// the first construct outside it (a nested object, an array of objects, `pattern`, a
// combinator, a `$ref`, a format the subset lacks, …). It is a pure function of raw; text that
// is not a JSON object is desk-only ("not a JSON object").
func Classify(raw json.RawMessage) TierReport {
	top, ok := objectOf(raw)
	if !ok {
		return deskOnly("not a JSON object", "")
	}
	for _, k := range orderedKeys(raw) {
		if !slices.Contains(tierTopKeys, k) {
			return deskOnly(keyword(k), "/"+escapeToken(k))
		}
	}
	if typ, ok := stringOf(top["type"]); !ok || typ != "object" {
		return deskOnly("a top-level type other than \"object\"", "/type")
	}
	if r, ok := requiredProblem(top["required"]); !ok {
		return r
	}
	props, ok := objectOf(top["properties"])
	if !ok {
		if _, present := top["properties"]; present {
			return deskOnly("properties that are not an object", "/properties")
		}
		return TierReport{Tier: TierPortable}
	}
	for _, name := range orderedKeys(top["properties"]) {
		at := "/properties/" + escapeToken(name)
		if r := classifyProperty(props[name], at); r.Tier != TierPortable {
			return r
		}
	}
	return TierReport{Tier: TierPortable}
}

// requiredProblem checks that required is absent or a list of names.
func requiredProblem(raw json.RawMessage) (TierReport, bool) {
	if raw == nil {
		return TierReport{}, true
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return deskOnly("required that is not a list of names", "/required"), false
	}
	return TierReport{}, true
}

// classifyProperty labels one property schema of the flat object.
func classifyProperty(raw json.RawMessage, at string) TierReport {
	p, ok := objectOf(raw)
	if !ok {
		return deskOnly("a property schema that is not an object", at)
	}
	typ, ok := stringOf(p["type"])
	if !ok {
		if _, present := p["type"]; present {
			return deskOnly("a list of types", at+"/type")
		}
		return deskOnly("a property without a type", at)
	}
	var allowed []string
	switch typ {
	case "string":
		allowed = tierStringKeys
	case "number", "integer":
		allowed = tierNumberKeys
	case "boolean":
	case "object":
		return deskOnly("a nested object", at)
	case "array":
		return classifyArray(p, raw, at)
	default:
		return deskOnly(fmt.Sprintf("type %q", typ), at+"/type")
	}
	for _, k := range orderedKeys(raw) {
		if !slices.Contains(tierCommonKeys, k) && !slices.Contains(allowed, k) {
			return deskOnly(keyword(k), at+"/"+escapeToken(k))
		}
	}
	if f, present := p["format"]; present {
		if s, ok := stringOf(f); !ok || !slices.Contains(tierFormats, s) {
			return deskOnly(fmt.Sprintf("format %s", compactText(f)), at+"/format")
		}
	}
	return TierReport{Tier: TierPortable}
}

// classifyArray labels an array property: portable only as a multi-select of string enums.
func classifyArray(p map[string]json.RawMessage, raw json.RawMessage, at string) TierReport {
	for _, k := range orderedKeys(raw) {
		if !slices.Contains(tierCommonKeys, k) && !slices.Contains(tierArrayKeys, k) {
			return deskOnly(keyword(k), at+"/"+escapeToken(k))
		}
	}
	items, ok := objectOf(p["items"])
	if !ok {
		return deskOnly("an array without an items schema", at)
	}
	if t, _ := stringOf(items["type"]); t == "object" {
		return deskOnly("an array of objects", at+"/items")
	}
	if t, _ := stringOf(items["type"]); t == "array" {
		return deskOnly("an array of arrays", at+"/items")
	}
	_, hasEnum := items["enum"]
	_, hasAnyOf := items["anyOf"]
	if !hasEnum && !hasAnyOf {
		return deskOnly("an array of free values (only arrays of enum values are portable)", at+"/items")
	}
	return TierReport{Tier: TierPortable}
}

// keyword names a schema keyword outside the subset.
func keyword(k string) string {
	switch k {
	case "$ref", "$defs", "definitions":
		return fmt.Sprintf("a reference (%s)", k)
	case "anyOf", "oneOf", "allOf", "not", "if", "then", "else":
		return fmt.Sprintf("a combinator (%s)", k)
	}
	return fmt.Sprintf("`%s`", k)
}

func deskOnly(construct, at string) TierReport {
	return TierReport{Tier: TierDeskOnly, Construct: construct, At: at}
}

// objectOf decodes raw as a JSON object.
func objectOf(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// stringOf decodes raw as a JSON string.
func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// compactText is raw shortened for a message.
func compactText(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
