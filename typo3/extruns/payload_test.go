package extruns

import (
	"strings"
	"testing"
)

// Payloads the tests share, as the extension writes them (runsdesk's format mirrors it).
const (
	approvalState = `{"messages":[{"role":"user","content":"refund order 7"}],` +
		`"pendingCalls":[{"id":"call_1","type":"function","function":{"name":"send_mail","arguments":{"to":"a@example.com","subject":"Refund"}}},` +
		`{"id":"call_2","type":"function","function":{"name":"refund","arguments":{"order":7}}}],` +
		`"iterations":2,"inputToolName":null,"inputSchema":[],"callPreviews":[]}`
	inputState = `{"messages":[],"pendingCalls":[{"id":"call_9","type":"function","function":{"name":"ask_city","arguments":{}}}],` +
		`"iterations":1,"inputToolName":"ask_city",` +
		`"inputSchema":{"type":"object","properties":{"city":{"type":"string","title":"City"},"nights":{"type":"integer","minimum":1}},"required":["city"]}}`
	// corruptState is cleartext whose pending call has no tool name.
	corruptState = `{"messages":[],"pendingCalls":[{"id":"call_1","type":"function","function":{"name":"","arguments":{}}}]}`
)

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"nrv1:AAAA.BBBB", "v2:c2VhbGVk", "nrv1:", "v2:{not json at all"} {
		if got := Classify(raw); got.Kind != PayloadSealed || got.Reason != "" || got.Calls != nil || got.Input != nil {
			t.Errorf("Classify(%q) = %+v, want sealed and nothing else", raw, got)
		}
	}

	approval := Classify(approvalState)
	if approval.Kind != PayloadCleartext || approval.Input != nil || len(approval.Calls) != 2 {
		t.Fatalf("approval: %+v, want cleartext with two calls and no input", approval)
	}
	if c := approval.Calls[1]; c.ID != "call_2" || c.Tool != "refund" || string(c.Arguments) != `{"order":7}` {
		t.Errorf("approval's second call = %+v %s", c, c.Arguments)
	}

	input := Classify(inputState)
	if input.Kind != PayloadCleartext || input.Input == nil || len(input.Calls) != 1 {
		t.Fatalf("input: %+v, want cleartext with an input form", input)
	}
	if in := input.Input; in.Tool != "ask_city" || len(in.Fields) != 2 || in.Fields[0].Pointer != "/city" || !in.Fields[0].Required || in.NoForm != "" {
		t.Errorf("input form = %+v", in)
	}

	for name, tc := range map[string]struct{ raw, reason string }{
		"empty":            {"", "empty"},
		"not JSON":         {"{", "not valid JSON"},
		"not an object":    {`["pendingCalls"]`, "not a JSON object"},
		"no pending calls": {`{"pendingCalls":[]}`, "no pending calls"},
		"no tool name":     {corruptState, "no id or tool name"},
		"string arguments": {`{"pendingCalls":[{"id":"c","function":{"name":"x","arguments":"{}"}}]}`, "arguments are not an object"},
		"bad schema": {`{"pendingCalls":[{"id":"c","function":{"name":"x","arguments":{}}}],"inputToolName":"x","inputSchema":{"type":"object","properties":{"a":{"type":"nope"}}}}`,
			`input schema of tool "x" does not compile`},
		"sealed elsewhere": {"NRV1:AAAA", "not a JSON object"},
	} {
		got := Classify(tc.raw)
		if got.Kind != PayloadUnreadable || !strings.Contains(got.Reason, tc.reason) || got.Calls != nil || got.Input != nil {
			t.Errorf("%s: Classify = %+v, want unreadable because %q", name, got, tc.reason)
		}
	}

	noForm := Classify(`{"pendingCalls":[{"id":"c","function":{"name":"x","arguments":{}}}],"inputToolName":"x","inputSchema":{"type":"string"}}`)
	if noForm.Kind != PayloadCleartext || noForm.Input == nil || len(noForm.Input.Fields) != 0 || noForm.Input.NoForm == "" {
		t.Errorf("a schema without a form: %+v, want cleartext whose input says why it has no form", noForm)
	}
}

// FuzzClassify: Classify never panics, is sealed exactly for the extension's envelopes, decodes
// at least one named call from cleartext and always gives a reason for refusing.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{approvalState, inputState, corruptState, "", "nrv1:x", "v2:", "v1:x", "{}", "null", `{"pendingCalls":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p := Classify(raw)
		if (p.Kind == PayloadSealed) != Sealed(raw) {
			t.Fatalf("Classify(%q).Kind = %q, Sealed = %v", raw, p.Kind, Sealed(raw))
		}
		switch p.Kind {
		case PayloadSealed:
		case PayloadCleartext:
			if len(p.Calls) == 0 {
				t.Fatalf("cleartext without calls: %q", raw)
			}
			for _, c := range p.Calls {
				if c.Tool == "" || c.ID == "" {
					t.Fatalf("a call without id or tool: %q", raw)
				}
			}
			if p.Input != nil && p.Input.Tool == "" {
				t.Fatalf("an input form without its tool: %q", raw)
			}
		case PayloadUnreadable:
			if p.Reason == "" {
				t.Fatalf("refused without a reason: %q", raw)
			}
		default:
			t.Fatalf("Classify(%q).Kind = %q", raw, p.Kind)
		}
	})
}
