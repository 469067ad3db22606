package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/model"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

const refundParams = `{"type":"object","required":["order_id","amount"],"properties":{"order_id":{"type":"string"},"amount":{"type":"number","minimum":0,"maximum":500},"note":{"type":"string"},"urgent":{"type":"boolean"},"channels":{"type":"array","items":{"enum":["mail","sms"]}}}}`

// editableTool is a non-idempotent write whose calls a reviewer may edit.
type editableTool struct {
	writeTool
}

func (editableTool) Parameters() json.RawMessage { return json.RawMessage(refundParams) }
func (editableTool) Editable() bool              { return true }

// smallEditableTool is an editable write whose calls' arguments are bounded at 200 bytes.
type smallEditableTool struct{ editableTool }

func (smallEditableTool) MaxArgumentsBytes() int { return 200 }

// withEditable adds refund_edit (editable), refund_admin (editable, admin-only) and
// refund_small (editable, arguments bounded at 200 bytes) to the runtime and the configuration.
func withEditable() envOption {
	return func(e *env, c *engine.Config) {
		for _, t := range []tool.Tool{
			editableTool{writeTool{baseTool: baseTool{name: "refund_edit", rec: e.rec}, effect: tool.EffectNonIdempotentWrite}},
			editableTool{writeTool{baseTool: baseTool{name: "refund_admin", rec: e.rec}, effect: tool.EffectNonIdempotentWrite, admin: true}},
			smallEditableTool{editableTool{writeTool{baseTool: baseTool{name: "refund_small", rec: e.rec}, effect: tool.EffectNonIdempotentWrite}}},
		} {
			c.Tools = append(c.Tools, t)
			e.cfg.Tools = append(e.cfg.Tools, t.Name())
		}
		e.saveConfig()
	}
}

func mustPatch(t *testing.T, raw string) jsonpatch.Patch {
	t.Helper()
	p, err := jsonpatch.Decode([]byte(raw))
	if err != nil {
		t.Fatalf("patch %s: %v", raw, err)
	}
	return p
}

func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEditAndApprove: the tool runs with the edited arguments; the event records edited,
// patchDigest and changedPaths but no value; the timeline keeps the proposed and approved
// arguments of the edit; the card shows the model's words.
func TestEditAndApprove(t *testing.T) {
	script := []model.Turn{{Content: "Refunding the full amount, as the customer <asked>.", ToolCalls: []model.ScriptedCall{call("refund_edit", `{"order_id":"A1","amount":100}`)}}}
	e := newEnv(t, script, withEditable())
	run := e.startAndRun(admin)
	view := e.view(run.UUID)
	if got := view.Pause.ModelText; got != "Refunding the full amount, as the customer <asked>." {
		t.Errorf("ModelText = %q", got)
	}
	if !view.Pause.Tools["refund_edit"].Editable {
		t.Errorf("refund_edit not shown as editable")
	}
	id := view.Pause.PendingCalls[0].ID
	edits := map[string]jsonpatch.Patch{id: mustPatch(t, `[{"op":"replace","path":"/amount","value":40},{"op":"add","path":"/note","value":"partial"}]`)}
	digest := schema.PatchDigest(view.Pause.Digest, edits)
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest, Edits: edits, PatchDigest: digest}); err != nil {
		t.Fatalf("approve with edits: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	got := e.rec.get("refund_edit")
	if len(got) != 1 || canonical(t, got[0]) != `{"amount":40,"note":"partial","order_id":"A1"}` {
		t.Fatalf("tool received %s, want the edited arguments", got)
	}
	var payload map[string]any
	for _, ev := range e.events(run.UUID) {
		if ev.Kind == runtime.EventApproval {
			dec := json.NewDecoder(strings.NewReader(string(ev.Payload)))
			dec.UseNumber()
			if err := dec.Decode(&payload); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]any{"approved": true, "decidedBy": json.Number("3"), "edited": true, "patchDigest": digest,
		"changedPaths": []any{"/" + id + "/amount", "/" + id + "/note"}}
	if fmt.Sprint(payload) != fmt.Sprint(want) {
		t.Errorf("approval event = %v, want %v", payload, want)
	}
	if enc, _ := json.Marshal(payload); strings.Contains(string(enc), "40") || strings.Contains(string(enc), "partial") {
		t.Errorf("approval event carries a value: %s", enc)
	}
	tl, err := e.rt.Timeline(e.ctx, support, e.run(run.UUID))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Edits) != 1 {
		t.Fatalf("timeline edits = %d, want 1", len(tl.Edits))
	}
	ce := tl.Edits[0]
	if ce.CallID != id || ce.Tool != "refund_edit" || canonical(t, ce.Proposed) != `{"amount":100,"order_id":"A1"}` ||
		canonical(t, ce.Approved) != `{"amount":40,"note":"partial","order_id":"A1"}` ||
		ce.PatchDigest != digest || !slices.Equal(ce.ChangedPaths, []string{"/amount", "/note"}) || ce.DecidedBy != reviewer.UserUID || ce.Decided == 0 {
		t.Errorf("timeline edit = %+v", ce)
	}
}

// TestEditRefusals: every refusal of an edited approval leaves the run waiting, decides
// nothing and runs nothing.
func TestEditRefusals(t *testing.T) {
	replace := `[{"op":"replace","path":"/amount","value":40}]`
	cases := []struct {
		name     string
		tool     string
		actor    runtime.Actor
		fourEyes bool
		patch    string
		mutate   func(*runtime.ApprovalDecision)
		code     runtime.Code
		fields   []string
	}{
		{"tool not editable", "send_mail", reviewer, false, `[{"op":"add","path":"/to","value":"x"}]`, nil, runtime.CodeEditNotPermitted, nil},
		{"admin-only write tool, reviewer: the gate first", "refund_admin", reviewer, false, replace, nil, runtime.CodeApproverNotPermitted, nil},
		{"four-eyes", "refund_edit", admin, true, replace, nil, runtime.CodeSelfApprovalDenied, nil},
		{"patch does not apply", "refund_edit", reviewer, false, `[{"op":"remove","path":"/missing"}]`, nil, runtime.CodeInvalidEdit, []string{""}},
		{"fails parameters", "refund_edit", reviewer, false, `[{"op":"replace","path":"/amount","value":9999},{"op":"remove","path":"/order_id"}]`, nil, runtime.CodeInvalidEdit, []string{"/amount", "/order_id"}},
		{"stale patch digest", "refund_edit", reviewer, false, replace, func(d *runtime.ApprovalDecision) { d.PatchDigest = strings.Repeat("0", 64) }, runtime.CodeStaleApprovalTurn, nil},
		{"a different patch than the digest's", "refund_edit", reviewer, false, replace, func(d *runtime.ApprovalDecision) {
			d.Edits = map[string]jsonpatch.Patch{firstKey(d.Edits): jsonpatch.Patch{{Op: jsonpatch.OpReplace, Path: "/amount", Value: json.Number("41")}}}
		}, runtime.CodeStaleApprovalTurn, nil},
		{"stale turn", "refund_edit", reviewer, false, replace, func(d *runtime.ApprovalDecision) { d.TurnDigest = strings.Repeat("0", 64) }, runtime.CodeStaleApprovalTurn, nil},
		{"service account, write turn", "refund_edit", service, false, replace, nil, runtime.CodeApproverNotPermitted, nil},
		{"service account, the patch not applied", "refund_edit", service, false, `[{"op":"remove","path":"/missing"}]`, nil, runtime.CodeApproverNotPermitted, nil},
		{"undeclared property added", "refund_edit", reviewer, false, `[{"op":"add","path":"/bcc","value":"attacker@example.com"}]`, nil, runtime.CodeInvalidEdit, []string{"/bcc"}},
		{"undeclared properties copied", "refund_edit", reviewer, false, `[{"op":"copy","from":"","path":"/k0"},{"op":"copy","from":"","path":"/k1"}]`, nil, runtime.CodeInvalidEdit, []string{"/k0", "/k1"}},
		{"larger than the tool's bound", "refund_edit", reviewer, false, `[{"op":"add","path":"/note","value":"` + strings.Repeat("x", tool.DefaultMaxArgumentsBytes) + `"}]`, nil, runtime.CodeInvalidEdit, []string{""}},
		{"larger than the tool's own bound", "refund_small", reviewer, false, `[{"op":"add","path":"/note","value":"` + strings.Repeat("x", 200) + `"}]`, nil, runtime.CodeInvalidEdit, []string{""}},
		{"edits in a batch", "refund_edit", reviewer, false, replace, func(d *runtime.ApprovalDecision) { d.Batch = true }, runtime.CodeInvalidRequest, nil},
		{"edits with a denial", "refund_edit", reviewer, false, replace, func(d *runtime.ApprovalDecision) { d.Approved = false }, runtime.CodeInvalidRequest, nil},
		{"unknown call", "refund_edit", reviewer, false, replace, func(d *runtime.ApprovalDecision) {
			d.Edits = map[string]jsonpatch.Patch{"nope": d.Edits[firstKey(d.Edits)]}
			d.PatchDigest = ""
		}, runtime.CodeInvalidEdit, []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call(c.tool, `{"order_id":"A1","amount":100}`))}, withEditable())
			if c.fourEyes {
				e.cfg.RequireSecondApprover = true
				e.saveConfig()
			}
			run := e.startAndRun(admin)
			view := e.view(run.UUID)
			id := view.Pause.PendingCalls[0].ID
			edits := map[string]jsonpatch.Patch{id: mustPatch(t, c.patch)}
			d := runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest, Edits: edits, PatchDigest: schema.PatchDigest(view.Pause.Digest, edits)}
			if c.mutate != nil {
				c.mutate(&d)
			}
			_, err := e.rt.Approve(e.ctx, c.actor, run.UUID, d)
			var re *runtime.Error
			if !errors.As(err, &re) || re.Code != c.code {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
			var ptrs []string
			for _, f := range re.Fields {
				ptrs = append(ptrs, f.Pointer)
			}
			slices.Sort(ptrs)
			if !slices.Equal(ptrs, c.fields) {
				t.Errorf("field pointers = %q, want %q", ptrs, c.fields)
			}
			if strings.Contains(strings.ReplaceAll(re.Error(), run.UUID, ""), "9999") {
				t.Errorf("error repeats a value: %v", re)
			}
			e.rt.Wait()
			e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			if n := len(e.rec.get(c.tool)); n != 0 {
				t.Errorf("tool ran %d times", n)
			}
			if _, err := e.store.LatestDecision(e.ctx, run.UID); !errors.Is(err, runtime.ErrNotFound) {
				t.Errorf("a decision was stored: %v", err)
			}
		})
	}
}

// TestEditUndeclaredModelKeys: an edit may remove a key the model sent that the parameters do
// not declare, and may not change its value (InvalidEdit naming it).
func TestEditUndeclaredModelKeys(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("refund_edit", `{"order_id":"A1","amount":100,"extra":true}`))}, withEditable())
	run := e.startAndRun(admin)
	view := e.view(run.UUID)
	id := view.Pause.PendingCalls[0].ID
	approve := func(patch string) error {
		edits := map[string]jsonpatch.Patch{id: mustPatch(t, patch)}
		_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest, Edits: edits, PatchDigest: schema.PatchDigest(view.Pause.Digest, edits)})
		return err
	}
	var re *runtime.Error
	if err := approve(`[{"op":"replace","path":"/extra","value":false}]`); !errors.As(err, &re) || re.Code != runtime.CodeInvalidEdit || len(re.Fields) != 1 || re.Fields[0].Pointer != "/extra" {
		t.Fatalf("changing an undeclared key: err = %v, want invalid_edit at /extra", err)
	}
	if err := approve(`[{"op":"remove","path":"/extra"},{"op":"replace","path":"/amount","value":40}]`); err != nil {
		t.Fatalf("removing an undeclared key: %v", err)
	}
	e.rt.Wait()
	if got := e.rec.get("refund_edit"); len(got) != 1 || canonical(t, got[0]) != `{"amount":40,"order_id":"A1"}` {
		t.Fatalf("tool received %s", got)
	}
}

func firstKey(m map[string]jsonpatch.Patch) string {
	for k := range m {
		return k
	}
	return ""
}

// TestEditCall: the form's view of an editable call; a posted form becomes the patch from
// the model's arguments (undeclared keys of the model kept) and the digest an approval with
// that patch is accepted with; invalid values are InvalidEdit with per-field errors.
func TestEditCall(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("refund_edit", `{"order_id":"A1","amount":100,"extra":true}`))}, withEditable())
	run := e.startAndRun(admin)
	view := e.view(run.UUID)
	id := view.Pause.PendingCalls[0].ID
	ev, err := e.rt.EditCall(e.ctx, reviewer, run.UUID, id, "", nil)
	if err != nil || ev.Form == nil || ev.Call.ID != id || fmt.Sprint(ev.Proposed) != "map[amount:100 extra:true order_id:A1]" {
		t.Fatalf("EditCall = %+v, %v", ev, err)
	}
	if _, err := e.rt.EditCall(e.ctx, reviewer, run.UUID, id, view.Pause.Digest, url.Values{"input/order_id": {"A1"}, "input/amount": {"abc"}}); !errors.Is(err, runtime.ErrInvalidEdit) {
		t.Fatalf("non-number: err = %v, want InvalidEdit", err)
	}
	if _, err := e.rt.EditCall(e.ctx, reviewer, run.UUID, id, "stale", url.Values{"input/order_id": {"A1"}, "input/amount": {"40"}}); !errors.Is(err, runtime.ErrStaleApprovalTurn) {
		t.Fatalf("stale digest: err = %v", err)
	}
	if _, err := e.rt.EditCall(e.ctx, support, run.UUID, id, "", nil); !errors.Is(err, runtime.ErrRunAccessDenied) {
		t.Fatalf("support: err = %v", err)
	}
	ev, err = e.rt.EditCall(e.ctx, reviewer, run.UUID, id, view.Pause.Digest, url.Values{"input/order_id": {"A1"}, "input/amount": {"40"}})
	if err != nil {
		t.Fatalf("EditCall with a form: %v", err)
	}
	if got, _ := json.Marshal(ev.Patch); string(got) != `[{"op":"replace","path":"/amount","value":40}]` {
		t.Errorf("patch = %s", got)
	}
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest,
		Edits: map[string]jsonpatch.Patch{id: ev.Patch}, PatchDigest: ev.PatchDigest}); err != nil {
		t.Fatalf("approve the previewed patch: %v", err)
	}
	e.rt.Wait()
	if got := e.rec.get("refund_edit"); len(got) != 1 || canonical(t, got[0]) != `{"amount":40,"extra":true,"order_id":"A1"}` {
		t.Errorf("tool received %s", got)
	}
}

// TestConcurrentEdits: two reviewers (16 goroutines) approve the same turn with different
// edits at once: exactly one wins, every other is refused as already decided or stale, and
// the tool runs once, with the winner's arguments.
func TestConcurrentEdits(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("refund_edit", `{"order_id":"A1","amount":100}`))}, withEditable())
	run := e.startAndRun(admin)
	view := e.view(run.UUID)
	id := view.Pause.PendingCalls[0].ID
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actor := []runtime.Actor{reviewer, admin2}[i%2]
			edits := map[string]jsonpatch.Patch{id: mustPatch(t, fmt.Sprintf(`[{"op":"replace","path":"/amount","value":%d}]`, i+1))}
			<-start
			_, errs[i] = e.rt.Approve(e.ctx, actor, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest,
				Edits: edits, PatchDigest: schema.PatchDigest(view.Pause.Digest, edits), IdempotencyKey: fmt.Sprintf("k%d", i)})
		}()
	}
	close(start)
	wg.Wait()
	e.rt.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("approvals %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, runtime.ErrRunAlreadyResuming) && !errors.Is(err, runtime.ErrStaleApprovalTurn) && !errors.Is(err, runtime.ErrRunNotAwaitingApproval):
			t.Fatalf("approval %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no approval won: %v", errs)
	}
	got := e.rec.get("refund_edit")
	if len(got) != 1 || canonical(t, got[0]) != fmt.Sprintf(`{"amount":%d,"order_id":"A1"}`, winner+1) {
		t.Fatalf("tool received %s, want the winner's amount %d once", got, winner+1)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
}
