package schema

import (
	"encoding/json"
	"hash/maphash"
	"testing"
)

// TestFactsAreThoseOfThePackage: Facts' InputDigest and Usable equal the package's for usable,
// unusable, non-canonical and invalid schemas, asked once and again (remembered), also for a
// text whose hash holds another text's facts (a collision).
func TestFactsAreThoseOfThePackage(t *testing.T) {
	calls := []map[string]any{{"id": "call_0", "type": "function", "function": map[string]any{"name": "ask", "arguments": json.RawMessage(`{"b":1,"a":2}`)}}}
	schemas := []string{
		`{"type":"object","properties":{"amount":{"type":"number","minimum":1},"note":{"type":"string","title":"Note <b>"}},"required":["amount"]}`,
		`{ "properties" : { "z": {}, "a": {"type":"string"} } }`,
		`{"properties":{}}`,
		`{"title":"no type"}`,
		`[]`,
		`{"type":"object","properties":{"a":1e2,"b":"\u00e9\ud800"}}`,
		`{"type":`,
		``,
	}
	f := NewFacts(2)
	for round := range 2 {
		for _, s := range schemas {
			raw := json.RawMessage(s)
			if got, want := f.InputDigest(calls, "ask", raw), InputDigest(calls, "ask", raw); got != want {
				t.Fatalf("round %d, schema %s: digest %s, want %s", round, s, got, want)
			}
			if got, want := f.Usable(raw), Usable(raw); got != want {
				t.Fatalf("round %d, schema %s: usable %v, want %v", round, s, got, want)
			}
		}
	}
	usable, unusable := json.RawMessage(schemas[0]), json.RawMessage(schemas[3])
	f.texts.Put(maphash.Bytes(f.seed, unusable), readFacts(usable))
	if f.Usable(unusable) {
		t.Fatal("an unusable schema read as the usable one held under its hash")
	}
	if got, want := f.InputDigest(calls, "ask", unusable), InputDigest(calls, "ask", unusable); got != want {
		t.Fatalf("digest with another text's facts under its hash: %s, want %s", got, want)
	}
}
