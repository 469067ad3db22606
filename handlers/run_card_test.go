package handlers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/runtime/tool"
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

func TestDecisionGatesOnTheCard(t *testing.T) {
	admin := runtime.Actor{UserUID: 1, Name: "ada", Role: runtime.RoleAdmin}
	rita := runtime.Actor{UserUID: 2, Name: "rita", Role: runtime.RoleReviewer}
	call := func(name string) runtime.PendingCall {
		return runtime.PendingCall{ID: "c-" + name, Function: runtime.PendingFunction{Name: name, Arguments: json.RawMessage(`{}`)}}
	}
	pause := &runtime.Pause{PendingCalls: []runtime.PendingCall{call("read"), call("write"), call("gone")}, Tools: map[string]runtime.ToolInfo{
		"read":  {Registered: true, Offered: true, Effect: tool.EffectReadOnly},
		"write": {Registered: true, Offered: true, Effect: tool.EffectNonIdempotentWrite, AdminOnly: true, NeedsApproval: true},
		"gone":  {Registered: true, Offered: false, Effect: tool.EffectIdempotentWrite, NeedsApproval: true},
	}}
	cfgs := configIndex{byUID: map[int64]runtime.Configuration{7: {UID: 7, RequireSecondApprover: true}}}
	run := runtime.Run{ConfigurationUID: 7, BeUser: 2}

	got := approveBlocked(rita, run, pause, cfgs)
	want := []string{refusal.FourEyes,
		"Only an admin may approve this turn: the tool “write” is admin-only.",
		"Nobody may approve this turn: the tool “gone” is no longer enabled for this configuration."}
	if !slices.Equal(got, want) {
		t.Errorf("reviewer who started the run:\n got %q\nwant %q", got, want)
	}
	if got := approveBlocked(admin, run, pause, cfgs); len(got) != 1 || !strings.Contains(got[0], "“gone”") {
		t.Errorf("admin: %q, want only the disabled tool", got)
	}
	input := &runtime.Pause{PendingCalls: []runtime.PendingCall{call("ask")}, InputTool: "ask",
		Tools: map[string]runtime.ToolInfo{"ask": {Registered: true, Offered: true, AdminOnly: true}}}
	if got := submitBlocked(rita, input); got != "Only an admin may submit input to this turn: the tool “ask” is admin-only." {
		t.Errorf("reviewer on an admin-only input tool: %q", got)
	}
	if got := submitBlocked(admin, input); got != "" {
		t.Errorf("admin on an admin-only input tool: %q", got)
	}
	unknown := &runtime.Pause{PendingCalls: []runtime.PendingCall{call("nope")}, Tools: map[string]runtime.ToolInfo{"nope": {}}}
	if got := approveBlocked(admin, runtime.Run{}, unknown, cfgs); len(got) != 1 || !strings.Contains(got[0], "not registered") {
		t.Errorf("unregistered tool: %q", got)
	}
	if b := toolBadges("nope", runtime.ToolInfo{}, false, false); len(b) != 1 || b[0].Label != "Tool not registered" {
		t.Errorf("badges of an unregistered tool: %+v", b)
	}
}
