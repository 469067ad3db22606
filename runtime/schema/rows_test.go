package schema

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
)

// rowsSchema has a list of rows with a nested list of rows and a titled enum inside.
const rowsSchema = `{"type":"object","required":["lines"],"properties":{
	"lines":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","title":"Line","required":["sku"],"properties":{
		"sku":{"type":"string","minLength":2},
		"qty":{"type":"integer","maximum":9},
		"gift":{"type":"boolean"},
		"unit":{"oneOf":[{"const":"pc","title":"Pieces"},{"const":"kg","title":"Kilograms"}]},
		"notes":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"}}}}}}},
	"after":{"type":"string"}}}`

func TestCoerceRows(t *testing.T) {
	s := mustCompile(t, rowsSchema)
	tests := []struct {
		name     string
		form     url.Values
		want     string
		wantErrs []FieldError
	}{
		{"no rows: the required list says so", url.Values{}, `{}`, []FieldError{{"/lines", msgRequired}}},
		{"rows in order, typed, a nested list inside", url.Values{"input/lines": {"2"},
			"input/lines/0/sku": {"A-1"}, "input/lines/0/qty": {"2"}, "input/lines/0/unit": {"kg"},
			"input/lines/0/notes": {"1"}, "input/lines/0/notes/0/text": {"fragile"},
			"input/lines/1/sku": {"B-2"}, "input/lines/1/gift": {"on"}},
			`{"lines":[{"gift":false,"notes":[{"text":"fragile"}],"qty":2,"sku":"A-1","unit":"kg"},{"gift":true,"sku":"B-2"}]}`, nil},
		{"errors land on the field of their row", url.Values{"input/lines": {"3"},
			"input/lines/0/sku": {"A-1"}, "input/lines/1/qty": {"12"}, "input/lines/2/sku": {"x"}, "input/lines/2/qty": {"1.5"}},
			`{"lines":[{"gift":false,"sku":"A-1"},{"gift":false,"qty":12},{"gift":false,"sku":"x"}]}`,
			[]FieldError{{"/lines/1/qty", "Must be 9 or less."}, {"/lines/1/sku", msgRequired},
				{"/lines/2/qty", msgInteger}, {"/lines/2/sku", "Must be at least 2 characters."}}},
		{"too many rows", url.Values{"input/lines": {"4"}, "input/lines/0/sku": {"aa"}, "input/lines/1/sku": {"bb"},
			"input/lines/2/sku": {"cc"}, "input/lines/3/sku": {"dd"}},
			`{"lines":[{"gift":false,"sku":"aa"},{"gift":false,"sku":"bb"},{"gift":false,"sku":"cc"},{"gift":false,"sku":"dd"}]}`,
			[]FieldError{{"/lines", "Must have at most 3 items."}}},
		{"a count that is not a number", url.Values{"input/lines": {"two"}}, `{}`, []FieldError{{"/lines", msgRowCount}}},
		{"values of rows beyond the count are ignored", url.Values{"input/lines": {"1"}, "input/lines/0/sku": {"aa"}, "input/lines/1/sku": {"bb"}},
			`{"lines":[{"gift":false,"sku":"aa"}]}`, nil},
		{"a huge count is bounded", url.Values{"input/lines": {"99999999"}}, ``, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, errs := s.CoerceAndValidate(tt.form)
			if tt.want == "" {
				if rows, _ := data["lines"].([]any); len(rows) != MaxRows {
					t.Errorf("%d rows, want at most MaxRows (%d)", len(rows), MaxRows)
				}
				return
			}
			got, _ := json.Marshal(data)
			if string(got) != tt.want {
				t.Errorf("data:\n got  %s\n want %s", got, tt.want)
			}
			assertErrors(t, errs, tt.wantErrs)
		})
	}
}

func TestRowPlacesPointersUnderTheRow(t *testing.T) {
	lines := mustCompile(t, rowsSchema).Fields()[0]
	row := lines.Row(1)
	if row.Pointer != "/lines/1" || row.Label != "Line 2" || row.Kind != KindObject {
		t.Fatalf("row 2: %q %q %s", row.Pointer, row.Label, row.Kind)
	}
	var names []string
	for _, c := range row.Children {
		names = append(names, c.Pointer+"="+c.FormName)
	}
	want := []string{"/lines/1/sku=input/lines/1/sku", "/lines/1/qty=input/lines/1/qty", "/lines/1/gift=input/lines/1/gift",
		"/lines/1/unit=input/lines/1/unit", "/lines/1/notes=input/lines/1/notes"}
	if !slices.Equal(names, want) {
		t.Errorf("row children %q, want %q", names, want)
	}
	if note := row.Children[4].Row(0); note.Children[0].FormName != "input/lines/1/notes/0/text" {
		t.Errorf("nested row field %q", note.Children[0].FormName)
	}
	if lines.Item.Pointer != "" || lines.Item.Children[0].Pointer != "/sku" {
		t.Error("Row changed the template")
	}
}

func TestEditRows(t *testing.T) {
	s := mustCompile(t, rowsSchema)
	form := url.Values{"_csrf": {"tok"}, "input/after": {"kept"}, "input/lines": {"3"},
		"input/lines/0/sku": {"a"}, "input/lines/1/sku": {"b"}, "input/lines/1/notes": {"1"}, "input/lines/1/notes/0/text": {"n"},
		"input/lines/2/sku": {"c"}, "input/lines/2/qty": {"3"}}
	tests := []struct {
		name, action string
		want         url.Values
	}{
		{"add a row", "add /lines", url.Values{"_csrf": {"tok"}, "input/after": {"kept"}, "input/lines": {"4"},
			"input/lines/0/sku": {"a"}, "input/lines/1/sku": {"b"}, "input/lines/1/notes": {"1"}, "input/lines/1/notes/0/text": {"n"},
			"input/lines/2/sku": {"c"}, "input/lines/2/qty": {"3"}}},
		{"remove a middle row: the later rows move up", "remove /lines/1", url.Values{"_csrf": {"tok"}, "input/after": {"kept"}, "input/lines": {"2"},
			"input/lines/0/sku": {"a"}, "input/lines/1/sku": {"c"}, "input/lines/1/qty": {"3"}}},
		{"add a nested row", "add /lines/1/notes", url.Values{"_csrf": {"tok"}, "input/after": {"kept"}, "input/lines": {"3"},
			"input/lines/0/sku": {"a"}, "input/lines/1/sku": {"b"}, "input/lines/1/notes": {"2"}, "input/lines/1/notes/0/text": {"n"},
			"input/lines/2/sku": {"c"}, "input/lines/2/qty": {"3"}}},
		{"remove a nested row", "remove /lines/1/notes/0", url.Values{"_csrf": {"tok"}, "input/after": {"kept"}, "input/lines": {"3"},
			"input/lines/0/sku": {"a"}, "input/lines/1/sku": {"b"}, "input/lines/1/notes": {"0"},
			"input/lines/2/sku": {"c"}, "input/lines/2/qty": {"3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := s.EditRows(form, tt.action)
			if !ok || !equalValues(got, tt.want) {
				t.Errorf("EditRows(%q) = %v %v\n want %v", tt.action, got, ok, tt.want)
			}
		})
	}
	if form.Get("input/lines") != "3" || form.Get("input/lines/1/sku") != "b" {
		t.Error("EditRows changed the posted form")
	}
	for _, action := range []string{"", "add", "add /after", "add /nope", "remove /lines/3", "remove /lines/x", "remove /lines", "grow /lines", "add /lines/0"} {
		if _, ok := s.EditRows(form, action); ok {
			t.Errorf("EditRows(%q) accepted", action)
		}
	}
	full := url.Values{"input/lines": {"100"}}
	if got, ok := s.EditRows(full, "add /lines"); !ok || got.Get("input/lines") != "100" {
		t.Errorf("add beyond MaxRows: %v %v", got.Get("input/lines"), ok)
	}
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func FuzzEditRows(f *testing.F) {
	f.Add("input/lines=2&input/lines/0/sku=a&input/lines/1/sku=b", "remove /lines/0")
	f.Add("input/lines=1&input/lines/0/notes=1&input/lines/0/notes/0/text=x", "add /lines/0/notes")
	f.Add("input/lines=x", "add /lines")
	s := mustCompile(f, rowsSchema)
	f.Fuzz(func(t *testing.T, query, action string) {
		form, _ := url.ParseQuery(query)
		out, ok := s.EditRows(form, action)
		if !ok {
			return
		}
		for k := range out {
			if _, before := form[k]; !before && !isRowsKey(k) {
				t.Fatalf("EditRows(%q) made up the key %q", action, k)
			}
		}
		if data, _ := s.CoerceAndValidate(out); data == nil {
			t.Fatal("the edited form could not be coerced")
		}
	})
}

// isRowsKey reports whether k is a form name under the lines rows field.
func isRowsKey(k string) bool {
	return len(k) >= len("input/lines") && k[:len("input/lines")] == "input/lines"
}
