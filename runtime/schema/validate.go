package schema

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Validate checks data against the full schema (types, enum, const, min/max, lengths,
// pattern, format, nested objects, arrays, combinators…) and returns nil when it conforms.
// Otherwise it returns one error per field, in form order, keyed by the field's pointer:
//
//   - an error inside a field goes to that field; an error on an array item goes to the array
//     field as "Item N: …"; an error inside a JSON field goes to that field as "At /path: …"
//     (path segments are indexes or property names the schema declares);
//   - a missing required property is reported on the property itself ("This field is
//     required."), not on its parent;
//   - what belongs to no field (an unexpected property, a rule on the object as a whole) goes
//     to the form itself (pointer "").
//
// Messages are fixed sentences per keyword and never contain the submitted value. data must
// be JSON-shaped; Go values of other types are converted through encoding/json first, and data
// JSON cannot carry, numbers out of range or nesting deeper than 256 yield a single form-level
// error.
func (s *Schema) Validate(data any) []FieldError {
	v, err := toJSON(data, 0)
	if err != nil {
		return []FieldError{{Pointer: "", Message: msgUnreadable}}
	}
	err = s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []FieldError{{Pointer: "", Message: msgNotCheckable}}
	}
	c := &collector{s: s, data: v, best: map[string]candidate{}}
	c.walk(ve)
	return c.result()
}

type candidate struct {
	message  string
	priority int
	seq      int
}

type collector struct {
	s    *Schema
	data any
	best map[string]candidate
	seq  int
}

// Priorities: lower wins when one field has several errors.
const (
	prioRequired = iota
	prioType
	prioEnum
	prioFormat
	prioOther
	prioCombinator
)

func (c *collector) walk(e *jsonschema.ValidationError) {
	inst := libraryPointer(e.InstanceLocation)
	if sch, ok := c.s.index[e.AbsoluteKeywordLocation]; ok && sch.Always != nil && !*sch.Always {
		c.add(inst, "This value is not allowed.", prioOther)
		return
	}
	if len(inst) > 0 && underPropertyNames(e.AbsoluteKeywordLocation) {
		c.add(inst[:len(inst)-1], leafMessage("propertyNames", nil), prioOther)
		return
	}
	kw, sch := c.keyword(e)
	switch kw {
	case "required":
		c.required(inst, sch)
		return
	case "dependentRequired", "dependencies":
		if c.dependentRequired(inst, sch, e) {
			return
		}
	case "oneOf", "anyOf":
		if next := c.nonNullBranch(kw, inst, sch, e); next != nil {
			c.walk(next)
			return
		}
		if len(e.Causes) == 0 {
			c.add(inst, "Matches more than one of the allowed forms.", prioCombinator)
			return
		}
		c.add(inst, "Does not match any of the allowed forms.", prioCombinator)
		return
	case "minContains", "maxContains":
		c.add(inst, leafMessage(kw, sch), prioOther)
		return
	}
	if len(e.Causes) > 0 {
		for _, cause := range e.Causes {
			c.walk(cause)
		}
		return
	}
	prio := prioOther
	switch kw {
	case "type":
		prio = prioType
	case "enum", "const":
		prio = prioEnum
	case "format":
		prio = prioFormat
	}
	c.add(inst, leafMessage(kw, sch), prio)
}

// underPropertyNames reports whether an absolute keyword location lies inside a propertyNames
// schema, whose errors are about a property name (submitted text) rather than a value.
func underPropertyNames(abs string) bool {
	_, frag, _ := strings.Cut(abs, "#")
	toks := strings.Split(frag, "/")
	for i := 1; i < len(toks); i++ {
		if toks[i] != "propertyNames" {
			continue
		}
		switch toks[i-1] {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
			continue
		}
		return true
	}
	return false
}

// keyword finds the keyword that raised e and the schema holding it.
func (c *collector) keyword(e *jsonschema.ValidationError) (string, *jsonschema.Schema) {
	abs := e.AbsoluteKeywordLocation
	i := strings.LastIndexByte(abs, '/')
	if i < 0 {
		return "", nil
	}
	if sch, ok := c.s.index[abs[:i]]; ok {
		return abs[i+1:], sch
	}
	parts := strings.Split(abs, "/")
	if n := len(parts); n >= 4 {
		if kw := parts[n-3]; kw == "dependentRequired" || kw == "dependencies" {
			if sch, ok := c.s.index[strings.Join(parts[:n-3], "/")]; ok {
				return kw, sch
			}
		}
	}
	return abs[i+1:], nil
}

// required places "This field is required." on each property the schema requires and the data
// lacks.
func (c *collector) required(inst []string, sch *jsonschema.Schema) {
	obj, _ := dataAt(c.data, inst).(map[string]any)
	if sch == nil || obj == nil {
		c.add(inst, "Some required fields are missing.", prioRequired)
		return
	}
	for _, name := range sch.Required {
		if _, ok := obj[name]; !ok {
			c.add(append(inst[:len(inst):len(inst)], name), msgRequired, prioRequired)
		}
	}
}

// dependentRequired places "This field is required." on the property a dependentRequired (or
// draft-7 dependencies) entry names; it reports false when it cannot tell which.
func (c *collector) dependentRequired(inst []string, sch *jsonschema.Schema, e *jsonschema.ValidationError) bool {
	parts := strings.Split(e.AbsoluteKeywordLocation, "/")
	if sch == nil || len(parts) < 3 {
		return false
	}
	owner := libraryPointer("/" + parts[len(parts)-2])
	idx, err := strconv.Atoi(parts[len(parts)-1])
	if len(owner) != 1 || err != nil || idx < 0 {
		return false
	}
	var names []string
	if list, ok := sch.DependentRequired[owner[0]]; ok {
		names = list
	} else if list, ok := sch.Dependencies[owner[0]].([]string); ok {
		names = list
	}
	if idx >= len(names) {
		return false
	}
	c.add(append(inst[:len(inst):len(inst)], names[idx]), msgRequired, prioRequired)
	return true
}

// nonNullBranch looks through a nullable anyOf/oneOf: when the value is not null and exactly
// one failing branch is something other than {"type": "null"}, the errors of that branch are
// the real ones.
func (c *collector) nonNullBranch(kw string, inst []string, sch *jsonschema.Schema, e *jsonschema.ValidationError) *jsonschema.ValidationError {
	if sch == nil || len(e.Causes) == 0 || dataAt(c.data, inst) == nil {
		return nil
	}
	alts := sch.AnyOf
	if kw == "oneOf" {
		alts = sch.OneOf
	}
	var keep []*jsonschema.ValidationError
	prefix := e.AbsoluteKeywordLocation + "/"
	for _, cause := range e.Causes {
		rest := strings.TrimPrefix(cause.AbsoluteKeywordLocation, prefix)
		idxText, _, _ := strings.Cut(rest, "/")
		idx, err := strconv.Atoi(idxText)
		if err == nil && idx >= 0 && idx < len(alts) && isNullOnly(alts[idx]) {
			continue
		}
		keep = append(keep, cause)
	}
	if len(keep) == 1 && len(keep) < len(e.Causes) {
		return keep[0]
	}
	return nil
}

// leafMessage is the sentence for a failing keyword, built from the schema only.
func leafMessage(kw string, sch *jsonschema.Schema) string {
	switch kw {
	case "propertyNames":
		return "Contains a field name that is not allowed."
	case "minContains", "contains":
		return "Must contain a matching item."
	case "maxContains":
		return "Contains too many matching items."
	}
	if sch == nil {
		return "Is not valid."
	}
	switch kw {
	case "type":
		return typeMessage(sch.Types)
	case "enum":
		return msgOption
	case "const":
		return "Does not have the required value."
	case "format":
		return formatMessage(sch.Format)
	case "pattern":
		return "Does not match the required pattern."
	case "minLength":
		return fmt.Sprintf("Must be at least %s.", plural(sch.MinLength, "character"))
	case "maxLength":
		return fmt.Sprintf("Must be at most %s.", plural(sch.MaxLength, "character"))
	case "minimum":
		return fmt.Sprintf("Must be %s or more.", ratString(sch.Minimum))
	case "maximum":
		return fmt.Sprintf("Must be %s or less.", ratString(sch.Maximum))
	case "exclusiveMinimum":
		return fmt.Sprintf("Must be more than %s.", ratString(sch.ExclusiveMinimum))
	case "exclusiveMaximum":
		return fmt.Sprintf("Must be less than %s.", ratString(sch.ExclusiveMaximum))
	case "multipleOf":
		return fmt.Sprintf("Must be a multiple of %s.", ratString(sch.MultipleOf))
	case "minItems":
		return fmt.Sprintf("Must have at least %s.", plural(sch.MinItems, "item"))
	case "maxItems":
		return fmt.Sprintf("Must have at most %s.", plural(sch.MaxItems, "item"))
	case "uniqueItems":
		return "Must not contain the same item twice."
	case "minProperties":
		return fmt.Sprintf("Must have at least %s.", plural(sch.MinProperties, "entry"))
	case "maxProperties":
		return fmt.Sprintf("Must have at most %s.", plural(sch.MaxProperties, "entry"))
	case "additionalProperties", "unevaluatedProperties":
		return "Contains fields that are not allowed."
	case "additionalItems", "unevaluatedItems", "items":
		return "Contains items that are not allowed."
	case "not":
		return "This value is not allowed."
	case "contentEncoding", "contentMediaType":
		return "Is not in the expected format."
	}
	return "Is not valid."
}

func typeMessage(types []string) string {
	for _, t := range types {
		switch t {
		case "string":
			return "Must be text."
		case "number":
			return msgNumber
		case "integer":
			return msgInteger
		case "boolean":
			return "Must be true or false."
		case "array":
			return "Must be a list."
		case "object":
			return "Must be an object."
		}
	}
	return "Must be empty."
}

func formatMessage(format string) string {
	switch format {
	case "email", "idn-email":
		return "Enter a valid email address."
	case "date":
		return "Enter a date as YYYY-MM-DD."
	case "date-time":
		return "Enter a date and time as YYYY-MM-DDThh:mm:ssZ."
	case "time":
		return "Enter a time as hh:mm or hh:mm:ss."
	case "uri", "iri":
		return "Enter a full URL, such as https://example.com/."
	case "uri-reference", "iri-reference":
		return "Enter a valid URL or path."
	case "uuid":
		return "Enter a valid UUID."
	case "ipv4":
		return "Enter a valid IPv4 address."
	case "ipv6":
		return "Enter a valid IPv6 address."
	case "hostname", "idn-hostname":
		return "Enter a valid host name."
	case "duration":
		return "Enter a duration such as P1D or PT2H."
	case "regex":
		return "Enter a valid regular expression."
	}
	return "Is not in the expected format."
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	if unit == "entry" {
		return strconv.Itoa(n) + " entries"
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// add records msg for the instance at inst, placed on its field.
func (c *collector) add(inst []string, msg string, prio int) {
	ptr, msg := c.s.place(inst, msg)
	c.seq++
	if cur, ok := c.best[ptr]; ok && cur.priority <= prio {
		return
	}
	c.best[ptr] = candidate{message: msg, priority: prio, seq: c.seq}
}

func (c *collector) result() []FieldError {
	out := make([]FieldError, 0, len(c.best))
	for ptr, cand := range c.best {
		out = append(out, FieldError{Pointer: ptr, Message: cand.message})
	}
	c.s.sortErrors(out)
	return out
}

// place maps an instance location to the nearest enclosing field (through rows, the field of
// that row) and words the message for where inside that field the problem is.
func (s *Schema) place(inst []string, msg string) (string, string) {
	for i := len(inst); i >= 0; i-- {
		n, ok := s.byPtr[joinPointer(inst[:i])]
		if !ok {
			continue
		}
		n, rest := n.within(inst[i:])
		ptr := joinPointer(inst[:len(inst)-len(rest)])
		if len(rest) == 0 {
			return ptr, msg
		}
		switch n.field.Kind {
		case KindArray, KindMultiEnum:
			if idx, ok := arrayIndex(rest[0]); ok && len(rest) == 1 {
				return ptr, fmt.Sprintf("Item %d: %s", idx+1, msg)
			}
		case KindJSON:
			return ptr, fmt.Sprintf("At %s: %s", s.safePath(rest), msg)
		}
		return ptr, msg
	}
	return "", msg
}

// safePath renders a location inside a JSON field with only what the schema itself says:
// array indexes and declared property names; anything else shows as "…".
func (s *Schema) safePath(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		if _, ok := arrayIndex(t); ok || s.propNames[t] {
			b.WriteString(escapeToken(t))
		} else {
			b.WriteString("…")
		}
	}
	return b.String()
}

// sortErrors orders errors as the fields appear in the form, form-level ones first.
func (s *Schema) sortErrors(errs []FieldError) {
	rank := func(ptr string) int {
		for toks := splitPointer(ptr); ; toks = toks[:len(toks)-1] {
			if r, ok := s.order[joinPointer(toks)]; ok {
				return r
			}
			if len(toks) == 0 {
				return -1
			}
		}
	}
	sort.SliceStable(errs, func(i, j int) bool {
		ri, rj := rank(errs[i].Pointer), rank(errs[j].Pointer)
		if ri != rj {
			return ri < rj
		}
		return errs[i].Pointer < errs[j].Pointer
	})
}

// dataAt navigates data by unescaped pointer tokens; nil when the path does not exist.
func dataAt(data any, toks []string) any {
	cur := data
	for _, t := range toks {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[t]
		case []any:
			i, ok := arrayIndex(t)
			if !ok || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}
