package engine_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/wait"
)

// TestTimeToDecisionIsObserved: every decision records how long its pause waited, from the
// pause's start, with the pause's kind, its configuration and who decided: a person, a
// service account, a standing approval (at once) and the expiry (deny and cancel alike).
func TestTimeToDecisionIsObserved(t *testing.T) {
	observe := func(c *stepCounter) envOption { return func(_ *env, cfg *engine.Config) { cfg.Observer = c } }
	cases := []struct {
		name   string
		script []model.Turn
		policy *wait.Policy
		decide func(t *testing.T, e *env, run runtime.Run)
		want   string
		// count is what runsdesk_decisions_total counts (kind/outcome); an expiry that cancels
		// is no decision.
		count []string
	}{
		{name: "person approves", script: []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}},
			decide: func(t *testing.T, e *env, run runtime.Run) {
				e.clock.Advance(90 * time.Second)
				approve(t, e, admin, run.UUID, true)
			}, want: "approval test person 90", count: []string{"approval/approved"}},
		{name: "service account denies", script: []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}},
			decide: func(t *testing.T, e *env, run runtime.Run) {
				e.clock.Advance(5 * time.Second)
				approve(t, e, service, run.UUID, false)
			}, want: "approval test service 5", count: []string{"approval/denied"}},
		{name: "person answers input", script: []model.Turn{turn(call("ask_city", `{}`)), {Content: "done"}},
			decide: func(t *testing.T, e *env, run runtime.Run) {
				e.clock.Advance(time.Minute)
				if _, err := e.rt.SubmitInput(e.ctx, reviewer, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Oslo"},
					TurnDigest: e.view(run.UUID).Pause.Digest}); err != nil {
					t.Fatal(err)
				}
				e.rt.Wait()
			}, want: "input test person 60", count: []string{"input/submitted"}},
		{name: "expiry denies", script: []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}},
			policy: &wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny},
			decide: func(t *testing.T, e *env, run runtime.Run) {
				e.clock.Advance(time.Hour)
				e.expire()
			}, want: "approval test expiry 3600", count: []string{"expiry/deny"}},
		{name: "expiry cancels", script: []model.Turn{turn(call("ask_city", `{}`))},
			policy: &wait.Policy{ExpiresAfter: 2 * time.Hour, OnExpiry: wait.Cancel},
			decide: func(t *testing.T, e *env, run runtime.Run) {
				e.clock.Advance(2 * time.Hour)
				e.expire()
			}, want: "input test expiry 7200"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counted := &stepCounter{}
			e := newEnv(t, c.script, observe(counted))
			if c.policy != nil {
				withConfigWait(*c.policy)(e)
			}
			run := e.startAndRun(reviewer)
			c.decide(t, e, run)
			if got := counted.decisions(); !slices.Equal(got, []string{c.want}) {
				t.Fatalf("observed %q, want %q", got, c.want)
			}
			if got := counted.countedDecisions(); !slices.Equal(got, c.count) {
				t.Fatalf("counted %q, want %q", got, c.count)
			}
		})
	}
	t.Run("standing approval", func(t *testing.T) {
		counted := &stepCounter{}
		e := newEnv(t, []model.Turn{turn(call("tag_order", `{"amount":5}`))}, observe(counted))
		e.writeRules(1, smallTags())
		e.wantStatus(e.startRuled(reviewer).UUID, runtime.StatusCompleted)
		if got := counted.decisions(); !slices.Equal(got, []string{"approval test rule 0"}) {
			t.Fatalf("observed %q", got)
		}
		if got := counted.countedDecisions(); !slices.Equal(got, []string{"approval/approved"}) {
			t.Fatalf("counted %q", got)
		}
	})
}

// TestDecisionAttemptsAreCounted: a person's refused attempt is counted under its refusal's
// code and a repeated one as replayed; neither records a time to decision.
func TestDecisionAttemptsAreCounted(t *testing.T) {
	counted := &stepCounter{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}},
		func(_ *env, cfg *engine.Config) { cfg.Observer = counted })
	run := e.startAndRun(reviewer)
	digest := e.view(run.UUID).Pause.Digest
	if _, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: strings.Repeat("0", 64)}); err == nil {
		t.Fatal("a stale digest was accepted")
	}
	decision := runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: "k1"}
	for range 2 {
		if _, err := e.rt.Approve(e.ctx, admin, run.UUID, decision); err != nil {
			t.Fatal(err)
		}
		e.rt.Wait()
	}
	want := []string{"approval/" + string(runtime.CodeStaleApprovalTurn), "approval/approved", "approval/replayed"}
	if got := counted.countedDecisions(); !slices.Equal(got, want) {
		t.Fatalf("counted %q, want %q", got, want)
	}
	if got := counted.decisions(); len(got) != 1 {
		t.Fatalf("times to decision %q, want one", got)
	}
}
