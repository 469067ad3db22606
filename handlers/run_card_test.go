package handlers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
)

func TestPrettyJSON(t *testing.T) {
	t.Parallel()
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

// TestGateNotes: the card words every refusal the engine's gate makes (its code, the gate's
// reason and tool), never showing a bare code.
func TestGateNotes(t *testing.T) {
	t.Parallel()
	refused := func(reason, tool string) *runtime.Error {
		return &runtime.Error{Code: runtime.CodeApproverNotPermitted, GateDenial: &runtime.GovernanceEvent{Reason: reason, ToolName: tool}}
	}
	g := runtime.DecisionGate{Refusals: []*runtime.Error{{Code: runtime.CodeSelfApprovalDenied},
		refused(runtime.ReasonToolAdminOnly, "write"), refused(runtime.ReasonToolNoLongerPermitted, "gone"), refused(runtime.ReasonToolNotRegistered, "nope")}}
	want := []string{refusal.FourEyes,
		"Only an admin may approve this turn: the tool “write” is admin-only.",
		"Nobody may approve this turn: the tool “gone” is no longer enabled for this configuration.",
		"Nobody may approve this turn: the tool “nope” is not registered."}
	if got := gateNotes(g, "approve"); !slices.Equal(got, want) {
		t.Errorf("notes\n got %q\nwant %q", got, want)
	}
	if got := gateNote(refused(runtime.ReasonToolAdminOnly, "ask"), "submit input to"); got != "Only an admin may submit input to this turn: the tool “ask” is admin-only." {
		t.Errorf("admin-only input tool: %q", got)
	}
	for _, reason := range []string{runtime.ReasonDeciderDisabled, runtime.ReasonServiceAccountWrite, runtime.ReasonServiceAccountGuardrail,
		runtime.ReasonServiceAccountSubmit, runtime.ReasonRuleGuardrail} {
		if got := gateNote(refused(reason, ""), "approve"); !strings.HasPrefix(got, "You may not approve this turn: ") || strings.Contains(got, reason) {
			t.Errorf("reason %s: %q", reason, got)
		}
	}
	if b := toolBadges("nope", runtime.ToolInfo{}, false, false); len(b) != 1 || b[0].Label != "Tool not registered" {
		t.Errorf("badges of an unregistered tool: %+v", b)
	}
}
