package handlers

import (
	"encoding/json"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/jsonpatch"
)

// TestRunCallsKeepsTheArgumentsApart: the run page lists every executed call with its three
// sets of arguments; an edit belongs to the first approved call with its id executed since
// the decision (ids repeat across turns), which shows who edited it and the change table; an
// edited call that has not run is listed after them, not executed.
func TestRunCallsKeepsTheArgumentsApart(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	calls := []runtime.ExecutedCall{
		{CallID: "call_0_0", Tool: "refund", Crdate: 100, Proposed: raw(`{"amount":100}`), Approved: raw(`{"amount":40}`), Effective: raw(`{"amount":40}`)},
		{CallID: "call_0_1", Tool: "lookup", Crdate: 100, Proposed: raw(`{"q":"x"}`), Effective: raw(`{"q":"x"}`)},
		{CallID: "call_0_0", Tool: "refund", Crdate: 200, Proposed: raw(`{"amount":7}`), Approved: raw(`{"amount":7}`), Effective: raw(`{"amount":7}`)},
	}
	patch := jsonpatch.Patch{{Op: jsonpatch.OpReplace, Path: "/amount", Value: json.Number("40")}}
	edits := []runtime.CallEdit{
		{CallID: "call_0_0", Tool: "refund", Proposed: raw(`{"amount":100}`), Approved: raw(`{"amount":40}`), Patch: patch, DecidedBy: 3, Decided: 90},
		{CallID: "call_1_0", Tool: "refund", Proposed: raw(`{"amount":5}`), Approved: raw(`{"amount":6}`), Patch: patch, DecidedBy: 3, Decided: 300},
	}
	got := runCalls(calls, edits, nameBook{3: "rita"})
	if len(got) != 4 {
		t.Fatalf("%d calls listed, want 4: %+v", len(got), got)
	}
	first, lookup, again, pending := got[0], got[1], got[2], got[3]
	if first.EditedBy != "rita" || len(first.Rows) != 1 || !first.Executed || first.Proposed != "{\n  \"amount\": 100\n}" ||
		first.Approved != "{\n  \"amount\": 40\n}" || first.Effective != "{\n  \"amount\": 40\n}" {
		t.Errorf("the edited call: %+v", first)
	}
	if lookup.EditedBy != "" || lookup.Approved != "" || lookup.Effective == "" || !lookup.Executed {
		t.Errorf("the call no approval decided: %+v", lookup)
	}
	if again.EditedBy != "" || len(again.Rows) != 0 {
		t.Errorf("the later call with the same id took the edit: %+v", again)
	}
	if pending.CallID != "call_1_0" || pending.Executed || pending.Effective != "" || pending.EditedBy != "rita" || pending.Approved == "" {
		t.Errorf("the edited call that has not run: %+v", pending)
	}
}
