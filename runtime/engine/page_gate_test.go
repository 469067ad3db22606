package engine_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// TestPageGateIsTheDecisionGate pins every refusal the run page can show (Get's Pause.Gate) to
// the decision the same actor then makes: the refusal a decision gets is the gate's first, with
// the same code, reason and words, and a gate that refuses nothing lets the decision through.
// Reasons lists every refusal the gate shows, in the pipeline's order.
func TestPageGateIsTheDecisionGate(t *testing.T) {
	type world struct {
		rt    *engine.Runtime
		actor runtime.Actor
		uuid  string
	}
	cases := []struct {
		name    string
		tool    string
		four    bool
		starter runtime.Actor
		// after changes the world once the run waits.
		after   func(e *env, w *world)
		decider runtime.Actor
		// codes and reasons are the gate's refusals (reason "" for four-eyes); nil: none.
		codes   []runtime.Code
		reasons []string
	}{
		{name: "an approval the viewer may make", tool: "send_mail", starter: admin, decider: reviewer},
		{name: "four-eyes", tool: "send_mail", four: true, starter: reviewer, decider: reviewer,
			codes: []runtime.Code{runtime.CodeSelfApprovalDenied}, reasons: []string{""}},
		{name: "four-eyes before an admin-only write", tool: "issue_refund", four: true, starter: reviewer, decider: reviewer,
			codes:   []runtime.Code{runtime.CodeSelfApprovalDenied, runtime.CodeApproverNotPermitted},
			reasons: []string{"", runtime.ReasonToolAdminOnly}},
		{name: "four-eyes initiator admin", tool: "send_mail", four: true, starter: admin, decider: admin,
			codes: []runtime.Code{runtime.CodeSelfApprovalDenied}, reasons: []string{""}},
		{name: "admin-only write", tool: "issue_refund", starter: admin, decider: reviewer,
			codes: []runtime.Code{runtime.CodeApproverNotPermitted}, reasons: []string{runtime.ReasonToolAdminOnly}},
		{name: "a service account and a write", tool: "tag_order", starter: admin, decider: service,
			codes: []runtime.Code{runtime.CodeApproverNotPermitted}, reasons: []string{runtime.ReasonServiceAccountWrite}},
		{name: "a tool no longer offered", tool: "tag_order", starter: admin, decider: admin,
			after: func(e *env, _ *world) {
				e.cfg.Tools = slices.DeleteFunc(slices.Clone(e.cfg.Tools), func(n string) bool { return n == "tag_order" })
				e.saveConfig()
				e.clock.Advance(3 * time.Second)
			},
			codes: []runtime.Code{runtime.CodeApproverNotPermitted}, reasons: []string{runtime.ReasonToolNoLongerPermitted}},
		{name: "a tool no longer registered", tool: "tag_order", starter: admin, decider: admin,
			after: func(e *env, w *world) {
				tools := slices.DeleteFunc(slices.Clone(e.tools), func(t tool.Tool) bool { return t.Name() == "tag_order" })
				w.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: tools, Now: e.clock.Now, Lease: time.Minute, Workers: 1})
				e.t.Cleanup(w.rt.Close)
			},
			codes: []runtime.Code{runtime.CodeApproverNotPermitted}, reasons: []string{runtime.ReasonToolNotRegistered}},
		{name: "support may not decide", tool: "send_mail", starter: admin, decider: support,
			codes: []runtime.Code{runtime.CodeRunAccessDenied}, reasons: []string{""}},
		{name: "an input the viewer may submit", tool: "ask_city", starter: admin, decider: reviewer},
		{name: "an admin-only input tool", tool: "ask_amount", starter: admin, decider: reviewer,
			codes: []runtime.Code{runtime.CodeSubmitterNotPermitted}, reasons: []string{runtime.ReasonToolAdminOnly}},
		{name: "a service account submits input", tool: "ask_city", starter: admin, decider: service,
			codes: []runtime.Code{runtime.CodeRunAccessDenied}, reasons: []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call(c.tool, `{"amount":5}`)), {Content: "done"}})
			e.cfg.RequireSecondApprover = c.four
			e.saveConfig()
			run := e.startAndRun(c.starter)
			w := &world{rt: e.rt, actor: c.decider, uuid: run.UUID}
			if c.after != nil {
				c.after(e, w)
			}
			view, err := w.rt.Get(e.ctx, w.actor, w.uuid)
			if err != nil {
				t.Fatal(err)
			}
			g := view.Pause.Gate
			var codes []runtime.Code
			var reasons []string
			for _, r := range append(nonNil(g.Access), g.Refusals...) {
				codes = append(codes, r.Code)
				reason := ""
				if r.GateDenial != nil {
					reason = r.GateDenial.Reason
				}
				reasons = append(reasons, reason)
			}
			if !slices.Equal(codes, c.codes) || !slices.Equal(reasons, c.reasons) {
				t.Fatalf("the page's gate shows %v %q, want %v %q", codes, reasons, c.codes, c.reasons)
			}
			if g.Access != nil && len(g.Refusals) > 0 {
				t.Fatalf("a gate refusing access lists refusals too: %+v", g)
			}
			if view.Run.Status == runtime.StatusWaitingInput {
				_, err = w.rt.SubmitInput(e.ctx, w.actor, w.uuid, runtime.InputSubmission{
					Data: map[string]any{"city": "Berlin", "amount": 5}, TurnDigest: view.Pause.Digest, PinDigest: view.Pause.PinDigest})
			} else {
				_, err = w.rt.Approve(e.ctx, w.actor, w.uuid, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest, PinDigest: view.Pause.PinDigest})
			}
			first := g.Refusal()
			if first == nil {
				if err != nil {
					t.Fatalf("the page offers the decision, the engine refused it: %v", err)
				}
				w.rt.Wait()
				return
			}
			var re *runtime.Error
			if !errors.As(err, &re) || re.Code != first.Code || re.Message != first.Message || (first.GateDenial == nil) != (re.GateDenial == nil) ||
				first.GateDenial != nil && re.GateDenial.Reason != first.GateDenial.Reason {
				t.Fatalf("the decision got %v, the page showed %v", err, first)
			}
			if r := e.run(w.uuid); !r.Status.Waiting() {
				t.Fatalf("a refused decision moved the run to %s", r.Status)
			}
		})
	}
}

func nonNil(e *runtime.Error) []*runtime.Error {
	if e == nil {
		return nil
	}
	return []*runtime.Error{e}
}

// TestPageGateEditableIsTheEditCheck: the calls the run page offers to edit (Pause.Gate.Editable)
// are exactly those EditCall lets the same viewer edit: an editable tool, admin-only ones for
// an admin only, never a tool that is not editable.
func TestPageGateEditableIsTheEditCheck(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("refund_edit", `{"order_id":"A1","amount":100}`),
		call("refund_admin", `{"order_id":"A1","amount":100}`), call("tag_order", `{}`))}, withEditable())
	run := e.startAndRun(admin)
	for _, c := range []struct {
		actor runtime.Actor
		tools []string
	}{{reviewer, []string{"refund_edit"}}, {admin, []string{"refund_edit", "refund_admin"}}} {
		view, err := e.rt.Get(e.ctx, c.actor, run.UUID)
		if err != nil {
			t.Fatal(err)
		}
		var offered, allowed []string
		for _, pc := range view.Pause.PendingCalls {
			if slices.Contains(view.Pause.Gate.Editable, pc.ID) {
				offered = append(offered, pc.Function.Name)
			}
			if _, err := e.rt.EditCall(e.ctx, c.actor, run.UUID, pc.ID, "", nil); err == nil {
				allowed = append(allowed, pc.Function.Name)
			}
		}
		if !slices.Equal(offered, c.tools) || !slices.Equal(allowed, offered) {
			t.Errorf("%s: the page offers to edit %q, EditCall allows %q, want %q", c.actor.Role, offered, allowed, c.tools)
		}
	}
}
