package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		construct string
		at        string
	}{
		{"flat scalars with metadata", `{"type":"object","title":"Refund","description":"d","required":["amount"],"properties":{
			"amount":{"type":"number","title":"Amount","description":"EUR","minimum":0,"maximum":500,"default":10},
			"count":{"type":"integer","minimum":1},
			"note":{"type":"string","minLength":1,"maxLength":200,"format":"email","default":"a@b.c"},
			"when":{"type":"string","format":"date-time"},
			"ok":{"type":"boolean","default":true},
			"reason":{"type":"string","enum":["a","b"],"enumNames":["A","B"]},
			"titled":{"type":"string","oneOf":[{"const":"x","title":"X"}]},
			"tags":{"type":"array","items":{"type":"string","enum":["x","y"]},"minItems":1,"maxItems":2}}}`, "", ""},
		{"no properties", `{"type":"object"}`, "", ""},
		{"with $schema", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}}}`, "", ""},
		{"not an object", `[]`, "not a JSON object", ""},
		{"not JSON", `{"type":`, "not a JSON object", ""},
		{"top-level scalar", `{"type":"string"}`, `a top-level type other than "object"`, "/type"},
		{"top-level keyword", `{"type":"object","additionalProperties":false}`, "`additionalProperties`", "/additionalProperties"},
		{"top-level $defs", `{"type":"object","$defs":{}}`, "a reference ($defs)", "/$defs"},
		{"nested object", `{"type":"object","properties":{"a":{"type":"string"},"addr":{"type":"object","properties":{"s":{"type":"string"}}}}}`, "a nested object", "/properties/addr"},
		{"array of objects", `{"type":"object","properties":{"lines":{"type":"array","items":{"type":"object"}}}}`, "an array of objects", "/properties/lines/items"},
		{"array of free strings", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`, "an array of free values (only arrays of enum values are portable)", "/properties/l/items"},
		{"pattern", `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]+$"}}}`, "`pattern`", "/properties/code/pattern"},
		{"unknown format", `{"type":"object","properties":{"id":{"type":"string","format":"uuid"}}}`, `format "uuid"`, "/properties/id/format"},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/x"}}}`, "a property without a type", "/properties/a"},
		{"combinator on a typed property", `{"type":"object","properties":{"a":{"type":"string","anyOf":[]}}}`, "a combinator (anyOf)", "/properties/a/anyOf"},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`, "a list of types", "/properties/a/type"},
		{"exclusive bound", `{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0}}}`, "`exclusiveMinimum`", "/properties/n/exclusiveMinimum"},
		{"number with a string keyword", `{"type":"object","properties":{"n":{"type":"number","maxLength":3}}}`, "`maxLength`", "/properties/n/maxLength"},
		{"null type", `{"type":"object","properties":{"n":{"type":"null"}}}`, `type "null"`, "/properties/n/type"},
		{"first construct in written order", `{"type":"object","properties":{"z":{"type":"string","pattern":"x"},"a":{"type":"object"}}}`, "`pattern`", "/properties/z/pattern"},
		{"pointer escaped", `{"type":"object","properties":{"a/b":{"type":"object"}}}`, "a nested object", "/properties/a~1b"},
		{"required not names", `{"type":"object","required":"a"}`, "required that is not a list of names", "/required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(json.RawMessage(tt.raw))
			if tt.construct == "" {
				if got.Tier != TierPortable || got.String() != "portable" {
					t.Fatalf("Classify = %+v, want portable", got)
				}
				return
			}
			if got.Tier != TierDeskOnly || got.Construct != tt.construct || got.At != tt.at {
				t.Fatalf("Classify = %+v, want desk-only %q at %q", got, tt.construct, tt.at)
			}
			if !strings.HasPrefix(got.String(), "desk-only: "+tt.construct+" at ") {
				t.Fatalf("String() = %q", got.String())
			}
		})
	}
}

// FuzzClassify: Classify never panics, is deterministic, a portable schema is always usable
// and compiles, and a desk-only report always names a construct.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, `[]`, `{"type":"object","required":[]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, b := Classify(json.RawMessage(raw)), Classify(json.RawMessage(raw))
		if a != b {
			t.Fatalf("not deterministic: %+v vs %+v", a, b)
		}
		switch a.Tier {
		case TierPortable:
			if !Usable(json.RawMessage(raw)) {
				t.Fatalf("portable but not usable: %s", raw)
			}
		case TierDeskOnly:
			if a.Construct == "" {
				t.Fatalf("desk-only without a construct: %s", raw)
			}
		default:
			t.Fatalf("tier %q", a.Tier)
		}
	})
}
