package strictjson_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"runsdesk/runtime/strictjson"
)

type inner struct {
	Code string `json:"code"`
}

type Embedded struct {
	Note string `json:"note"`
}

type body struct {
	Embedded
	Approved  *bool  `json:"approved"`
	Name      string `json:"name,omitempty"`
	Untagged  int
	Skipped   string          `json:"-"`
	Inner     *inner          `json:"inner"`
	List      []inner         `json:"list"`
	Arguments map[string]any  `json:"arguments"`
	Raw       json.RawMessage `json:"raw"`
	Anything  any             `json:"anything"`
}

func TestDecodeRefuses(t *testing.T) {
	deep := strings.Repeat("[", strictjson.MaxDepth+2) + strings.Repeat("]", strictjson.MaxDepth+2)
	cases := []struct {
		name, data string
		problem    strictjson.Problem
		path, key  string
		message    string
	}{
		{"duplicate", `{"approved":false,"approved":true}`, strictjson.Duplicate, "", "approved", `key "approved" is given twice`},
		{"duplicate by escape", `{"name":"a","n\u0061me":"b"}`, strictjson.Duplicate, "", "name", `key "name" is given twice`},
		{"case variant", `{"approved":false,"APPROVED":true}`, strictjson.Unknown, "", "APPROVED", `key "APPROVED" is not a field; did you mean "approved"? (field names are case-sensitive)`},
		{"unknown", `{"colour":1}`, strictjson.Unknown, "", "colour", `key "colour" is not a field (fields: note, approved, name, Untagged, inner, list, arguments, raw, anything)`},
		{"skipped field", `{"Skipped":"x"}`, strictjson.Unknown, "", "Skipped", `key "Skipped" is not a field`},
		{"untagged by another case", `{"untagged":1}`, strictjson.Unknown, "", "untagged", `did you mean "Untagged"?`},
		{"nested struct case variant", `{"inner":{"CODE":"x"}}`, strictjson.Unknown, "inner", "CODE", `key "CODE" is not a field in "inner"; did you mean "code"?`},
		{"struct in a list", `{"list":[{"code":"a"},{"code":"a","code":"b"}]}`, strictjson.Duplicate, "list[1]", "code", `key "code" is given twice in "list[1]"`},
		{"free-form duplicate", `{"arguments":{"a":{"b":1,"b":2}}}`, strictjson.Duplicate, "arguments.a", "b", `key "b" is given twice in "arguments.a"`},
		{"raw duplicate", `{"raw":[{"x":1,"x":1}]}`, strictjson.Duplicate, "raw[0]", "x", ""},
		{"any duplicate", `{"anything":{"k":1,"k":1}}`, strictjson.Duplicate, "anything", "k", ""},
		{"invalid UTF-8 value", "{\"name\":\"a\xffb\"}", strictjson.InvalidText, "name", "", `field "name" is not valid UTF-8`},
		{"invalid UTF-8 deep", "{\"arguments\":{\"x\":[\"ok\",\"\xc3\"]}}", strictjson.InvalidText, "arguments.x[1]", "", `field "arguments.x[1]" is not valid UTF-8`},
		{"invalid UTF-8 key", "{\"arguments\":{\"\xe2\x82\":1}}", strictjson.InvalidKeyText, "arguments", "", `a key in "arguments" is not valid UTF-8`},
		{"lone high surrogate", `{"name":"\ud800"}`, strictjson.InvalidText, "name", "", ""},
		{"high surrogate before text", `{"name":"\ud800abcdefg"}`, strictjson.InvalidText, "name", "", ""},
		{"lone low surrogate", `{"name":"\uDC00"}`, strictjson.InvalidText, "name", "", ""},
		{"surrogate key", `{"arguments":{"\ud800":1}}`, strictjson.InvalidKeyText, "arguments", "", ""},
		{"too deep", `{"anything":` + deep + `}`, strictjson.TooDeep, "", "", "nested more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v body
			err := strictjson.Decode([]byte(c.data), &v)
			var se *strictjson.Error
			if !errors.As(err, &se) {
				t.Fatalf("Decode = %v, want *Error", err)
			}
			if se.Problem != c.problem || (c.problem != strictjson.TooDeep && (se.Path != c.path || se.Key != c.key)) {
				t.Errorf("error %+v, want problem %d path %q key %q", se, c.problem, c.path, c.key)
			}
			if !strings.Contains(se.Error(), c.message) {
				t.Errorf("message %q lacks %q", se.Error(), c.message)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	var v body
	data := `{"approved":true,"note":"n","Untagged":3,"name":"caf\u00e9 \ud83d\ude00 \\ud800 ü",` +
		`"inner":{"code":"c"},"list":[{"code":"x"}],"arguments":{"a":{"A":1,"a":2}},"raw":{"K":1,"k":2},"anything":[1.50]}`
	if err := strictjson.Decode([]byte(data), &v); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if v.Approved == nil || !*v.Approved || v.Note != "n" || v.Untagged != 3 || v.Name != "café 😀 \\ud800 ü" || v.Inner.Code != "c" {
		t.Errorf("decoded %+v", v)
	}
	if n, ok := v.Anything.([]any)[0].(json.Number); !ok || n != "1.50" {
		t.Errorf("numbers are not kept as written: %#v", v.Anything)
	}
	if string(v.Raw) != `{"K":1,"k":2}` {
		t.Errorf("raw = %s", v.Raw)
	}
}

func TestDecodeLeavesSyntaxAndTypesToEncodingJSON(t *testing.T) {
	var v body
	var syn *json.SyntaxError
	if err := strictjson.Decode([]byte(`{"approved":tru`), &v); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
	if err := strictjson.Decode([]byte(`{"approved":tru}`), &v); !errors.As(err, &syn) {
		t.Errorf("malformed: %v", err)
	}
	var typ *json.UnmarshalTypeError
	if err := strictjson.Decode([]byte(`{"approved":"yes"}`), &v); !errors.As(err, &typ) || typ.Field != "approved" {
		t.Errorf("wrong type: %v", err)
	}
	if err := strictjson.Decode([]byte(`{} {}`), &v); !errors.Is(err, strictjson.ErrTrailingData) {
		t.Errorf("two values: %v", err)
	}
	if err := strictjson.Decode([]byte(``), &v); err == nil {
		t.Error("empty input accepted")
	}
}

// FuzzDecode: Decode never panics, and whatever it accepts encoding/json decodes to the same.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"approved":true}`, `{"a":1,"a":2}`, `{"arguments":{"\ud800":1}}`, "{\"name\":\"\xff\"}", `[[[]]]`, `"\\u"`, `"\u12"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var strict body
		if strictjson.Decode(data, &strict) != nil {
			return
		}
		var plain body
		if err := json.Unmarshal(data, &plain); err != nil {
			t.Fatalf("strict accepted what encoding/json refuses: %v", err)
		}
	})
}
