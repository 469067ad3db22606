package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestUndeclared: an edit adding or changing a key the parameters do not declare is listed by
// pointer at every depth where properties are declared, whatever additionalProperties says; a
// model's undeclared key left alone or removed is not, nor is anything where no properties are
// declared.
func TestUndeclared(t *testing.T) {
	params := json.RawMessage(`{"type":"object","additionalProperties":true,"properties":{
		"to":{"type":"string"},
		"meta":{"type":"object"},
		"address":{"type":"object","properties":{"street":{"type":"string"}}},
		"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}}}`)
	decode := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	proposed := decode(`{"to":"a","x":1,"address":{"street":"s","y":2},"lines":[{"sku":"k"}]}`)
	cases := []struct{ edited, want string }{
		{`{"to":"b","x":1,"address":{"street":"t","y":2},"lines":[{"sku":"l"}]}`, `[]`},
		{`{"to":"a"}`, `[]`},
		{`{"to":"a","x":1,"meta":{"anything":true}}`, `[]`},
		{`{"to":"a","bcc":"attacker@example.com"}`, `["/bcc"]`},
		{`{"to":"a","x":2}`, `["/x"]`},
		{`{"to":"a","address":{"street":"s","cc":"c"},"lines":[{"sku":"k","bcc":"b"}]}`, `["/address/cc","/lines/0/bcc"]`},
	}
	for _, c := range cases {
		var got []string
		for _, f := range Undeclared(params, proposed, decode(c.edited)) {
			got = append(got, f.Pointer)
		}
		var want []string
		_ = json.Unmarshal([]byte(c.want), &want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: pointers %q, want %q", c.edited, got, want)
		}
	}
}
