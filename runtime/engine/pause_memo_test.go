package engine

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
)

// TestPauseMemoReadsEachStateOnce: equal state texts are decoded once and read as
// DecodePause reads them, digest included; a changed text is read anew, a corrupt one stays
// an error, and the memo stays bounded.
func TestPauseMemoReadsEachStateOnce(t *testing.T) {
	m := newPauseMemo()
	state := `{"messages":[{"role":"user","content":"hi"}],"pendingCalls":[{"id":"c1","type":"function","function":{"name":"send_mail","arguments":{"to":"a"}}}]}`
	first := m.read(state)
	if again := m.read(strings.Clone(state)); again != first {
		t.Error("the same state text was decoded twice")
	}
	want, err := runtime.DecodePause(state)
	if err != nil || first.err != nil || !reflect.DeepEqual(first.pause, want) {
		t.Fatalf("memo reads %+v, %v; DecodePause %+v, %v", first.pause, first.err, want, err)
	}
	if d := first.approvalDigest(); d == "" || d != pauseDigest(want) {
		t.Errorf("approval digest %q differs from the decision's", d)
	}
	changed := m.read(strings.Replace(state, `"to":"a"`, `"to":"b"`, 1))
	if changed == first || string(changed.pause.PendingCalls[0].Function.Arguments) != `{"to":"b"}` {
		t.Errorf("a changed state reads %+v", changed.pause)
	}
	for range 2 {
		if r := m.read(`{"messages":[1],"pendingCalls":[]}`); r.err == nil {
			t.Error("a corrupt state read without an error")
		}
	}
	for i := range pausesRemembered + 10 {
		m.read(strings.Replace(state, `"c1"`, `"c`+strconv.Itoa(i)+`"`, 1))
	}
	if n := m.entries.Len(); n > pausesRemembered {
		t.Errorf("the memo holds %d states", n)
	}
}

// TestPauseMemoChecksEachInputSchemaOnce: whether an input pause's schema is usable is
// schema.Usable of that schema, for a usable and an unusable one, and the memo's answer is
// the same function each time (checked once per state text).
func TestPauseMemoChecksEachInputSchemaOnce(t *testing.T) {
	m := newPauseMemo()
	input := func(schemaText string) string {
		return `{"messages":[],"pendingCalls":[{"id":"c1","type":"function","function":{"name":"ask","arguments":{}}}],` +
			`"inputToolName":"ask","inputSchema":` + schemaText + `}`
	}
	for _, tc := range []struct {
		schema string
		usable bool
	}{
		{`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`, true},
		{`{"properties":{}}`, false},
	} {
		r := m.read(input(tc.schema))
		if r.err != nil {
			t.Fatalf("%s: %v", tc.schema, r.err)
		}
		if got, want := r.inputUsable(), schema.Usable(json.RawMessage(tc.schema)); got != want || got != tc.usable {
			t.Errorf("%s: memo says usable %v, schema.Usable %v, want %v", tc.schema, got, want, tc.usable)
		}
		if again := m.read(input(tc.schema)); again != r {
			t.Errorf("%s: the same input state was read twice", tc.schema)
		}
	}
}
