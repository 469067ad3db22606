package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
)

func TestOverlay(t *testing.T) {
	tests := []struct {
		name     string
		model    map[string]any
		human    map[string]any
		declared []string
		want     map[string]any
	}{
		{"bounded overlay example", map[string]any{"city": "ModelGuess", "note": "keep"}, map[string]any{"city": "Berlin", "evil": "x"},
			[]string{"city"}, map[string]any{"note": "keep", "city": "Berlin"}},
		{"declared key the person left out is stripped", map[string]any{"city": "ModelGuess", "note": "keep"}, map[string]any{},
			[]string{"city"}, map[string]any{"note": "keep"}},
		{"nothing declared keeps only the model's arguments", map[string]any{"a": 1}, map[string]any{"a": 2, "b": 3},
			nil, map[string]any{"a": 1}},
		{"nil inputs", nil, nil, []string{"a"}, map[string]any{}},
		{"nested values are taken whole", map[string]any{"addr": map[string]any{"street": "model"}}, map[string]any{"addr": map[string]any{"city": "B"}},
			[]string{"addr"}, map[string]any{"addr": map[string]any{"city": "B"}}},
		{"a null from the person is kept", map[string]any{"n": 1}, map[string]any{"n": nil}, []string{"n"}, map[string]any{"n": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, human, declared := maps.Clone(tt.model), maps.Clone(tt.human), slices.Clone(tt.declared)
			got := Overlay(tt.model, tt.human, tt.declared)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Overlay = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.model, model) || !reflect.DeepEqual(tt.human, human) || !slices.Equal(tt.declared, declared) {
				t.Errorf("Overlay modified its inputs: %v %v %v", tt.model, tt.human, tt.declared)
			}
			if got == nil {
				t.Error("Overlay returned nil")
			}
		})
	}
}

func TestOverlayResultIsIndependent(t *testing.T) {
	model := map[string]any{"a": 1}
	got := Overlay(model, nil, nil)
	got["b"] = 2
	if _, ok := model["b"]; ok {
		t.Error("the result aliases the model's map")
	}
}

func FuzzOverlay(f *testing.F) {
	f.Add(`{"city":"ModelGuess","note":"keep"}`, `{"city":"Berlin","evil":"x"}`, `{"type":"object","properties":{"city":{"type":"string"}}}`)
	f.Add(`{}`, `{"a":1}`, `{"properties":{}}`)
	f.Add(`{"a":{"b":1}}`, `{"a":null,"c":[1]}`, `{"properties":{"a":{},"c":{}}}`)
	f.Fuzz(func(t *testing.T, modelText, humanText, schemaText string) {
		var model, human map[string]any
		_ = json.Unmarshal([]byte(modelText), &model)
		_ = json.Unmarshal([]byte(humanText), &human)
		declared := DeclaredKeys(json.RawMessage(schemaText))
		modelCopy, humanCopy := maps.Clone(model), maps.Clone(human)
		got := Overlay(model, human, declared)
		for k, v := range got {
			switch {
			case slices.Contains(declared, k):
				if hv, ok := human[k]; !ok || !reflect.DeepEqual(hv, v) {
					t.Fatalf("declared key %q = %v, not the person's value", k, v)
				}
			default:
				if mv, ok := model[k]; !ok || !reflect.DeepEqual(mv, v) {
					t.Fatalf("undeclared key %q = %v, not the model's value", k, v)
				}
			}
		}
		for k := range human {
			_, inResult := got[k]
			_, fromModel := model[k]
			isDeclared := slices.Contains(declared, k)
			if (isDeclared && !inResult) || (!isDeclared && inResult && !fromModel) {
				t.Fatalf("person's key %q: declared %v, in result %v", k, isDeclared, inResult)
			}
		}
		for k := range model {
			if _, ok := got[k]; !slices.Contains(declared, k) && !ok {
				t.Fatalf("model's undeclared key %q lost", k)
			}
		}
		if !reflect.DeepEqual(model, modelCopy) || !reflect.DeepEqual(human, humanCopy) {
			t.Fatal("Overlay modified its inputs")
		}
	})
}

func ExampleOverlay() {
	declared := DeclaredKeys(json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`))
	model := map[string]any{"city": "ModelGuess", "note": "keep"}
	human := map[string]any{"city": "Berlin", "evil": "x"}
	fmt.Println(Overlay(model, human, declared))
	// Output: map[city:Berlin note:keep]
}
