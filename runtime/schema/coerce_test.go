package schema

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const coerceSchema = `{"type":"object","required":["name","flag_req","address_req"],"properties":{
	"name":{"type":"string"},
	"bio":{"type":"string","maxLength":1000},
	"qty":{"type":"integer"},
	"price":{"type":"number"},
	"flag":{"type":"boolean"},
	"flag_req":{"type":"boolean"},
	"flag_def":{"type":"boolean","default":true},
	"color":{"enum":["red","green"]},
	"level":{"type":"integer","enum":[1,2,3]},
	"yes":{"enum":[true,false]},
	"day":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"clock":{"type":"string","format":"time"},
	"mail":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"address":{"type":"object","properties":{"street":{"type":"string"},"verified":{"type":"boolean"},"zip":{"type":"integer"}}},
	"address_req":{"type":"object","properties":{"street":{"type":"string"},"verified":{"type":"boolean"}}},
	"ids":{"type":"array","items":{"type":"integer"}},
	"words":{"type":"array","items":{"type":"string"}},
	"bools":{"type":"array","items":{"type":"boolean"}},
	"days":{"type":"array","items":{"enum":["mon","tue","wed"]}},
	"levels":{"type":"array","items":{"type":"integer","enum":[10,20]}},
	"blob":{"oneOf":[{"type":"object"},{"type":"array"}]}
}}`

// base is what Coerce yields for a form with nothing filled in.
const base = `"address_req":{"verified":false},"days":[],"flag":false,"flag_def":false,"flag_req":false,"levels":[]`

func TestCoerce(t *testing.T) {
	s := mustCompile(t, coerceSchema)
	tests := []struct {
		name     string
		form     url.Values
		want     string
		wantErrs []FieldError
	}{
		{"nothing filled in", url.Values{}, `{` + base + `}`, nil},
		{"strings as typed, CRLF to LF", url.Values{"input/name": {"  Ada  "}, "input/bio": {"line 1\r\nline 2"}},
			`{` + base + `,"bio":"line 1\nline 2","name":"  Ada  "}`, nil},
		{"empty inputs are omitted", url.Values{"input/name": {""}, "input/qty": {"  "}, "input/color": {""}, "input/day": {""}, "input/ids": {"\n \n"}, "input/blob": {" "}},
			`{` + base + `}`, nil},
		{"integer", url.Values{"input/qty": {" 12 "}}, `{` + base + `,"qty":12}`, nil},
		{"integer in exponent form", url.Values{"input/qty": {"1e3"}}, `{` + base + `,"qty":1000}`, nil},
		{"integer with a fraction is refused, not truncated", url.Values{"input/qty": {"12.5"}}, `{` + base + `}`,
			[]FieldError{{"/qty", "Enter a whole number."}}},
		{"integer not a number", url.Values{"input/qty": {"twelve"}}, `{` + base + `}`, []FieldError{{"/qty", "Enter a whole number."}}},
		{"number kept exactly", url.Values{"input/price": {"2.50"}}, `{` + base + `,"price":2.50}`, nil},
		{"number leading point", url.Values{"input/price": {"-.5"}}, `{` + base + `,"price":-0.5}`, nil},
		{"number out of range", url.Values{"input/price": {"1e400"}}, `{` + base + `}`, []FieldError{{"/price", "Enter a number."}}},
		{"number with a comma", url.Values{"input/price": {"2,5"}}, `{` + base + `}`, []FieldError{{"/price", "Enter a number."}}},
		{"checkboxes checked", url.Values{"input/flag": {"on"}, "input/flag_req": {"YES"}, "input/flag_def": {"1"}},
			`{"address_req":{"verified":false},"days":[],"flag":true,"flag_def":true,"flag_req":true,"levels":[]}`, nil},
		{"checkbox with another value is unchecked", url.Values{"input/flag": {"0"}, "input/flag_req": {"maybe"}, "input/flag_def": {"off"}},
			`{` + base + `}`, nil},
		{"enum back to typed values", url.Values{"input/color": {"green"}, "input/level": {"2"}, "input/yes": {"false"}},
			`{` + base + `,"color":"green","level":2,"yes":false}`, nil},
		{"enum outside the options", url.Values{"input/color": {"purple"}, "input/level": {"2.0"}},
			`{` + base + `}`, []FieldError{{"/color", "Choose one of the listed options."}, {"/level", "Choose one of the listed options."}}},
		{"formats trimmed, local times completed as UTC", url.Values{"input/day": {" 2024-05-01 "}, "input/at": {"2024-05-01T09:30"},
			"input/clock": {"09:30"}, "input/mail": {" a@example.com "}, "input/site": {" https://example.com/x "}},
			`{` + base + `,"at":"2024-05-01T09:30:00Z","clock":"09:30:00Z","day":"2024-05-01","mail":"a@example.com","site":"https://example.com/x"}`, nil},
		{"local time with seconds", url.Values{"input/at": {"2024-05-01 09:30:15.5"}, "input/clock": {"09:30:15"}},
			`{` + base + `,"at":"2024-05-01T09:30:15.5Z","clock":"09:30:15Z"}`, nil},
		{"times with an offset are kept", url.Values{"input/at": {"2024-05-01T09:30:00+02:00"}, "input/clock": {"not a time"}},
			`{` + base + `,"at":"2024-05-01T09:30:00+02:00","clock":"not a time"}`, nil},
		{"optional object with only an unchecked box is omitted", url.Values{"input/address/verified": {""}},
			`{` + base + `}`, nil},
		{"optional object with something entered", url.Values{"input/address/street": {"Main St"}},
			`{` + base + `,"address":{"street":"Main St","verified":false}}`, nil},
		{"optional object with only a checked box", url.Values{"input/address/verified": {"on"}},
			`{` + base + `,"address":{"verified":true}}`, nil},
		{"optional object with a bad value is kept for its error", url.Values{"input/address/zip": {"x"}},
			`{` + base + `,"address":{"verified":false}}`, []FieldError{{"/address/zip", "Enter a whole number."}}},
		{"array one item per line", url.Values{"input/ids": {"1\n\n 20\r\n3\n"}, "input/words": {" two words \nnext"}, "input/bools": {"yes\nNo\n1"}},
			`{` + base + `,"bools":[true,false,true],"ids":[1,20,3],"words":["two words","next"]}`, nil},
		{"array item errors name the item", url.Values{"input/ids": {"1\n\n2.5\nx"}, "input/bools": {"maybe"}},
			`{` + base + `}`, []FieldError{{"/ids", "Item 2: Enter a whole number."}, {"/bools", "Item 1: Enter true or false."}}},
		{"multi-enum in option order, typed", url.Values{"input/days": {"wed", "mon", "wed", ""}, "input/levels": {"20"}},
			`{` + strings.Replace(strings.Replace(base, `"days":[]`, `"days":["mon","wed"]`, 1), `"levels":[]`, `"levels":[20]`, 1) + `}`, nil},
		{"multi-enum outside the options", url.Values{"input/days": {"mon", "sun"}},
			`{` + strings.Replace(base, `"days":[],`, ``, 1) + `}`, []FieldError{{"/days", "Choose only from the listed options."}}},
		{"json", url.Values{"input/blob": {` {"k": [1, 2.50]} `}}, `{` + base + `,"blob":{"k":[1,2.50]}}`, nil},
		{"json invalid", url.Values{"input/blob": {`{"k":`}}, `{` + base + `}`, []FieldError{{"/blob", "Enter valid JSON."}}},
		{"json trailing data", url.Values{"input/blob": {`{} {}`}}, `{` + base + `}`, []FieldError{{"/blob", "Enter valid JSON."}}},
		{"json number out of range", url.Values{"input/blob": {`[1e999999]`}}, `{` + base + `}`,
			[]FieldError{{"/blob", "A number in this value is too large, too small or too long."}}},
		{"json nested too deeply", url.Values{"input/blob": {strings.Repeat("[", 300) + strings.Repeat("]", 300)}}, `{` + base + `}`,
			[]FieldError{{"/blob", "This value is nested too deeply."}}},
		{"undeclared keys never reach the result", url.Values{"input/evil": {"x"}, "evil": {"x"}, "input/address/evil": {"x"}, "input": {"{}"}},
			`{` + base + `}`, nil},
		{"first value of a repeated input wins", url.Values{"input/name": {"one", "two"}}, `{` + base + `,"name":"one"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, errs := s.Coerce(tt.form)
			got, err := json.Marshal(data)
			if err != nil {
				t.Fatal(err)
			}
			want := compactJSON(t, tt.want)
			if string(got) != want {
				t.Errorf("data:\n got  %s\n want %s", got, want)
			}
			assertErrors(t, errs, tt.wantErrs)
		})
	}
}

func TestCoerceTitledEnums(t *testing.T) {
	s := mustCompile(t, wrap(`"reason":{"type":"string","oneOf":[{"const":"original_payment","title":"Refund to the original payment"},
		{"const":"store_credit","title":"Store credit"}]},"prio":{"oneOf":[{"const":1,"title":"Low"},{"const":2,"title":"High"}]},
		"channels":{"type":"array","items":{"anyOf":[{"const":"mail","title":"E-mail"},{"const":"sms","title":"Text message"}]}}`))
	data, errs := s.CoerceAndValidate(url.Values{"input/reason": {"store_credit"}, "input/prio": {"2"}, "input/channels": {"sms", "mail"}})
	if got, _ := json.Marshal(data); len(errs) != 0 || string(got) != `{"channels":["mail","sms"],"prio":2,"reason":"store_credit"}` {
		t.Errorf("consts posted: %s, errors %v", got, errs)
	}
	_, errs = s.CoerceAndValidate(url.Values{"input/reason": {"Store credit"}, "input/channels": {"Text message"}})
	assertErrors(t, errs, []FieldError{{"/reason", msgOption}, {"/channels", msgOnlyOptions}})
}

func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad expectation %s: %v", s, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestCoerceTypes(t *testing.T) {
	s := mustCompile(t, coerceSchema)
	data, _ := s.Coerce(url.Values{"input/qty": {"12"}, "input/price": {"1.5"}, "input/level": {"3"}, "input/yes": {"true"}})
	if _, ok := data["qty"].(json.Number); !ok {
		t.Errorf("qty is %T, want json.Number", data["qty"])
	}
	if _, ok := data["price"].(json.Number); !ok {
		t.Errorf("price is %T, want json.Number", data["price"])
	}
	if data["level"] != json.Number("3") || data["yes"] != true {
		t.Errorf("enum values not typed: %#v %#v", data["level"], data["yes"])
	}
}

func TestCoerceThenValidate(t *testing.T) {
	s := mustCompile(t, `{"type":"object","required":["name","qty","tags","pick","when"],"properties":{
		"name":{"type":"string","minLength":2},"qty":{"type":"integer","maximum":10},"tags":{"type":"array","items":{"type":"string"}},
		"pick":{"enum":["a","b"]},"when":{"type":"string","format":"date"},"note":{"type":"string"}}}`)
	tests := []struct {
		name string
		form url.Values
		want []FieldError
	}{
		{"empty required fields fail validation", url.Values{"input/note": {""}}, []FieldError{
			{"/name", "This field is required."}, {"/qty", "This field is required."}, {"/tags", "This field is required."},
			{"/pick", "This field is required."}, {"/when", "This field is required."}}},
		{"coercion error wins over required", url.Values{"input/name": {"Ada"}, "input/qty": {"2.5"}, "input/tags": {"a"}, "input/pick": {"z"}, "input/when": {"2024-01-01"}},
			[]FieldError{{"/qty", "Enter a whole number."}, {"/pick", "Choose one of the listed options."}}},
		{"coerced values are validated", url.Values{"input/name": {"A"}, "input/qty": {"11"}, "input/tags": {"a"}, "input/pick": {"a"}, "input/when": {"2024-13-01"}},
			[]FieldError{{"/name", "Must be at least 2 characters."}, {"/qty", "Must be 10 or less."}, {"/when", "Enter a date as YYYY-MM-DD."}}},
		{"valid", url.Values{"input/name": {"Ada"}, "input/qty": {"1e1"}, "input/tags": {"a\nb"}, "input/pick": {"b"}, "input/when": {"2024-02-29"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := s.CoerceAndValidate(tt.form)
			assertErrors(t, errs, tt.want)
		})
	}
}

func TestCoerceWholeFormJSON(t *testing.T) {
	s := mustCompile(t, budgetSchema(`"required":["x"],`))
	if f := s.Fields(); len(f) != 1 || f[0].Kind != KindJSON || f[0].FormName != "input" {
		t.Fatalf("Fields() = %+v, want one whole-form JSON field", f)
	}
	tests := []struct {
		name     string
		text     string
		want     string
		wantErrs []FieldError
	}{
		{"object kept to declared keys", `{"x":{"a":{}},"evil":1}`, `{"x":{"a":{}}}`, nil},
		{"empty", ``, `{}`, nil},
		{"not an object", `[1]`, `{}`, []FieldError{{"", "Enter a JSON object."}}},
		{"invalid", `{"x":`, `{}`, []FieldError{{"", "Enter valid JSON."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, errs := s.Coerce(url.Values{"input": {tt.text}})
			got, _ := json.Marshal(data)
			if string(got) != tt.want {
				t.Errorf("data = %s, want %s", got, tt.want)
			}
			assertErrors(t, errs, tt.wantErrs)
		})
	}
	if _, errs := s.CoerceAndValidate(url.Values{"input": {`{}`}}); !slices.Equal(errs, []FieldError{{"", "At /x: This field is required."}}) {
		t.Errorf("whole-form validation = %q", errs)
	}
}

// budgetSchema declares one property x whose expansion exceeds maxFields.
func budgetSchema(extra string) string {
	defs := `"l0":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"}}}`
	for _, l := range []string{"1", "2", "3", "4"} {
		prev := map[string]string{"1": "0", "2": "1", "3": "2", "4": "3"}[l]
		p := `{"$ref":"#/$defs/l` + prev + `"}`
		defs += `,"l` + l + `":{"type":"object","properties":{"a":` + p + `,"b":` + p + `,"c":` + p + `,"d":` + p + `,"e":` + p + `}}`
	}
	return `{"type":"object",` + extra + `"properties":{"x":{"$ref":"#/$defs/l4"}},"$defs":{` + defs + `}}`
}

// fuzzSchemas are the schemas FuzzCoerce and FuzzValidate exercise.
var fuzzSchemas = []string{
	coerceSchema,
	`{"type":"object","required":["a"],"properties":{"a":{"type":"string","minLength":2,"pattern":"^[a-z]+$"},"b":{"type":"array","items":{"type":"number","maximum":5},"maxItems":3,"uniqueItems":true},
		"c":{"anyOf":[{"type":"string","format":"email"},{"type":"null"}]},"d":{"type":"object","required":["e"],"properties":{"e":{"type":"integer","multipleOf":3}},"additionalProperties":false},
		"f":{"type":"string","format":"date-time"},"g":{"const":"fixed"}},"dependentRequired":{"a":["g"]}}`,
	budgetSchema(""),
	`{"type":"object","properties":{"a/b~c":{"type":"string"},"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"object","properties":{"n":{"$ref":"#/$defs/n"},"v":{"type":"integer"}}}},"not":{"required":["zzz"]}}`,
	rowsSchema,
}

func FuzzCoerce(f *testing.F) {
	f.Add(uint8(0), "input/name=Ada&input/qty=12&input/flag=on&input/days=mon&input/days=tue&input/ids=1%0A2&input/blob=%7B%7D")
	f.Add(uint8(0), "input/qty=12.5&input/price=1e400&input/color=purple&input/address/zip=x&evil=1")
	f.Add(uint8(1), "input/a=ab&input/b=1%0A2%0A2&input/c=x&input/d/e=4&input/f=2024-01-01T10:00")
	f.Add(uint8(2), "input=%7B%22x%22%3A%7B%7D%2C%22evil%22%3A1%7D")
	f.Add(uint8(3), "input/a~1b~0c=x&input/n/v=1&input/n/n=%5B%5D")
	f.Add(uint8(4), "input/lines=2&input/lines/0/sku=ab&input/lines/0/unit=kg&input/lines/0/notes=1&input/lines/0/notes/0/text=x&input/lines/1/qty=12")
	f.Add(uint8(4), "input/lines=-1&input/lines/0/sku=ab&input/lines/7/sku=zz&input/lines/0/unit=Pieces")
	schemas := make([]*Schema, len(fuzzSchemas))
	declared := make([][]string, len(fuzzSchemas))
	for i, raw := range fuzzSchemas {
		schemas[i] = mustCompile(f, raw)
		declared[i] = DeclaredKeys(json.RawMessage(raw))
	}
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		i := int(which) % len(schemas)
		form, _ := url.ParseQuery(query)
		data, errs := schemas[i].CoerceAndValidate(form)
		for k := range data {
			if !slices.Contains(declared[i], k) {
				t.Fatalf("Coerce produced undeclared key %q", k)
			}
		}
		if _, err := toJSON(data, 0); err != nil {
			t.Fatalf("Coerce produced data that is not JSON-typed: %v", err)
		}
		for _, e := range errs {
			if e.Message == "" {
				t.Fatalf("empty message for %q", e.Pointer)
			}
		}
	})
}
