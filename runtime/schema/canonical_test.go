package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// decodeAndEncode is what canonicalize must equal: decode one value with UseNumber, encode
// it again.
func decodeAndEncode(data []byte) ([]byte, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

var canonicalSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-1.50e+3`, `true`, `false`, `null`,
	`{"b":1,"a":[1,2,{"d":null,"c":"x"}]}`,
	`{"a":1,"b":2,"a":{"z":1,"y":2}}`,
	`{"k":"<b>&amp;</b>","\u003c":"\u00e9\/\"\\\n\t\u0001","é":"ü 🎉"}`,
	"{\"line\":\"\u2028 and \u2029\",\"bad\":\"\xff\xfe\",\"ok\":\"\xef\xbf\xbd\"}",
	` { "spaced" : [ 1 , 2 ] , "x" : { } } `,
	`{"pendingCalls":[{"id":"c1","type":"function","function":{"name":"ask","arguments":{"amount":999,"note":"model guess"}}}],"inputToolName":"ask","inputSchema":{"type":"object","properties":{"b":{},"a":{}}}}`,
	`{"a":[[[]]],"b":[{}],"":""}`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":1`, `"open`, `01`, `[1 2]`, `{"a":1}x`, `nul`,
}

func TestCanonicalizeMatchesDecodeAndEncode(t *testing.T) {
	for _, s := range append(canonicalSeeds, strings.Repeat("[", 1200)+strings.Repeat("]", 1200)) {
		wantCanonicalLikeDecode(t, []byte(s))
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(wantCanonicalLikeDecode)
}

// wantCanonicalLikeDecode checks that canonicalize agrees with decodeAndEncode: the same
// bytes when it accepts data, and a refusal only when decoding fails or data may nest deeper
// than it handles.
func wantCanonicalLikeDecode(t *testing.T, data []byte) {
	got, ok := canonicalize(data)
	want, wantOK := decodeAndEncode(data)
	if ok && (!wantOK || !bytes.Equal(got, want)) {
		t.Errorf("canonicalize(%q) = %q; want %q (decodes: %v)", data, got, want, wantOK)
	}
	if !ok && wantOK && len(data) <= maxCanonicalDepth {
		t.Errorf("canonicalize(%q) refused a value that decodes", data)
	}
}

// inputSchemaSeeds are raw input schemas, well-formed or not, for the digest's shortcut.
var inputSchemaSeeds = []string{
	`{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string","description":"<b>&</b> \u2028 \/"}}}`,
	" \n{\"type\" : \"object\"}\t", `{}`, ``, ` `, `null`, `{not json`, `{} {}`, `{"a":1,"a":2}`, "{\"x\":\"\xff\"}", `"s"`, `[1,2]`,
	`1,"inputSchema":2`, `1,"zzz":2`, `{"a":1}}`,
}

func TestInputDigestShortcutMatchesDigest(t *testing.T) {
	for _, raw := range inputSchemaSeeds {
		wantInputDigestLikeDigest(t, []byte(raw))
	}
}

func FuzzInputDigestShortcut(f *testing.F) {
	for _, raw := range inputSchemaSeeds {
		f.Add([]byte(raw))
	}
	f.Fuzz(wantInputDigestLikeDigest)
}

// wantInputDigestLikeDigest checks that InputDigest equals the digest of its object encoded
// through encoding/json.
func wantInputDigestLikeDigest(t *testing.T, raw []byte) {
	calls := []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "ask", "arguments": json.RawMessage(`{"z":1,"a":"<x>"}`)}}}
	want := digest(map[string]any{"pendingCalls": calls, "inputToolName": "ask<", "inputSchema": json.RawMessage(raw)})
	if got := InputDigest(calls, "ask<", raw); got != want {
		t.Errorf("InputDigest(schema %q) = %s, want %s", raw, got, want)
	}
}
