package engine_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// remoteTool is an HTTP tool definition the test changes while a run waits, and how often
// its endpoint was called.
type remoteTool struct {
	def   tool.Definition
	calls *atomic.Int64
}

func (e *env) remoteTool(name string, effect tool.Effect, approval bool) *remoteTool {
	e.t.Helper()
	calls := &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		calls.Add(1)
		_, _ = w.Write([]byte(`{"content":"ok"}`))
	}))
	e.t.Cleanup(srv.Close)
	rt := &remoteTool{calls: calls, def: tool.Definition{Name: name, Description: "remote " + name,
		Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`),
		Effect:     effect, RequiresApproval: approval, HTTP: tool.HTTPConfig{URL: srv.URL}}}
	e.saveTool(rt.def)
	return rt
}

func (e *env) saveTool(def tool.Definition) {
	e.t.Helper()
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		e.t.Fatal(err)
	}
}

// displayFresh is how long pages show the tools as read (the runtime's display cache).
const displayFresh = 2 * time.Second

func wantCode(t *testing.T, err error, code runtime.Code) *runtime.Error {
	t.Helper()
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
	return re
}

func hasChange(changes []runtime.DefinitionChange, toolName, field string) bool {
	for _, c := range changes {
		if c.Tool == toolName && c.Field == field {
			return true
		}
	}
	return false
}

// TestDecisionAgainstChangedToolIsRefused: a tool redeployed while the run waited refuses
// the decision made against the pinned definition (tool_changed, what changed, run still
// waiting, tool not run); the view re-presents the call under the current definition with a
// new digest, and a decision bound to it is accepted.
func TestDecisionAgainstChangedToolIsRefused(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("refund", `{"amount":5}`))})
	refund := e.remoteTool("refund", tool.EffectReadOnly, true)
	e.cfg.Tools = []string{"refund"}
	e.saveConfig()
	run := e.startAndRun(admin)
	before := e.view(run.UUID).Pause
	if len(before.Changes) != 0 || before.PinDigest == "" {
		t.Fatalf("fresh pause: changes %+v, pin digest %q", before.Changes, before.PinDigest)
	}
	refund.def.Parameters = json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"},"currency":{"type":"string"}}}`)
	refund.def.Effect = tool.EffectIdempotentWrite
	e.saveTool(refund.def)

	_, err := e.rt.Approve(e.ctx, admin2, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: before.Digest})
	re := wantCode(t, err, runtime.CodeToolChanged)
	if !hasChange(re.Changes, "refund", "parameters") || !hasChange(re.Changes, "refund", "effect") {
		t.Fatalf("changes = %+v, want parameters and effect of refund", re.Changes)
	}
	_, err = e.rt.Approve(e.ctx, admin2, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: before.Digest, PinDigest: before.PinDigest})
	wantCode(t, err, runtime.CodeToolChanged)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)

	e.clock.Advance(displayFresh)
	after := e.view(run.UUID).Pause
	if after.PinDigest == before.PinDigest || !hasChange(after.Changes, "refund", "effect") {
		t.Fatalf("view after the change: pin digest %q (was %q), changes %+v", after.PinDigest, before.PinDigest, after.Changes)
	}
	if _, err := e.rt.Approve(e.ctx, admin2, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: after.Digest, PinDigest: after.PinDigest}); err != nil {
		t.Fatalf("approve under the current definition: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := refund.calls.Load(); n != 1 {
		t.Fatalf("refund called %d times, want 1", n)
	}
}

// TestFourEyesTurnedOnIsAChange: the configuration's decision policy is pinned too.
func TestFourEyesTurnedOnIsAChange(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	p := e.view(run.UUID).Pause
	e.cfg.RequireSecondApprover = true
	e.saveConfig()
	_, err := e.rt.Approve(e.ctx, admin2, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: p.Digest})
	re := wantCode(t, err, runtime.CodeToolChanged)
	if !hasChange(re.Changes, "", "four_eyes") {
		t.Fatalf("changes = %+v, want four_eyes", re.Changes)
	}
}

// TestToolBecameWriteWhileWaitingForInput: a call that became a write while the run waited
// for input refuses the submission (tool_changed); re-reviewed under the current definition
// the input is accepted, but the write is not executed without approval (write_unapproved).
func TestToolBecameWriteWhileWaitingForInput(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`), call("refund", `{"amount":5}`))})
	refund := e.remoteTool("refund", tool.EffectReadOnly, false)
	e.cfg.Tools = []string{"ask_city", "refund"}
	e.saveConfig()
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	p := e.view(run.UUID).Pause
	refund.def.Effect = tool.EffectNonIdempotentWrite
	e.saveTool(refund.def)

	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Berlin"}, TurnDigest: p.Digest})
	re := wantCode(t, err, runtime.CodeToolChanged)
	if !hasChange(re.Changes, "refund", "approval") {
		t.Fatalf("changes = %+v, want refund's approval", re.Changes)
	}
	e.clock.Advance(displayFresh)
	now := e.view(run.UUID).Pause
	if _, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Berlin"}, TurnDigest: now.Digest, PinDigest: now.PinDigest}); err != nil {
		t.Fatalf("submit under the current definition: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := refund.calls.Load(); n != 0 {
		t.Fatalf("refund, now a write, ran %d times without approval", n)
	}
	if len(e.rec.get("ask_city")) != 1 {
		t.Fatalf("ask_city calls = %d, want 1", len(e.rec.get("ask_city")))
	}
	var unapproved bool
	for _, g := range e.governance(run.UUID) {
		unapproved = unapproved || g.Decision == runtime.GovernanceWriteUnapproved && g.ToolName == "refund"
	}
	if !unapproved {
		t.Fatalf("no write_unapproved row for refund: %+v", e.governance(run.UUID))
	}
}

// TestPauseWithoutPinCountsAsChanged: a pause stored before pins existed binds no
// definitions, so a decision must carry the current ones (tool_changed otherwise).
func TestPauseWithoutPinCountsAsChanged(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	var st map[string]json.RawMessage
	if err := json.Unmarshal([]byte(run.SuspendedState), &st); err != nil || st["definitions"] == nil {
		t.Fatalf("stored pause has no pin: %v", err)
	}
	delete(st, "definitions")
	old, _ := json.Marshal(st)
	if _, err := e.sql.ExecContext(e.ctx, `UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uid = ?`, string(old), run.UID); err != nil {
		t.Fatal(err)
	}
	p := e.view(run.UUID).Pause
	if !hasChange(p.Changes, "", "pinned") {
		t.Fatalf("view of an unpinned pause: changes %+v", p.Changes)
	}
	_, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: p.Digest})
	wantCode(t, err, runtime.CodeToolChanged)
	if _, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: p.Digest, PinDigest: p.PinDigest}); err != nil {
		t.Fatalf("approve with the current definitions: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
}
