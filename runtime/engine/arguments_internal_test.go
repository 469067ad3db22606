package engine

import (
	"strings"
	"testing"
)

// TestArgumentsProblem: the model's arguments text is refused with a reason fit to tell the
// model: not an object, a key given twice (named, at its path, clipped when long), text that is
// not valid UTF-8; an object or no text at all passes.
func TestArgumentsProblem(t *testing.T) {
	long := strings.Repeat("k", 100)
	cases := map[string]string{
		``:                                    "",
		`{}`:                                  "",
		`{"amount":10,"note":{"a":[1,{}]}}`:   "",
		`[1]`:                                 "not a JSON object",
		`null`:                                "not a JSON object",
		`{"a":`:                               "not a JSON object",
		`{"a":1} {"b":2}`:                     "not a JSON object",
		`{"amount":100000,"amount":10}`:       "duplicate key amount",
		`{"p":{"q":[{"x":1,"x":2}]}}`:         "duplicate key x in p.q[0]",
		`{"` + long + `":1,"` + long + `":2}`: "duplicate key " + strings.Repeat("k", 64) + "…",
		"{\"a\":\"\xff\"}":                    `field "a" is not valid UTF-8`,
	}
	for text, want := range cases {
		if got := argumentsProblem(text); got != want {
			t.Errorf("argumentsProblem(%q) = %q, want %q", text, got, want)
		}
	}
}
