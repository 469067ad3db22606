package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestUsable(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want bool
	}{
		{"empty object", `{}`, false},
		{"empty object with spaces", ` { } `, false},
		{"null", `null`, false},
		{"PHP empty array", `[]`, false},
		{"list", `[{"type":"object"}]`, false},
		{"string", `"object"`, false},
		{"number", `1`, false},
		{"true schema", `true`, false},
		{"not JSON", `{"type":`, false},
		{"empty input", ``, false},
		{"type object", `{"type":"object"}`, true},
		{"scalar type is still usable", `{"type":"string"}`, true},
		{"type of any value", `{"type":null}`, true},
		{"type list", `{"type":["object","null"]}`, true},
		{"properties non-empty", `{"properties":{"a":{}}}`, true},
		{"properties empty", `{"properties":{}}`, false},
		{"properties empty list", `{"properties":[]}`, false},
		{"properties null", `{"properties":null}`, false},
		{"properties list", `{"properties":[{"a":1}]}`, false},
		{"properties string", `{"properties":"a"}`, false},
		{"only other keywords", `{"required":["a"],"title":"x"}`, false},
		{"type beats empty properties", `{"type":"object","properties":{}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Usable(json.RawMessage(tt.raw)); got != tt.want {
				t.Errorf("Usable(%s) = %v, want %v", tt.raw, got, tt.want)
			}
			if sch, err := Compile(json.RawMessage(tt.raw)); err == nil && sch.Usable() != tt.want {
				t.Errorf("Compile(%s).Usable() = %v, want %v", tt.raw, sch.Usable(), tt.want)
			}
		})
	}
}

func TestDeclaredKeys(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"declaration order", `{"properties":{"zeta":{},"alpha":{},"mid":{"properties":{"inner":{}}}}}`, []string{"zeta", "alpha", "mid"}},
		{"duplicate key once", `{"properties":{"a":{},"b":{},"a":{"type":"string"}}}`, []string{"a", "b"}},
		{"no properties", `{"type":"object"}`, nil},
		{"empty properties", `{"properties":{}}`, nil},
		{"properties not an object", `{"properties":["a"]}`, nil},
		{"not an object", `["properties"]`, nil},
		{"not JSON", `{"properties":{"a":`, nil},
		{"nested keys are not declared", `{"properties":{"a":{"properties":{"b":{}}}}}`, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DeclaredKeys(json.RawMessage(tt.raw)); !slices.Equal(got, tt.want) {
				t.Errorf("DeclaredKeys(%s) = %q, want %q", tt.raw, got, tt.want)
			}
			if sch, err := Compile(json.RawMessage(tt.raw)); err == nil && !slices.Equal(sch.DeclaredKeys(), tt.want) {
				t.Errorf("Compile(%s).DeclaredKeys() = %q, want %q", tt.raw, sch.DeclaredKeys(), tt.want)
			}
		})
	}
}
