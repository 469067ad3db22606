package schema

import (
	"encoding/json"
	"math"
	"regexp"
	"testing"
)

var hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

func decodeAny(t *testing.T, s string) any {
	t.Helper()
	v, msg := decodeJSONText(s)
	if msg != "" {
		t.Fatalf("decode %s: %s", s, msg)
	}
	return v
}

func TestApprovalDigest(t *testing.T) {
	calls := `[{"id":"c1","type":"function","function":{"name":"refund","arguments":{"amount":12.50,"order":"A-1"}}}]`
	reordered := `[{"function":{"arguments":{"order":"A-1","amount":12.50},"name":"refund"},"type":"function","id":"c1"}]`
	d := ApprovalDigest(decodeAny(t, calls))
	if !hexDigest.MatchString(d) {
		t.Fatalf("digest %q is not lowercase hex SHA-256", d)
	}
	if got := ApprovalDigest(decodeAny(t, reordered)); got != d {
		t.Errorf("key order changed the digest: %s vs %s", got, d)
	}
	if got := ApprovalDigest(json.RawMessage(calls)); got != d {
		t.Errorf("raw JSON and decoded value digest differently: %s vs %s", got, d)
	}
	if got := ApprovalDigest(decodeAny(t, `[{"id":"c1","type":"function","function":{"name":"refund","arguments":{"amount":12.5,"order":"A-1"}}}]`)); got == d {
		t.Error("12.50 and 12.5 digest alike; numbers are kept as written")
	}
	for _, changed := range []string{
		`[{"id":"c2","type":"function","function":{"name":"refund","arguments":{"amount":12.50,"order":"A-1"}}}]`,
		`[{"id":"c1","type":"function","function":{"name":"refund","arguments":{"amount":13,"order":"A-1"}}}]`,
		`[{"id":"c1","type":"function","function":{"name":"other","arguments":{"amount":12.50,"order":"A-1"}}}]`,
		`[]`,
	} {
		if ApprovalDigest(decodeAny(t, changed)) == d {
			t.Errorf("digest unchanged for %s", changed)
		}
	}
}

func TestInputDigest(t *testing.T) {
	calls := decodeAny(t, `[{"id":"c1","type":"function","function":{"name":"ask","arguments":{}}}]`)
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`)
	d := InputDigest(calls, "ask", schema)
	if !hexDigest.MatchString(d) {
		t.Fatalf("digest %q is not lowercase hex SHA-256", d)
	}
	if got := InputDigest(calls, "ask", json.RawMessage(`{"properties":{"b":{"type":"integer"},"a":{"type":"string"}},"type":"object"}`)); got != d {
		t.Error("schema key order changed the digest")
	}
	if got := InputDigest(calls, "ask", json.RawMessage(" \n"+string(schema)+"\n")); got != d {
		t.Error("schema whitespace changed the digest")
	}
	for name, other := range map[string]string{
		"tool":   InputDigest(calls, "other", schema),
		"schema": InputDigest(calls, "ask", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)),
		"calls":  InputDigest(decodeAny(t, `[{"id":"c2","type":"function","function":{"name":"ask","arguments":{}}}]`), "ask", schema),
		"kind":   ApprovalDigest(calls),
	} {
		if other == d {
			t.Errorf("changing the %s left the digest unchanged", name)
		}
	}
}

func TestDigestNeverEmpty(t *testing.T) {
	for name, d := range map[string]string{
		"NaN":            ApprovalDigest(map[string]any{"x": math.NaN()}),
		"channel":        ApprovalDigest(make(chan int)),
		"invalid schema": InputDigest(nil, "t", json.RawMessage(`{not json`)),
		"nil":            ApprovalDigest(nil),
		"invalid UTF-8":  ApprovalDigest("\xff\xfe"),
	} {
		if !hexDigest.MatchString(d) {
			t.Errorf("%s: digest %q", name, d)
		}
	}
	if ApprovalDigest(map[string]any{"x": math.NaN()}) == ApprovalDigest(map[string]any{"x": math.Inf(1)}) {
		t.Error("different unencodable values digest alike")
	}
	if ApprovalDigest("\xff") != ApprovalDigest("\ufffd") {
		t.Error("invalid UTF-8 is not replaced by U+FFFD")
	}
}

func TestDigestEqual(t *testing.T) {
	d := ApprovalDigest([]any{})
	tests := []struct {
		a, b string
		want bool
	}{
		{d, d, true},
		{d, ApprovalDigest([]any{1}), false},
		{"", d, false},
		{d, "", false},
		{"", "", false},
		{d[:63], d, false},
		{d + "0", d, false},
	}
	for _, tt := range tests {
		if got := DigestEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("DigestEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestElicitationDigest: every part of the server's request changes the digest; the same
// request gives the same digest.
func TestElicitationDigest(t *testing.T) {
	calls := []map[string]any{{"id": "c1", "function": map[string]any{"name": "t", "arguments": map[string]any{}}}}
	sch := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	base := ElicitationDigest(calls, "t", sch, "r1", "How much?", "state-1")
	if base != ElicitationDigest(calls, "t", sch, "r1", "How much?", "state-1") || len(base) != 64 {
		t.Fatalf("not stable: %s", base)
	}
	if base == InputDigest(calls, "t", sch) {
		t.Fatal("an elicitation digest equals the plain input digest")
	}
	for name, d := range map[string]string{
		"request id": ElicitationDigest(calls, "t", sch, "r2", "How much?", "state-1"),
		"message":    ElicitationDigest(calls, "t", sch, "r1", "How many?", "state-1"),
		"state":      ElicitationDigest(calls, "t", sch, "r1", "How much?", "state-2"),
		"schema":     ElicitationDigest(calls, "t", json.RawMessage(`{"type":"object"}`), "r1", "How much?", "state-1"),
		"tool":       ElicitationDigest(calls, "u", sch, "r1", "How much?", "state-1"),
	} {
		if d == base {
			t.Errorf("changing the %s leaves the digest", name)
		}
	}
}
