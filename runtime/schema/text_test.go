package schema

import (
	"net/url"
	"testing"
)

// TestCoerceRefusesBytesThatAreNotText: invalid UTF-8 or a NUL in any text-like field is an
// error on that field (the other fields are read as usual), and a JSON value with a key given
// twice is refused instead of keeping the last.
func TestCoerceRefusesBytesThatAreNotText(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{
		"name":{"type":"string"},"note":{"type":"string","format":"textarea"},
		"tags":{"type":"array","items":{"type":"string"}},
		"extra":{"type":"object","additionalProperties":true},
		"ok":{"type":"string"}}}`)
	form := url.Values{"input/name": {"a\xffb"}, "input/note": {"x\x00y"}, "input/tags": {"one\ntw\xc3"},
		"input/extra": {`{"a":1,"a":2}`}, "input/ok": {"café ☕"}}
	data, errs := s.Coerce(form)
	want := map[string]string{"/name": msgNotText, "/note": msgNotText, "/tags": msgNotText, "/extra": msgJSONTwice}
	got := map[string]string{}
	for _, e := range errs {
		got[e.Pointer] = e.Message
	}
	for ptr, msg := range want {
		if got[ptr] != msg {
			t.Errorf("error of %s = %q, want %q", ptr, got[ptr], msg)
		}
	}
	if len(got) != len(want) {
		t.Errorf("errors %v, want only %v", got, want)
	}
	if data["ok"] != "café ☕" {
		t.Errorf("valid text not kept: %#v", data)
	}
	for _, bad := range []string{"name", "note", "tags", "extra"} {
		if _, ok := data[bad]; ok {
			t.Errorf("%s reached the data", bad)
		}
	}
}

func TestIsText(t *testing.T) {
	for s, want := range map[string]bool{"": true, "café ☕ 🎉": true, "tab\tnew\nline": true,
		"a\x00": false, "\xff": false, "\xc3": false, "\xed\xa0\x80": false} {
		if got := IsText(s); got != want {
			t.Errorf("IsText(%q) = %v, want %v", s, got, want)
		}
	}
}
