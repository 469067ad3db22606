// Package schema holds every rule runsdesk applies to a tool's input schema: whether a schema
// is usable at all (Usable), compiling it for full JSON Schema validation (draft
// 2020-12, no remote or file references), deriving the form fields from it, coercing a posted
// form into typed JSON, validating data with friendly per-field errors, bounding the overlay of
// human values onto a tool call (Overlay), and the turn digests (docs/state-machine.md, Rules).
//
// A compiled Schema is immutable and safe for concurrent use.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// MaxSchemaBytes is the largest raw schema Compile accepts.
const MaxSchemaBytes = 256 << 10

// MaxSchemaDepth is the deepest nesting of JSON objects and arrays Compile accepts in a raw schema.
const MaxSchemaDepth = 64

// resourceURL is the absolute in-memory address every schema is compiled under.
const resourceURL = "mem://runsdesk/input-schema.json"

// Reasons a schema is refused; a *CompileError wraps exactly one of them.
var (
	// ErrTooLarge: the raw schema exceeds MaxSchemaBytes.
	ErrTooLarge = errors.New("schema is larger than 256 KiB")
	// ErrTooDeep: the raw schema nests objects and arrays deeper than MaxSchemaDepth.
	ErrTooDeep = errors.New("schema is nested too deeply")
	// ErrNotJSON: the raw schema is not a single well-formed JSON value.
	ErrNotJSON = errors.New("schema is not valid JSON")
	// ErrNumberRange: the raw schema holds a number too large, too small or too long to handle.
	ErrNumberRange = errors.New("schema holds a number out of range")
	// ErrExternalRef: the schema refers to another document ($ref, $schema or $dynamicRef
	// outside itself); only references within the schema are allowed.
	ErrExternalRef = errors.New("schema refers to an external document; only references within the schema are allowed")
	// ErrInvalid: the schema is well-formed JSON but not a valid JSON Schema.
	ErrInvalid = errors.New("schema is not a valid JSON Schema")
)

// CompileError explains why Compile refused a schema. Its message names the reason and, when
// known, the offending keyword; it never contains schema text or values.
type CompileError struct {
	// Reason is one of the Err* sentinels of this package.
	Reason error
	// Keyword is the JSON Schema keyword at fault ("type", "pattern", "$ref"…), or "".
	Keyword string
	// Location is the JSON pointer of the offending value within the schema, or "". It is
	// not part of Error() because property names are schema content.
	Location string
}

// Error returns the reason plus the keyword when known.
func (e *CompileError) Error() string {
	if e.Keyword != "" {
		return fmt.Sprintf("%v (keyword %q)", e.Reason, e.Keyword)
	}
	return e.Reason.Error()
}

// Unwrap returns Reason, so errors.Is(err, ErrInvalid) and friends work.
func (e *CompileError) Unwrap() error { return e.Reason }

// Schema is a compiled input schema together with the form derived from it.
// Build one with Compile; the zero value is not usable.
type Schema struct {
	compiled *jsonschema.Schema
	base     string
	raw      *rawNode
	index    map[string]*jsonschema.Schema
	nodes    []*node
	byPtr    map[string]*node
	order    map[string]int
	declared []string
	usable   bool
	rootJSON bool
	// noForm is NoFormReason.
	noForm string
	// propNames holds every property name the schema declares anywhere.
	propNames map[string]bool
}

// Compile checks raw against the size, depth and number bounds, then compiles it as a JSON
// Schema (draft 2020-12 unless raw names another draft in $schema; formats asserted) under an
// in-memory address, with every external document refused, and derives its form fields.
// Errors are *CompileError values wrapping ErrTooLarge, ErrTooDeep, ErrNotJSON,
// ErrNumberRange, ErrExternalRef or ErrInvalid.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, &CompileError{Reason: ErrTooLarge}
	}
	tree, err := parseRaw(raw, MaxSchemaDepth)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.ExtractAnnotations = true
	c.LoadURL = refuseURL
	if err := c.AddResource(resourceURL, bytes.NewReader(raw)); err != nil {
		return nil, &CompileError{Reason: ErrNotJSON}
	}
	compiled, err := c.Compile(resourceURL)
	if err != nil {
		return nil, explainCompile(err)
	}
	s := &Schema{
		compiled: compiled,
		base:     locationBase(compiled.Location),
		raw:      tree,
		index:    map[string]*jsonschema.Schema{},
		declared: DeclaredKeys(raw),
		usable:   Usable(raw),
	}
	indexSchemas(compiled, s.index)
	s.propNames = map[string]bool{}
	for _, sub := range s.index {
		for name := range sub.Properties {
			s.propNames[name] = true
		}
	}
	s.buildFields()
	return s, nil
}

// DeclaredKeys returns DeclaredKeys of the raw schema s was compiled from, computed once by
// Compile. The slice is shared by every caller and must not be modified.
func (s *Schema) DeclaredKeys() []string { return s.declared }

// Usable returns Usable of the raw schema s was compiled from, computed once by Compile.
func (s *Schema) Usable() bool { return s.usable }

// errRefusedURL is returned by the compiler's loader for every URL.
var errRefusedURL = errors.New("loading external documents is disabled")

func refuseURL(string) (io.ReadCloser, error) {
	return nil, errRefusedURL
}

func explainCompile(err error) error {
	if errors.Is(err, errRefusedURL) {
		return &CompileError{Reason: ErrExternalRef, Keyword: "$ref"}
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		loc := deepestInstanceLocation(ve)
		return &CompileError{Reason: ErrInvalid, Keyword: keywordAt(loc), Location: loc}
	}
	if strings.HasSuffix(err.Error(), " not found") {
		return &CompileError{Reason: ErrInvalid, Keyword: "$ref"}
	}
	return &CompileError{Reason: ErrInvalid}
}

func deepestInstanceLocation(ve *jsonschema.ValidationError) string {
	best := ""
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.InstanceLocation) > len(best) {
			best = e.InstanceLocation
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return joinPointer(libraryPointer(best))
}

func keywordAt(ptr string) string {
	toks := splitPointer(ptr)
	for i := len(toks) - 1; i >= 0; i-- {
		if knownKeywords[toks[i]] {
			return toks[i]
		}
	}
	return ""
}

// knownKeywords are the JSON Schema keywords a CompileError may name.
var knownKeywords = map[string]bool{
	"$schema": true, "$id": true, "$ref": true, "$defs": true, "$anchor": true, "$dynamicRef": true,
	"$dynamicAnchor": true, "$vocabulary": true, "$comment": true, "definitions": true,
	"type": true, "enum": true, "const": true, "format": true, "pattern": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "items": true, "prefixItems": true,
	"contains": true, "minContains": true, "maxContains": true, "additionalItems": true,
	"properties": true, "required": true, "additionalProperties": true, "patternProperties": true,
	"propertyNames": true, "minProperties": true, "maxProperties": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"unevaluatedItems": true, "unevaluatedProperties": true,
	"title": true, "description": true, "default": true, "examples": true, "readOnly": true,
	"writeOnly": true, "deprecated": true, "contentEncoding": true, "contentMediaType": true,
	"contentSchema": true,
}

func locationBase(loc string) string {
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		return loc[:i]
	}
	return loc
}

// indexSchemas records every schema reachable from s under its absolute location, so that a
// validation error's keyword location leads back to the schema that raised it.
func indexSchemas(s *jsonschema.Schema, index map[string]*jsonschema.Schema) {
	if s == nil {
		return
	}
	if _, seen := index[s.Location]; seen {
		return
	}
	index[s.Location] = s
	visit := func(subs ...*jsonschema.Schema) {
		for _, sub := range subs {
			indexSchemas(sub, index)
		}
	}
	visit(s.Ref, s.RecursiveRef, s.DynamicRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
		s.UnevaluatedProperties, s.Items2020, s.Contains, s.UnevaluatedItems, s.ContentSchema)
	visit(s.AllOf...)
	visit(s.AnyOf...)
	visit(s.OneOf...)
	visit(s.PrefixItems...)
	for _, sub := range s.Properties {
		visit(sub)
	}
	for _, sub := range s.PatternProperties {
		visit(sub)
	}
	for _, sub := range s.DependentSchemas {
		visit(sub)
	}
	for _, dep := range s.Dependencies {
		if sub, ok := dep.(*jsonschema.Schema); ok {
			visit(sub)
		}
	}
	for _, v := range []any{s.AdditionalProperties, s.AdditionalItems, s.Items} {
		switch t := v.(type) {
		case *jsonschema.Schema:
			visit(t)
		case []*jsonschema.Schema:
			visit(t...)
		}
	}
}

// rawNode is a decoded JSON value that keeps the order of object keys.
type rawNode struct {
	keys   []string
	fields map[string]*rawNode
	items  []*rawNode
	value  any
	object bool
	array  bool
}

func (n *rawNode) get(key string) *rawNode {
	if n == nil || !n.object {
		return nil
	}
	return n.fields[key]
}

// at navigates the node by an unescaped list of JSON pointer tokens.
func (n *rawNode) at(tokens []string) *rawNode {
	cur := n
	for _, tok := range tokens {
		switch {
		case cur == nil:
			return nil
		case cur.object:
			cur = cur.fields[tok]
		case cur.array:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(cur.items) {
				return nil
			}
			cur = cur.items[i]
		default:
			return nil
		}
	}
	return cur
}

// parseRaw decodes raw into an order-keeping tree, enforcing the depth bound and the number
// bounds, and refusing trailing data.
func parseRaw(raw []byte, maxDepth int) (*rawNode, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	root, err := parseValue(dec, 0, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &CompileError{Reason: ErrNotJSON}
	}
	return root, nil
}

func parseValue(dec *json.Decoder, depth, maxDepth int) (*rawNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, &CompileError{Reason: ErrNotJSON}
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > maxDepth {
			return nil, &CompileError{Reason: ErrTooDeep}
		}
		if t == '[' {
			n := &rawNode{array: true}
			for dec.More() {
				item, err := parseValue(dec, depth+1, maxDepth)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, item)
			}
			if _, err := dec.Token(); err != nil {
				return nil, &CompileError{Reason: ErrNotJSON}
			}
			return n, nil
		}
		n := &rawNode{object: true, fields: map[string]*rawNode{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, &CompileError{Reason: ErrNotJSON}
			}
			key, ok := kt.(string)
			if !ok {
				return nil, &CompileError{Reason: ErrNotJSON}
			}
			val, err := parseValue(dec, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			if _, dup := n.fields[key]; !dup {
				n.keys = append(n.keys, key)
			}
			n.fields[key] = val
		}
		if _, err := dec.Token(); err != nil {
			return nil, &CompileError{Reason: ErrNotJSON}
		}
		return n, nil
	case json.Number:
		if !numberInRange(string(t)) {
			return nil, &CompileError{Reason: ErrNumberRange}
		}
		return &rawNode{value: t}, nil
	default:
		return &rawNode{value: t}, nil
	}
}
