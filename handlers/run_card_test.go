package handlers

import (
	"encoding/json"
	"testing"
)

func TestPrettyJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":[true,null]}`, "{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null\n  ]\n}"},
		{`{"x":"\u003cscript\u003e \u0026 \u003E"}`, "{\n  \"x\": \"<script> & >\"\n}"},
		{`{"x":"\\u003c"}`, "{\n  \"x\": \"\\\\u003c\"\n}"},
		{`{"x":"\\\u003c \" \u00e9 \u2028"}`, "{\n  \"x\": \"\\\\< \\\" \\u00e9 \\u2028\"\n}"},
		{`not json <b>`, `not json <b>`},
	} {
		if got := prettyJSON(json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("prettyJSON(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
