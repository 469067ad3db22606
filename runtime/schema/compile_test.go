package schema

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return s
}

func TestCompileAccepts(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`true`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}}}`,
		`{"$id":"https://example.com/input","type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"number","minimum":1e-300,"maximum":1e300}}}`,
	} {
		if _, err := Compile(json.RawMessage(raw)); err != nil {
			t.Errorf("Compile(%s): %v", raw, err)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	deep := strings.Repeat(`{"items":`, MaxSchemaDepth) + `{}` + strings.Repeat(`}`, MaxSchemaDepth)
	big := `{"type":"object","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`
	tests := []struct {
		name    string
		raw     string
		reason  error
		keyword string
	}{
		{"file $ref", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, ErrExternalRef, "$ref"},
		{"http $ref", `{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/schema.json"}}}`, ErrExternalRef, "$ref"},
		{"https $ref", `{"properties":{"a":{"$ref":"https://example.com/s.json#/x"}}}`, ErrExternalRef, "$ref"},
		{"relative $ref", `{"properties":{"a":{"$ref":"other.json"}}}`, ErrExternalRef, "$ref"},
		{"unknown $schema", `{"$schema":"http://example.com/meta","properties":{"a":{}}}`, ErrExternalRef, "$ref"},
		{"missing local $ref target", `{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, ErrInvalid, "$ref"},
		{"bad type name", `{"properties":{"secretname":{"type":"strin"}}}`, ErrInvalid, "type"},
		{"required not a list", `{"required":"name","properties":{"name":{}}}`, ErrInvalid, "required"},
		{"negative minLength", `{"properties":{"a":{"minLength":-1}}}`, ErrInvalid, "minLength"},
		{"bad pattern", `{"properties":{"a":{"pattern":"(["}}}`, ErrInvalid, "pattern"},
		{"not JSON", `{"type":`, ErrNotJSON, ""},
		{"trailing data", `{"type":"object"} {}`, ErrNotJSON, ""},
		{"empty", ``, ErrNotJSON, ""},
		{"too deep", deep, ErrTooDeep, ""},
		{"too large", big, ErrTooLarge, ""},
		{"huge exponent", `{"properties":{"a":{"maximum":1e999999}}}`, ErrNumberRange, ""},
		{"tiny exponent", `{"properties":{"a":{"minimum":1e-999999}}}`, ErrNumberRange, ""},
		{"overflowing number", `{"properties":{"a":{"maximum":1e400}}}`, ErrNumberRange, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tt.raw))
			if err == nil || s != nil {
				t.Fatalf("Compile = %v, %v; want an error", s, err)
			}
			if !errors.Is(err, tt.reason) {
				t.Errorf("error %q is not %q", err, tt.reason)
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *CompileError", err)
			}
			if ce.Keyword != tt.keyword {
				t.Errorf("keyword = %q, want %q", ce.Keyword, tt.keyword)
			}
			for _, leak := range []string{"passwd", "127.0.0.1", "example.com", "secretname", "strin\"", "other.json", "missing", "xxxx"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q echoes schema text %q", err, leak)
				}
			}
		})
	}
}

func TestCompileErrorLocation(t *testing.T) {
	_, err := Compile(json.RawMessage(`{"properties":{"a/b":{"properties":{"c":{"type":"strin"}}}}}`))
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *CompileError", err)
	}
	if want := "/properties/a~1b/properties/c/type"; ce.Location != want {
		t.Errorf("Location = %q, want %q", ce.Location, want)
	}
	if got, want := ce.Error(), `schema is not a valid JSON Schema (keyword "type")`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCompileAllowsLocalReferencesOnly(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a":{"$ref":"#/$defs/short"},"b":{"$ref":"#/properties/a"}},
		"$defs":{"short":{"type":"string","maxLength":2}}}`)
	errs := s.Validate(map[string]any{"a": "abc", "b": "abcd"})
	want := []FieldError{{"/a", "Must be at most 2 characters."}, {"/b", "Must be at most 2 characters."}}
	assertErrors(t, errs, want)
}

func TestSchemaConcurrentUse(t *testing.T) {
	s := mustCompile(t, `{"type":"object","required":["n"],"properties":{"n":{"type":"integer","maximum":5},"tags":{"type":"array","items":{"type":"string"}}}}`)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				fs := s.Fields()
				fs[0].Label = "changed"
				data, _ := s.Coerce(map[string][]string{"input/n": {"7"}, "input/tags": {"a\nb"}})
				if errs := s.Validate(data); len(errs) != 1 {
					t.Errorf("goroutine %d round %d: %v", i, j, errs)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := s.Fields()[0].Label; got != "N" {
		t.Errorf("Fields() shares state with callers: label %q", got)
	}
}

func FuzzCompile(f *testing.F) {
	for _, raw := range fuzzSchemas {
		f.Add(raw, `{"a":1}`)
	}
	f.Add(`{"properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/a"}}}`, `{"a":1}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"a":{"a":{}}}`)
	f.Add(`{"properties":{"a":{"type":["integer","null"],"enum":[1,null]}},"required":["a"]}`, `{}`)
	f.Add(`{"properties":{"a":{"items":{"enum":[1,"x",true]},"minItems":1}}}`, `{"a":[]}`)
	f.Fuzz(func(t *testing.T, raw, data string) {
		s, err := Compile(json.RawMessage(raw))
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *CompileError", err)
			}
			return
		}
		declared := DeclaredKeys(json.RawMessage(raw))
		form := map[string][]string{}
		var walk func([]Field)
		walk = func(fs []Field) {
			for _, f := range fs {
				form[f.FormName] = []string{data}
				walk(f.Children)
			}
		}
		walk(s.Fields())
		out, _ := s.CoerceAndValidate(form)
		for k := range out {
			if !slices.Contains(declared, k) {
				t.Fatalf("Coerce produced undeclared key %q", k)
			}
		}
		if v, msg := decodeJSONText(data); msg == "" {
			s.Validate(v)
		}
	})
}
