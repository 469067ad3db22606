package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Kind names the widget a field renders as and, with it, how Coerce reads its posted value.
// One classifier decides both, so the form and the coercion cannot drift apart.
type Kind string

// The kinds of field.
const (
	// KindString is a single-line text input; the value is posted as typed.
	KindString Kind = "string"
	// KindTextarea is a multi-line text area for a string whose maxLength exceeds 200 or which
	// carries "x-multiline": true.
	KindTextarea Kind = "textarea"
	// KindNumber is a number input (step "any" unless multipleOf says otherwise).
	KindNumber Kind = "number"
	// KindInteger is a number input with step 1; a fractional value is refused, never truncated.
	KindInteger Kind = "integer"
	// KindBoolean is a checkbox.
	KindBoolean Kind = "boolean"
	// KindEnum is a select of Options, for any enum (or const) of scalar values and for a
	// titled enum: a oneOf or anyOf whose branches are each a scalar const with a title.
	KindEnum Kind = "enum"
	// KindDate is a date input (format "date", YYYY-MM-DD).
	KindDate Kind = "date"
	// KindDateTime is a date-and-time input (format "date-time").
	KindDateTime Kind = "date-time"
	// KindTime is a time input (format "time").
	KindTime Kind = "time"
	// KindEmail is an email input (format "email" or "idn-email").
	KindEmail Kind = "email"
	// KindURI is a URL input (format "uri" or "iri").
	KindURI Kind = "uri"
	// KindObject is a fieldset of Children.
	KindObject Kind = "object"
	// KindArray is a text area taking one item per line, each coerced as Item describes.
	KindArray Kind = "array"
	// KindMultiEnum is a group of checkboxes, one per Option, for an array whose items are an
	// enum or a titled enum.
	KindMultiEnum Kind = "multi-enum"
	// KindRows is a list of fieldsets, one per item, for an array whose items are objects the
	// form can express. Item is one row (an object field whose pointers are relative to the
	// row, see Row); the posted value of FormName is the number of rows, and EditRows adds and
	// removes rows.
	KindRows Kind = "rows"
	// KindJSON is a text area taking a JSON value, for anything the form cannot express
	// (oneOf/anyOf of anything but titled consts, several non-null types, objects without
	// properties…).
	KindJSON Kind = "json"
)

// maxFields bounds how many fields a form may have; a schema describing more (for instance
// through repeated references) is offered as one JSON text area instead.
const maxFields = 500

// maxFormDepth bounds how deeply objects nest as fieldsets; deeper objects, and an object
// that contains itself, become JSON fields.
const maxFormDepth = 6

// textareaThreshold is the maxLength above which a string is edited in a text area.
const textareaThreshold = 200

// Field is one input of the form derived from a schema, and at the same time the rule by which
// Coerce reads that input back.
type Field struct {
	// Name is the property name ("" for the item of an array and for a whole-form JSON field).
	Name string
	// Pointer is the JSON pointer of the value in the submitted object, e.g. "/address/street".
	Pointer string
	// FormName is the HTML input name: "input" + Pointer, e.g. "input/address/street".
	FormName string
	// Label is the schema's title, else Name with "_" and "-" turned into spaces and the first
	// letter upper-cased.
	Label string
	// Description is the schema's description ("" if none).
	Description string
	// Required reports that Name is listed in its parent's required. A field inside an
	// optional object is only mandatory once that object is filled in.
	Required bool
	// Kind selects the widget and the coercion.
	Kind Kind
	// Format is the schema's format keyword ("" if none).
	Format string
	// Min and Max are minimum/maximum (or exclusiveMinimum/exclusiveMaximum, then
	// ExclusiveMin/ExclusiveMax is set) for number and integer fields.
	Min, Max *float64
	// ExclusiveMin and ExclusiveMax report that Min and Max themselves are not allowed.
	ExclusiveMin, ExclusiveMax bool
	// Step is the HTML step: from multipleOf when set, else "1" for integers and "any" for
	// numbers; "" for other kinds.
	Step string
	// MinLength and MaxLength bound the length of string-valued fields, in characters.
	MinLength, MaxLength *int
	// MinItems and MaxItems bound the number of entries of array and multi-enum fields.
	MinItems, MaxItems *int
	// Pattern is the schema's pattern rewritten for the HTML pattern attribute; "" when the
	// schema has none or it cannot be rewritten safely (the server still enforces it).
	Pattern string
	// Options are the enum values as strings, in schema order (enum and multi-enum fields).
	// null and "" are never options: choosing nothing means the field is left out.
	Options []string
	// OptionLabels is what a person sees for each of Options, in the same order: the title
	// of a titled enum's branch (oneOf/anyOf of {const, title}), else the option itself.
	OptionLabels []string
	// Default pre-fills the input: the default as typed text; "true" or "" for a checkbox; the
	// items one per line for an array; indented JSON for a JSON field.
	Default string
	// DefaultList holds the default items of an array and the pre-checked options of a
	// multi-enum field.
	DefaultList []string
	// Item describes one entry of an array field (its Kind and constraints; no names), and
	// for a rows field the object of one row, with pointers relative to the row.
	Item *Field
	// DefaultRows are the rows of a rows field before anything is posted (one per item of the
	// array's default), each like Item.
	DefaultRows []Field
	// Children are the fields of an object field, in declaration order.
	Children []Field
}

// node is a Field plus what Coerce needs that the view does not.
type node struct {
	field       Field
	values      []any
	item        *node
	children    []*node
	defaultRows []*node
}

// HasForm reports whether Fields returns at least one field, without building them.
func (s *Schema) HasForm() bool { return len(s.nodes) > 0 }

// NoFormReason says, in words for a schema's author, why Fields returns no field ("its type
// is string, not object", "it declares no properties", "each of its properties is false");
// "" when HasForm.
func (s *Schema) NoFormReason() string { return s.noForm }

// Fields returns the form of the schema: one Field per property of the root object, in the
// order the properties are written in the schema, nested objects as Children. It returns nil
// when the root does not accept an object with declared properties (such a schema cannot be
// answered through a form). A schema describing more than 500 fields yields one JSON field for
// the whole object. The result is a fresh copy the caller may modify.
func (s *Schema) Fields() []Field {
	if len(s.nodes) == 0 {
		return nil
	}
	out := make([]Field, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.export()
	}
	return out
}

func (n *node) export() Field {
	f := n.field
	f.Min = copyPtr(f.Min)
	f.Max = copyPtr(f.Max)
	f.MinLength = copyPtr(f.MinLength)
	f.MaxLength = copyPtr(f.MaxLength)
	f.MinItems = copyPtr(f.MinItems)
	f.MaxItems = copyPtr(f.MaxItems)
	f.Options = slices.Clone(f.Options)
	f.OptionLabels = slices.Clone(f.OptionLabels)
	f.DefaultList = slices.Clone(f.DefaultList)
	if n.item != nil {
		it := n.item.export()
		f.Item = &it
	}
	if len(n.children) > 0 {
		f.Children = make([]Field, len(n.children))
		for i, c := range n.children {
			f.Children[i] = c.export()
		}
	}
	if len(n.defaultRows) > 0 {
		f.DefaultRows = make([]Field, len(n.defaultRows))
		for i, r := range n.defaultRows {
			f.DefaultRows[i] = r.export()
		}
	}
	return f
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// buildFields classifies the root's own properties (never through a root $ref, so the form
// offers exactly the keys DeclaredKeys names) and indexes the resulting nodes by pointer.
func (s *Schema) buildFields() {
	root := s.compiled
	s.byPtr = map[string]*node{}
	s.order = map[string]int{}
	if s.noForm = formless(root); s.noForm != "" {
		return
	}
	b := &builder{s: s, open: []*jsonschema.Schema{root}}
	required := map[string]bool{}
	for _, r := range root.Required {
		required[r] = true
	}
	for _, name := range s.propertyOrder(root) {
		child := b.field(name, "/"+escapeToken(name), root.Properties[name], required[name], inherited(root.Default, name), 1)
		if child != nil {
			s.nodes = append(s.nodes, child)
		}
	}
	if len(s.nodes) == 0 {
		s.noForm = "each of its properties is false, so none accepts a value"
	}
	if b.count > maxFields {
		label := root.Title
		if label == "" {
			label = "Input"
		}
		whole := &node{field: Field{Pointer: "", FormName: "input", Label: label,
			Description: root.Description, Required: true, Kind: KindJSON}}
		whole.field.Default = jsonDefault(root.Default)
		s.nodes = []*node{whole}
		s.rootJSON = true
	}
	var walk func(n *node)
	walk = func(n *node) {
		s.byPtr[n.field.Pointer] = n
		s.order[n.field.Pointer] = len(s.order)
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, n := range s.nodes {
		walk(n)
	}
}

// formless says why the root schema cannot be a form before its properties are classified:
// it is true or false, its type excludes an object, or it declares no properties of its own.
func formless(root *jsonschema.Schema) string {
	switch {
	case root.Always != nil:
		return fmt.Sprintf("it is the schema %v", *root.Always)
	case len(root.Types) > 0 && !slices.Contains(root.Types, "object"):
		return fmt.Sprintf("its type is %s, not object", strings.Join(root.Types, " or "))
	case len(root.Properties) == 0:
		return "it declares no properties"
	}
	return ""
}

// propertyOrder lists sch's property names in the order they are written in the raw schema,
// or sorted when the raw object cannot be found (a subschema under its own $id).
func (s *Schema) propertyOrder(sch *jsonschema.Schema) []string {
	names := make([]string, 0, len(sch.Properties))
	for name := range sch.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	props := s.rawFor(sch).get("properties")
	if props == nil || !props.object || len(props.keys) != len(names) {
		return names
	}
	for _, k := range props.keys {
		if _, ok := sch.Properties[k]; !ok {
			return names
		}
	}
	return slices.Clone(props.keys)
}

// rawFor finds the raw object a compiled schema was compiled from, or nil.
func (s *Schema) rawFor(sch *jsonschema.Schema) *rawNode {
	base, frag, ok := strings.Cut(sch.Location, "#")
	if !ok || base != s.base {
		return nil
	}
	return s.raw.at(libraryPointer(frag))
}

func inherited(parentDefault any, name string) any {
	if m, ok := parentDefault.(map[string]any); ok {
		return m[name]
	}
	return nil
}

// view is a property schema seen through its $ref and single-entry allOf chain, with nullable
// anyOf/oneOf branches folded away: the first member setting an attribute wins; validation
// still applies every member.
type view struct {
	chain         []*jsonschema.Schema
	unexpressible bool
	never         bool
	title         string
	description   string
	format        string
	def           any
	types         []string
	enum          []any
	enumTitles    []string
	props         []*jsonschema.Schema
	required      map[string]bool
	items         *jsonschema.Schema
	hasItems      bool
	pattern       *regexp.Regexp
	minLength     int
	maxLength     int
	minItems      int
	maxItems      int
	minimum       *big.Rat
	maximum       *big.Rat
	exMinimum     *big.Rat
	exMaximum     *big.Rat
	multipleOf    *big.Rat
	multiline     bool
}

type builder struct {
	s     *Schema
	count int
	// open holds the object schemas being expanded, to stop recursive schemas.
	open []*jsonschema.Schema
}

func (b *builder) view(sch *jsonschema.Schema) *view {
	v := &view{required: map[string]bool{}, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	b.collect(sch, v)
	for _, m := range v.chain {
		if v.title == "" {
			v.title = m.Title
		}
		if v.description == "" {
			v.description = m.Description
		}
		if v.format == "" {
			v.format = m.Format
		}
		if v.def == nil {
			v.def = m.Default
		}
		if len(v.types) == 0 {
			v.types = m.Types
		}
		if len(v.enum) == 0 {
			switch {
			case len(m.Enum) > 0:
				v.enum = m.Enum
			case len(m.Constant) > 0:
				v.enum = m.Constant[:1]
			}
		}
		if len(m.Properties) > 0 {
			v.props = append(v.props, m)
		}
		for _, r := range m.Required {
			v.required[r] = true
		}
		if !v.hasItems {
			switch it := m.Items.(type) {
			case *jsonschema.Schema:
				v.items, v.hasItems = it, true
			case []*jsonschema.Schema:
				v.unexpressible = true
			}
			if m.Items2020 != nil {
				v.items, v.hasItems = m.Items2020, true
			}
		}
		if v.pattern == nil {
			v.pattern = m.Pattern
		}
		v.minLength = firstSet(v.minLength, m.MinLength)
		v.maxLength = firstSet(v.maxLength, m.MaxLength)
		v.minItems = firstSet(v.minItems, m.MinItems)
		v.maxItems = firstSet(v.maxItems, m.MaxItems)
		v.minimum = firstRat(v.minimum, m.Minimum)
		v.maximum = firstRat(v.maximum, m.Maximum)
		v.exMinimum = firstRat(v.exMinimum, m.ExclusiveMinimum)
		v.exMaximum = firstRat(v.exMaximum, m.ExclusiveMaximum)
		v.multipleOf = firstRat(v.multipleOf, m.MultipleOf)
		if raw := b.s.rawFor(m).get("x-multiline"); raw != nil && raw.value == true {
			v.multiline = true
		}
	}
	if len(v.props) > 1 {
		v.unexpressible = true
	}
	return v
}

func firstSet(cur, next int) int {
	if cur >= 0 {
		return cur
	}
	return next
}

func firstRat(cur, next *big.Rat) *big.Rat {
	if cur != nil {
		return cur
	}
	return next
}

// collect appends sch and everything it stands for to v.chain.
func (b *builder) collect(sch *jsonschema.Schema, v *view) {
	if sch == nil {
		return
	}
	if len(v.chain) >= 16 || slices.Contains(v.chain, sch) {
		v.unexpressible = true
		return
	}
	v.chain = append(v.chain, sch)
	if sch.Always != nil {
		if *sch.Always {
			v.unexpressible = true
		} else {
			v.never = true
		}
		return
	}
	if sch.DynamicRef != nil || sch.RecursiveRef != nil || len(sch.PrefixItems) > 0 || len(sch.AllOf) > 1 {
		v.unexpressible = true
	}
	for _, alts := range [][]*jsonschema.Schema{sch.AnyOf, sch.OneOf} {
		if len(alts) == 0 {
			continue
		}
		var rest []*jsonschema.Schema
		for _, alt := range alts {
			if !isNullOnly(alt) {
				rest = append(rest, alt)
			}
		}
		if vals, titles, ok := titledConsts(rest); ok {
			if len(v.enum) == 0 {
				v.enum, v.enumTitles = vals, titles
			}
			continue
		}
		if len(rest) != 1 || len(rest) == len(alts) {
			v.unexpressible = true
			continue
		}
		b.collect(rest[0], v)
	}
	b.collect(sch.Ref, v)
	if len(sch.AllOf) == 1 {
		b.collect(sch.AllOf[0], v)
	}
}

// titledConsts reads the branches of a titled enum: each a scalar const, with at most a
// title, a description and a type besides. ok is false when any branch is more than that.
func titledConsts(alts []*jsonschema.Schema) (vals []any, titles []string, ok bool) {
	for _, alt := range alts {
		if alt == nil || len(alt.Constant) != 1 || alt.Ref != nil || alt.Always != nil || len(alt.AllOf) > 0 ||
			len(alt.AnyOf) > 0 || len(alt.OneOf) > 0 || len(alt.Enum) > 0 || len(alt.Properties) > 0 {
			return nil, nil, false
		}
		if _, scalar := scalarString(alt.Constant[0]); !scalar && alt.Constant[0] != nil {
			return nil, nil, false
		}
		vals = append(vals, alt.Constant[0])
		titles = append(titles, alt.Title)
	}
	return vals, titles, len(vals) > 0
}

// isNullOnly reports whether sch is {"type": "null"} (the other half of a nullable anyOf).
func isNullOnly(sch *jsonschema.Schema) bool {
	return sch != nil && len(sch.Types) == 1 && sch.Types[0] == "null" && sch.Ref == nil &&
		len(sch.AllOf) == 0 && len(sch.AnyOf) == 0 && len(sch.OneOf) == 0
}

// field classifies one property. It returns nil for a property that can never be present
// (the schema false).
func (b *builder) field(name, ptr string, sch *jsonschema.Schema, required bool, inheritedDefault any, depth int) *node {
	b.count++
	v := b.view(sch)
	if v.never {
		return nil
	}
	def := v.def
	if def == nil {
		def = inheritedDefault
	}
	n := &node{field: Field{
		Name:        name,
		Pointer:     ptr,
		FormName:    "input" + ptr,
		Label:       v.title,
		Description: v.description,
		Required:    required,
		Format:      v.format,
	}}
	if n.field.Label == "" {
		n.field.Label = labelFor(name)
	}
	b.classify(n, v, def, depth)
	return n
}

func (b *builder) classify(n *node, v *view, def any, depth int) {
	f := &n.field
	if v.unexpressible || b.count > maxFields {
		b.setJSON(n, def)
		return
	}
	typ, ok := singleType(v)
	if !ok {
		b.setJSON(n, def)
		return
	}
	switch typ {
	case "object":
		b.classifyObject(n, v, def, depth)
		return
	case "array":
		b.classifyArray(n, v, def, depth)
		return
	}
	if len(v.enum) > 0 {
		opts, labels, vals, ok := enumOptions(v.enum, v.enumTitles)
		if !ok {
			b.setJSON(n, def)
			return
		}
		f.Kind, f.Options, f.OptionLabels, n.values = KindEnum, opts, labels, vals
		if d, ok := scalarString(def); ok && slices.Contains(opts, d) {
			f.Default = d
		}
		return
	}
	switch typ {
	case "number", "integer":
		f.Kind = KindNumber
		f.Step = "any"
		if typ == "integer" {
			f.Kind, f.Step = KindInteger, "1"
		}
		if v.multipleOf != nil {
			f.Step = ratString(v.multipleOf)
		}
		f.Min, f.Max = ratFloat(v.minimum), ratFloat(v.maximum)
		if v.exMinimum != nil && (v.minimum == nil || v.exMinimum.Cmp(v.minimum) >= 0) {
			f.Min, f.ExclusiveMin = ratFloat(v.exMinimum), true
		}
		if v.exMaximum != nil && (v.maximum == nil || v.exMaximum.Cmp(v.maximum) <= 0) {
			f.Max, f.ExclusiveMax = ratFloat(v.exMaximum), true
		}
		if d, ok := def.(json.Number); ok {
			f.Default = d.String()
		}
	case "boolean":
		f.Kind = KindBoolean
		if def == true {
			f.Default = "true"
		}
	case "string":
		f.Kind = stringKind(v)
		if v.minLength >= 0 {
			f.MinLength = &v.minLength
		}
		if v.maxLength >= 0 {
			f.MaxLength = &v.maxLength
		}
		if v.pattern != nil && f.Kind != KindTextarea {
			f.Pattern = htmlPattern(v.pattern.String())
		}
		if d, ok := def.(string); ok {
			f.Default = d
		}
	default:
		b.setJSON(n, def)
	}
}

// singleType reduces the type list to the one type the form collects: null is dropped
// (nullable), integer with number is number, and a missing type is inferred from properties,
// items or else taken as string. ok is false for several remaining types or only null.
func singleType(v *view) (string, bool) {
	var types []string
	for _, t := range v.types {
		if t != "null" {
			types = append(types, t)
		}
	}
	switch {
	case len(types) == 1:
		return types[0], true
	case len(types) == 2 && slices.Contains(types, "integer") && slices.Contains(types, "number"):
		return "number", true
	case len(types) > 1 || len(v.types) > 0:
		return "", false
	case len(v.props) > 0:
		return "object", true
	case v.hasItems:
		return "array", true
	}
	return "string", true
}

func stringKind(v *view) Kind {
	switch v.format {
	case "date":
		return KindDate
	case "date-time":
		return KindDateTime
	case "time":
		return KindTime
	case "email", "idn-email":
		return KindEmail
	case "uri", "iri":
		return KindURI
	}
	if v.multiline || v.maxLength > textareaThreshold {
		return KindTextarea
	}
	return KindString
}

func (b *builder) classifyObject(n *node, v *view, def any, depth int) {
	if len(v.props) != 1 || depth >= maxFormDepth {
		b.setJSON(n, def)
		return
	}
	holder := v.props[0]
	if slices.Contains(b.open, holder) {
		b.setJSON(n, def)
		return
	}
	b.open = append(b.open, holder)
	defer func() { b.open = b.open[:len(b.open)-1] }()
	for _, name := range b.s.propertyOrder(holder) {
		child := b.field(name, n.field.Pointer+"/"+escapeToken(name), holder.Properties[name],
			v.required[name], inherited(def, name), depth+1)
		if child != nil {
			n.children = append(n.children, child)
		}
	}
	if len(n.children) == 0 {
		n.children = nil
		b.setJSON(n, def)
		return
	}
	n.field.Kind = KindObject
}

func (b *builder) classifyArray(n *node, v *view, def any, depth int) {
	f := &n.field
	if len(v.enum) > 0 {
		b.setJSON(n, def)
		return
	}
	item := &node{field: Field{Kind: KindString}}
	if v.items != nil {
		iv := b.view(v.items)
		typ, ok := singleType(iv)
		if ok && typ == "object" && !iv.never && !iv.unexpressible {
			b.classifyRows(n, v, iv, def, depth)
			return
		}
		if iv.never || iv.unexpressible || !ok || typ == "array" {
			b.setJSON(n, def)
			return
		}
		item = &node{}
		b.classify(item, iv, nil, depth+1)
		if item.field.Kind == KindTextarea {
			item.field.Kind = KindString
			if iv.pattern != nil {
				item.field.Pattern = htmlPattern(iv.pattern.String())
			}
		}
		item.field.Format = iv.format
		item.field.Description = iv.description
	}
	switch item.field.Kind {
	case KindEnum:
		f.Kind, f.Options, f.OptionLabels, n.values = KindMultiEnum, item.field.Options, item.field.OptionLabels, item.values
		list, _ := def.([]any)
		for _, d := range list {
			if s, ok := scalarString(d); ok && slices.Contains(f.Options, s) && !slices.Contains(f.DefaultList, s) {
				f.DefaultList = append(f.DefaultList, s)
			}
		}
	case KindString, KindNumber, KindInteger, KindBoolean, KindDate, KindDateTime, KindTime,
		KindEmail, KindURI:
		f.Kind, n.item = KindArray, item
		list, _ := def.([]any)
		for _, d := range list {
			if s, ok := scalarString(d); ok {
				f.DefaultList = append(f.DefaultList, s)
			}
		}
		f.Default = strings.Join(f.DefaultList, "\n")
	default:
		b.setJSON(n, def)
		return
	}
	if v.minItems >= 0 {
		f.MinItems = &v.minItems
	}
	if v.maxItems >= 0 {
		f.MaxItems = &v.maxItems
	}
}

// classifyRows makes n a rows field when the items (iv) are an object the form can express:
// its Item is that object as one row, titled by the items' title or "Item", and each entry
// of the array's default (up to MaxRows) is a default row.
func (b *builder) classifyRows(n *node, v, iv *view, def any, depth int) {
	row := func(rowDefault any) *node {
		r := &node{field: Field{Label: iv.title, Description: iv.description, Required: true}}
		if r.field.Label == "" {
			r.field.Label = "Item"
		}
		if rowDefault == nil {
			rowDefault = iv.def
		}
		b.classifyObject(r, iv, rowDefault, depth+1)
		return r
	}
	item := row(nil)
	if item.field.Kind != KindObject {
		b.setJSON(n, def)
		return
	}
	n.field.Kind, n.item = KindRows, item
	list, _ := def.([]any)
	for _, d := range list[:min(len(list), MaxRows)] {
		n.defaultRows = append(n.defaultRows, row(d))
	}
	if v.minItems >= 0 {
		n.field.MinItems = &v.minItems
	}
	if v.maxItems >= 0 {
		n.field.MaxItems = &v.maxItems
	}
}

func (b *builder) setJSON(n *node, def any) {
	n.field.Kind = KindJSON
	n.field.Default = jsonDefault(def)
	n.children, n.item, n.values, n.defaultRows = nil, nil, nil, nil
}

func jsonDefault(def any) string {
	if def == nil {
		return ""
	}
	out, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return ""
	}
	return string(out)
}

// enumOptions stringifies scalar enum values and labels each with its title (titles[i], when
// given and not empty) or else the value itself. It fails for non-scalar values, for values
// that stringify alike, and when nothing but null and "" is left.
func enumOptions(values []any, titles []string) (opts, labels []string, vals []any, ok bool) {
	for i, v := range values {
		if v == nil || v == "" {
			continue
		}
		s, ok := scalarString(v)
		if !ok || slices.Contains(opts, s) {
			return nil, nil, nil, false
		}
		label := s
		if i < len(titles) && titles[i] != "" {
			label = titles[i]
		}
		opts, labels, vals = append(opts, s), append(labels, label), append(vals, v)
	}
	return opts, labels, vals, len(opts) > 0
}

// scalarString renders a JSON scalar as a form value.
func scalarString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case bool:
		return strconv.FormatBool(t), true
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), true
	}
	return "", false
}

// labelFor turns a property name into a label: "_" and "-" become spaces and the first
// letter is upper-cased ("first_name" → "First name").
func labelFor(name string) string {
	if name == "" {
		return "Input"
	}
	s := strings.NewReplacer("_", " ", "-", " ").Replace(name)
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}
