package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

const validateSchema = `{"type":"object","required":["name","address"],"additionalProperties":false,"properties":{
	"name":{"type":"string","minLength":3,"maxLength":10,"pattern":"^[A-Z]"},
	"age":{"type":"integer","minimum":18,"maximum":99},
	"score":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
	"half":{"type":"number","multipleOf":0.5},
	"color":{"enum":["red","green"]},
	"fixed":{"const":"yes"},
	"mail":{"type":"string","format":"email"},
	"day":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"clock":{"type":"string","format":"time"},
	"site":{"type":"string","format":"uri"},
	"id":{"type":"string","format":"uuid"},
	"flag":{"type":"boolean"},
	"tags":{"type":"array","items":{"type":"string","maxLength":3},"minItems":1,"maxItems":3,"uniqueItems":true},
	"days":{"type":"array","items":{"enum":["mon","tue"]}},
	"address":{"type":"object","required":["street","city"],"properties":{"street":{"type":"string"},"city":{"type":"string","minLength":2},
		"zip":{"type":"string","pattern":"^[0-9]{5}$"}}},
	"meta":{"oneOf":[{"type":"object","required":["qty"],"properties":{"qty":{"type":"integer","minimum":1}}},{"type":"string"}]},
	"note":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}]},
	"labels":{"type":"object","minProperties":1,"additionalProperties":{"type":"string"}},
	"rows":{"type":"array","items":{"type":"object","required":["qty"],"properties":{"qty":{"type":"integer","maximum":9}}}},
	"notx":{"type":"string","not":{"const":"forbidden"}},
	"list":{"type":"array","contains":{"const":"x"}}
}}`

func TestValidate(t *testing.T) {
	s := mustCompile(t, validateSchema)
	tests := []struct {
		name string
		set  string
		want []FieldError
	}{
		{"valid", `{}`, nil},
		{"required on the missing properties themselves", `{"name":null,"address":null}`, []FieldError{
			{"/name", "This field is required."}, {"/address", "This field is required."}}},
		{"nested required", `{"address":{}}`, []FieldError{
			{"/address/street", "This field is required."}, {"/address/city", "This field is required."}}},
		{"type: string", `{"name":5}`, []FieldError{{"/name", "Must be text."}}},
		{"type: integer", `{"age":18.5}`, []FieldError{{"/age", "Enter a whole number."}}},
		{"type: integer from text", `{"age":"eighteen"}`, []FieldError{{"/age", "Enter a whole number."}}},
		{"type: number", `{"score":"high"}`, []FieldError{{"/score", "Enter a number."}}},
		{"type: boolean", `{"flag":"yes"}`, []FieldError{{"/flag", "Must be true or false."}}},
		{"type: array", `{"tags":"abc"}`, []FieldError{{"/tags", "Must be a list."}}},
		{"type: object", `{"address":"Main St"}`, []FieldError{{"/address", "Must be an object."}}},
		{"minLength", `{"name":"Ab"}`, []FieldError{{"/name", "Must be at least 3 characters."}}},
		{"maxLength", `{"name":"Abcdefghijk"}`, []FieldError{{"/name", "Must be at most 10 characters."}}},
		{"pattern", `{"name":"alice"}`, []FieldError{{"/name", "Does not match the required pattern."}}},
		{"one message per field", `{"name":"ab"}`, []FieldError{{"/name", "Must be at least 3 characters."}}},
		{"minimum", `{"age":17}`, []FieldError{{"/age", "Must be 18 or more."}}},
		{"maximum", `{"age":100}`, []FieldError{{"/age", "Must be 99 or less."}}},
		{"exclusiveMinimum", `{"score":0}`, []FieldError{{"/score", "Must be more than 0."}}},
		{"exclusiveMaximum", `{"score":1}`, []FieldError{{"/score", "Must be less than 1."}}},
		{"multipleOf", `{"half":0.3}`, []FieldError{{"/half", "Must be a multiple of 0.5."}}},
		{"enum", `{"color":"blue"}`, []FieldError{{"/color", "Choose one of the listed options."}}},
		{"const", `{"fixed":"no"}`, []FieldError{{"/fixed", "Does not have the required value."}}},
		{"format: email", `{"mail":"nope"}`, []FieldError{{"/mail", "Enter a valid email address."}}},
		{"format: date", `{"day":"2024-13-01"}`, []FieldError{{"/day", "Enter a date as YYYY-MM-DD."}}},
		{"format: date-time", `{"at":"2024-01-01"}`, []FieldError{{"/at", "Enter a date and time as YYYY-MM-DDThh:mm:ssZ."}}},
		{"format: time", `{"clock":"25:00:00Z"}`, []FieldError{{"/clock", "Enter a time as hh:mm or hh:mm:ss."}}},
		{"format: uri", `{"site":"not a url"}`, []FieldError{{"/site", "Enter a full URL, such as https://example.com/."}}},
		{"format: uuid", `{"id":"1234"}`, []FieldError{{"/id", "Enter a valid UUID."}}},
		{"minItems", `{"tags":[]}`, []FieldError{{"/tags", "Must have at least 1 item."}}},
		{"maxItems", `{"tags":["a","b","c","d"]}`, []FieldError{{"/tags", "Must have at most 3 items."}}},
		{"uniqueItems", `{"tags":["a","a"]}`, []FieldError{{"/tags", "Must not contain the same item twice."}}},
		{"array item keyed to the array", `{"tags":["ok","abcd"]}`, []FieldError{{"/tags", "Item 2: Must be at most 3 characters."}}},
		{"multi-enum item", `{"days":["mon","sun"]}`, []FieldError{{"/days", "Item 2: Choose one of the listed options."}}},
		{"nested field errors", `{"address":{"street":"s","city":"B","zip":"1"}}`, []FieldError{
			{"/address/city", "Must be at least 2 characters."}, {"/address/zip", "Does not match the required pattern."}}},
		{"oneOf matching none", `{"meta":5}`, []FieldError{{"/meta", "Does not match any of the allowed forms."}}},
		{"nullable anyOf reports the real error", `{"note":"toolong"}`, []FieldError{{"/note", "Must be at most 5 characters."}}},
		{"nullable anyOf accepts null", `{"note":null}`, nil},
		{"additionalProperties false goes to the form", `{"evil":1}`, []FieldError{{"", "Contains fields that are not allowed."}}},
		{"inside a JSON field: declared names shown", `{"labels":{"name":5}}`, []FieldError{{"/labels", "At /name: Must be text."}}},
		{"inside a JSON field: submitted keys hidden", `{"labels":{"S3CR3T":5}}`, []FieldError{{"/labels", "At /…: Must be text."}}},
		{"minProperties", `{"labels":{}}`, []FieldError{{"/labels", "Must have at least 1 entry."}}},
		{"required inside an array of objects", `{"rows":[{"qty":1},{}]}`, []FieldError{{"/rows/1/qty", "This field is required."}}},
		{"maximum inside an array of objects", `{"rows":[{"qty":10}]}`, []FieldError{{"/rows/0/qty", "Must be 9 or less."}}},
		{"not", `{"notx":"forbidden"}`, []FieldError{{"/notx", "This value is not allowed."}}},
		{"contains", `{"list":["y"]}`, []FieldError{{"/list", "Must contain a matching item."}}},
		{"several fields in form order", `{"list":["y"],"age":1,"name":"x","address":{"city":""}}`, []FieldError{
			{"/name", "Must be at least 3 characters."}, {"/age", "Must be 18 or more."},
			{"/address/street", "This field is required."}, {"/address/city", "Must be at least 2 characters."},
			{"/list", "Must contain a matching item."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := withBase(t, tt.set)
			errs := s.Validate(data)
			assertErrors(t, errs, tt.want)
			for _, v := range submittedStrings(data) {
				for _, e := range errs {
					if strings.Contains(e.Message, v) {
						t.Errorf("message %q contains the submitted value %q", e.Message, v)
					}
				}
			}
		})
	}
}

// withBase overlays the JSON object set onto a valid submission; a null removes the key.
func withBase(t *testing.T, set string) map[string]any {
	t.Helper()
	data := map[string]any{"name": "Alice", "address": map[string]any{"street": "Main St", "city": "Berlin"}}
	var over map[string]any
	dec := json.NewDecoder(strings.NewReader(set))
	dec.UseNumber()
	if err := dec.Decode(&over); err != nil {
		t.Fatal(err)
	}
	for k, v := range over {
		if v == nil && k != "note" {
			delete(data, k)
			continue
		}
		data[k] = v
	}
	return data
}

// submittedStrings lists the submitted string and number values long enough to be
// recognisable (keys are covered by TestValidateNeverEchoesValues).
func submittedStrings(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			if len(t) >= 3 {
				out = append(out, t)
			}
		case json.Number:
			if len(t) >= 3 {
				out = append(out, t.String())
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

func TestValidateNeverEchoesValues(t *testing.T) {
	s := mustCompile(t, validateSchema)
	const secret = "S3CR3T-VALUE-42"
	for _, key := range []string{"name", "age", "score", "half", "color", "fixed", "mail", "day", "at", "clock", "site", "id",
		"flag", "tags", "days", "meta", "note", "labels", "rows", "notx", "list", secret} {
		for _, val := range []any{secret, []any{secret}, map[string]any{secret: secret}, json.Number("1234567.891")} {
			data := withBase(t, `{}`)
			data[key] = val
			for _, e := range s.Validate(data) {
				if strings.Contains(e.Message, secret) || strings.Contains(e.Message, "1234567") || strings.Contains(e.Pointer, secret) {
					t.Errorf("%s=%v: error %q echoes the value", key, val, e)
				}
			}
		}
	}
}

func TestValidateMoreKeywords(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		data   string
		want   []FieldError
	}{
		{"dependentRequired on the missing property", `{"type":"object","properties":{"card":{"type":"string"},"cvc":{"type":"string"}},"dependentRequired":{"card":["cvc"]}}`,
			`{"card":"x"}`, []FieldError{{"/cvc", "This field is required."}}},
		{"draft-07 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"card":{"type":"string"},"cvc":{"type":"string"}},"dependencies":{"card":["cvc"]}}`,
			`{"card":"x"}`, []FieldError{{"/cvc", "This field is required."}}},
		{"draft-07 tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}`,
			`{"pair":["a","b"]}`, []FieldError{{"/pair", "At /1: Enter a whole number."}}},
		{"false schema", `{"type":"object","properties":{"gone":false,"a":{"type":"string"}}}`,
			`{"gone":1}`, []FieldError{{"", "This value is not allowed."}}},
		{"root oneOf goes to the form", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
			`{"a":"x","b":"y"}`, []FieldError{{"", "Matches more than one of the allowed forms."}}},
		{"maxProperties", `{"type":"object","properties":{"m":{"type":"object","maxProperties":1}}}`,
			`{"m":{"a":1,"b":2}}`, []FieldError{{"/m", "Must have at most 1 entry."}}},
		{"propertyNames", `{"type":"object","properties":{"m":{"type":"object","propertyNames":{"maxLength":2}}}}`,
			`{"m":{"abc":1}}`, []FieldError{{"/m", "Contains a field name that is not allowed."}}},
		{"an undeclared property with a schema goes to the form", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
			`{"zzz":1}`, []FieldError{{"", "Must be text."}}},
		{"reference targets", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string","minLength":2}}}`,
			`{"a":"x"}`, []FieldError{{"/a", "Must be at least 2 characters."}}},
		{"nullable type list", `{"type":"object","properties":{"a":{"type":["integer","null"],"maximum":3}}}`,
			`{"a":4}`, []FieldError{{"/a", "Must be 3 or less."}}},
		{"an error below a text field goes to the field", `{"type":"object","properties":{"o":{"required":["x"]}}}`,
			`{"o":{}}`, []FieldError{{"/o", "This field is required."}}},
		{"maxContains", `{"type":"object","properties":{"l":{"type":"array","contains":{"const":1},"maxContains":1}}}`,
			`{"l":[1,1]}`, []FieldError{{"/l", "Contains too many matching items."}}},
		{"propertyNames inside a JSON field hides the name", `{"type":"object","properties":{"m":{"type":"object","properties":{"n":{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}}}}}`,
			`{"m":{"n":{"S3CR3T":1}}}`, []FieldError{{"/m/n", "Contains a field name that is not allowed."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustCompile(t, tt.schema)
			var data any
			dec := json.NewDecoder(strings.NewReader(tt.data))
			dec.UseNumber()
			if err := dec.Decode(&data); err != nil {
				t.Fatal(err)
			}
			assertErrors(t, s.Validate(data), tt.want)
		})
	}
}

func TestValidateConvertsGoValues(t *testing.T) {
	s := mustCompile(t, `{"type":"object","required":["n"],"properties":{"n":{"type":"integer","maximum":5},"tags":{"type":"array","items":{"type":"string"}},"m":{"type":"object","properties":{"k":{"type":"string"}}}}}`)
	tests := []struct {
		name string
		data any
		want []FieldError
	}{
		{"Go ints and string slices", map[string]any{"n": 3, "tags": []string{"a"}, "m": map[string]string{"k": "v"}}, nil},
		{"Go int over the maximum", map[string]any{"n": int64(6)}, []FieldError{{"/n", "Must be 5 or less."}}},
		{"a struct", struct {
			N int `json:"n"`
		}{N: 9}, []FieldError{{"/n", "Must be 5 or less."}}},
		{"float64 whole number is an integer", map[string]any{"n": 4.0}, nil},
		{"NaN cannot be read", map[string]any{"n": math.NaN()}, []FieldError{{"", "The submitted data could not be read."}}},
		{"a channel cannot be read", map[string]any{"n": make(chan int)}, []FieldError{{"", "The submitted data could not be read."}}},
		{"an invalid json.Number cannot be read", map[string]any{"n": json.Number("abc")}, []FieldError{{"", "The submitted data could not be read."}}},
		{"a huge exponent cannot be read", map[string]any{"n": json.Number("1e999999")}, []FieldError{{"", "The submitted data could not be read."}}},
		{"nil data is not an object", nil, []FieldError{{"", "Must be an object."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertErrors(t, s.Validate(tt.data), tt.want)
		})
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		errs []FieldError
		want string
	}{
		{nil, ""},
		{[]FieldError{{"/a", "x"}}, "1 field needs attention"},
		{[]FieldError{{"/a", "x"}, {"/a", "y"}}, "1 field needs attention"},
		{[]FieldError{{"/a", "x"}, {"/b", "y"}, {"", "z"}}, "3 fields need attention"},
	}
	for _, tt := range tests {
		if got := Summary(tt.errs); got != tt.want {
			t.Errorf("Summary(%v) = %q, want %q", tt.errs, got, tt.want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(uint8(0), `{"name":"Ada","qty":12,"days":["mon"],"address":{"street":1}}`)
	f.Add(uint8(1), `{"a":"x","b":[1,1,9,9],"c":"nope","d":{"e":4,"z":1},"f":"2024","g":"no"}`)
	f.Add(uint8(2), `{"x":{"a":{"b":{"c":{"d":{"e":5}}}}}}`)
	f.Add(uint8(3), `{"a/b~c":5,"n":{"n":{"n":{"v":"x"}}},"zzz":1}`)
	f.Add(uint8(1), `[1e400, -0, 1E-7, "\ud800", null, true]`)
	schemas := make([]*Schema, len(fuzzSchemas))
	for i, raw := range fuzzSchemas {
		schemas[i] = mustCompile(f, raw)
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		s := schemas[int(which)%len(schemas)]
		var data any
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			data = text
		}
		for _, e := range s.Validate(data) {
			if e.Message == "" {
				t.Fatalf("empty message at %q", e.Pointer)
			}
			if _, ok := s.byPtr[e.Pointer]; !ok && e.Pointer != "" {
				t.Fatalf("error keyed to %q, which is neither a field nor the form", e.Pointer)
			}
		}
	})
}

func ExampleSchema_Validate() {
	s, _ := Compile(json.RawMessage(`{"type":"object","required":["city"],"properties":{"city":{"type":"string","minLength":2},"zip":{"type":"string","pattern":"^[0-9]{5}$"}}}`))
	for _, e := range s.Validate(map[string]any{"zip": "1"}) {
		fmt.Printf("%s: %s\n", e.Pointer, e.Message)
	}
	// Output:
	// /city: This field is required.
	// /zip: Does not match the required pattern.
}
