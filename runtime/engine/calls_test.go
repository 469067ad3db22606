package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/model"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// defaultsParams declares defaults for currency and note, which nothing may fill in.
const defaultsParams = `{"type":"object","required":["order_id","amount"],"properties":{"order_id":{"type":"string"},"amount":{"type":"number","default":10},"currency":{"type":"string","default":"EUR"},"note":{"type":"string","default":"none"}}}`

// defaultsTool is an editable non-idempotent write whose parameters have defaults.
type defaultsTool struct{ writeTool }

func (defaultsTool) Parameters() json.RawMessage { return json.RawMessage(defaultsParams) }
func (defaultsTool) Editable() bool              { return true }

// withDefaultsTool adds refund_defaults (defaultsTool) to the runtime and the configuration.
func withDefaultsTool() envOption {
	return func(e *env, c *engine.Config) {
		t := defaultsTool{writeTool{baseTool: baseTool{name: "refund_defaults", rec: e.rec}, effect: tool.EffectNonIdempotentWrite}}
		c.Tools = append(c.Tools, t)
		e.cfg.Tools = append(e.cfg.Tools, t.Name())
		e.saveConfig()
	}
}

// TestEffectiveArgumentsAreWhatTheToolWasSent: a turn approved with an edit runs the edited
// call and, unedited, a read-only call; the next turn's read-only call, which the model spaced
// out, runs without an approval. Each executed call is recorded with the model's (proposed),
// the approved and the effective arguments apart, effective byte for byte what the tool
// received: no schema default is filled in, the model's spacing is kept, and a call no
// approval decided has no approved arguments. The timeline carries the same calls.
func TestEffectiveArgumentsAreWhatTheToolWasSent(t *testing.T) {
	spaced := `{ "q" : "x" }`
	spacedText, _ := json.Marshal(spaced)
	script := []model.Turn{
		turn(call("refund_defaults", `{"order_id":"A1","amount":100}`), call("lookup", `{"q":"y"}`)),
		turn(call("lookup", string(spacedText))),
	}
	e := newEnv(t, script, withDefaultsTool())
	run := e.startAndRun(admin)
	view := e.view(run.UUID)
	id := view.Pause.PendingCalls[0].ID
	edits := map[string]jsonpatch.Patch{id: mustPatch(t, `[{"op":"replace","path":"/amount","value":40}]`)}
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest,
		Edits: edits, PatchDigest: schema.PatchDigest(view.Pause.Digest, edits)}); err != nil {
		t.Fatalf("approve with edits: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)

	refund, lookups := e.rec.get("refund_defaults"), e.rec.get("lookup")
	if len(refund) != 1 || len(lookups) != 2 {
		t.Fatalf("the tools received %s and %s, want one refund and two lookups", refund, lookups)
	}
	if canonical(t, refund[0]) != `{"amount":40,"order_id":"A1"}` {
		t.Fatalf("refund_defaults received %s: want the edited arguments and no default", refund[0])
	}
	calls, err := e.rt.Calls(e.ctx, support, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ id, tool, proposed, approved, effective string }
	wants := []want{
		{id, "refund_defaults", `{"order_id":"A1","amount":100}`, string(refund[0]), string(refund[0])},
		{"call_0_1", "lookup", `{"q":"y"}`, `{"q":"y"}`, string(lookups[0])},
		{"call_1_0", "lookup", spaced, "", string(lookups[1])},
	}
	if len(calls) != len(wants) {
		t.Fatalf("Calls = %d calls, want %d: %+v", len(calls), len(wants), calls)
	}
	for i, w := range wants {
		c := calls[i]
		if c.CallID != w.id || c.Tool != w.tool || string(c.Proposed) != w.proposed || string(c.Approved) != w.approved ||
			string(c.Effective) != w.effective {
			t.Errorf("call %d = {%s %s proposed %s approved %s effective %s}, want %+v", i, c.CallID, c.Tool, c.Proposed, c.Approved, c.Effective, w)
		}
	}
	if string(calls[2].Effective) != spaced {
		t.Errorf("the spaced lookup ran with %s, want the model's text %s byte for byte", calls[1].Effective, spaced)
	}
	if strings.Contains(string(calls[0].Effective), "EUR") || string(calls[0].Effective) == string(calls[0].Proposed) {
		t.Errorf("effective %s: want the edit and no default", calls[0].Effective)
	}
	tl, err := e.rt.Timeline(e.ctx, support, e.run(run.UUID))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Calls) != len(calls) || tl.Calls[0].Sequence != calls[0].Sequence || string(tl.Calls[2].Effective) != string(calls[2].Effective) {
		t.Errorf("timeline calls = %+v, want those of Calls", tl.Calls)
	}
	var re *runtime.Error
	if _, err := e.rt.Calls(e.ctx, support, "00000000-0000-4000-8000-000000000000"); !errors.As(err, &re) || re.Code != runtime.CodeRunNotFound {
		t.Errorf("Calls of no run: %v, want run_not_found", err)
	}
}

// TestInputCallRecordsTheSubmittedArguments: an input tool runs with the person's values
// overlaid on the model's arguments; its record has the model's arguments, no approved ones,
// and those the tool received.
func TestInputCallRecordsTheSubmittedArguments(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{"city":"x","extra":1}`))})
	run := e.startAndRun(admin)
	view := e.view(run.UUID)
	if _, err := e.rt.SubmitInput(e.ctx, reviewer, run.UUID, runtime.InputSubmission{TurnDigest: view.Pause.Digest,
		Data: map[string]any{"city": "Paris"}}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	got := e.rec.get("ask_city")
	calls, err := e.rt.Calls(e.ctx, support, run.UUID)
	if err != nil || len(got) != 1 || len(calls) != 1 {
		t.Fatalf("Calls = %+v, %v; the tool received %s", calls, err, got)
	}
	c := calls[0]
	if string(c.Proposed) != `{"city":"x","extra":1}` || c.Approved != nil || string(c.Effective) != string(got[0]) ||
		canonical(t, c.Effective) != `{"city":"Paris","extra":1}` {
		t.Errorf("input call = proposed %s approved %s effective %s; the tool received %s", c.Proposed, c.Approved, c.Effective, got[0])
	}
}

// TestApprovedCallThatElicitsKeepsItsApproval: a call an approval let run whose server then
// asks for input is recorded, once answered, with the approved arguments beside the proposed
// and effective ones (its approval is kept through the elicitation pause).
func TestApprovedCallThatElicitsKeepsItsApproval(t *testing.T) {
	log := &answerLog{}
	srv := elicitingServer(t, log, amountSchema)
	def := srv.Definition(t, "crm_refund", "confirm_refund", true)
	def.MCP.ElicitationTimeout = 2 * time.Minute
	e := remoteEnv(t, []model.Turn{turn(call("crm_refund", `{"order":"A1"}`)), {Content: "done"}}, def)
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	view := e.view(run.UUID)
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	submit(t, e, admin, run.UUID, map[string]any{"amount": 12.5}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	calls, err := e.rt.Calls(e.ctx, support, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || string(calls[0].Approved) != `{"order":"A1"}` || string(calls[0].Proposed) != `{"order":"A1"}` {
		t.Fatalf("Calls = %+v, want the one call with its approval kept", calls)
	}
}
