package engine_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// smallTags is a standing approval of tag_order (an idempotent write) for amounts up to 50.
func smallTags() runtime.StandingApproval {
	return runtime.StandingApproval{Name: "small-tags", Tool: "tag_order",
		When: json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"number","maximum":50}}}`)}
}

func (e *env) writeRules(author int64, rules ...runtime.StandingApproval) {
	e.t.Helper()
	if err := e.store.WriteStandingApprovals(e.ctx, rules, nil, author); err != nil {
		e.t.Fatalf("write standing approvals: %v", err)
	}
}

func (e *env) ruleUses(name string) int64 {
	e.t.Helper()
	uses, err := e.store.StandingApprovalUses(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return uses[name]
}

// startRuled starts a run as actor, executes its first segment and waits for what an
// automatic approval dispatched.
func (e *env) startRuled(actor runtime.Actor) runtime.Run {
	e.t.Helper()
	run := e.startAndRun(actor)
	e.rt.Wait()
	return e.run(run.UUID)
}

// TestRuleApprovesMatchingTurn: a turn whose every call matches a rule in force is approved
// at suspend by rule:<name>, recorded as its event, decision and audit row, and counted once.
func TestRuleApprovesMatchingTurn(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{"amount":5}`), call("tag_order", `{"amount":7}`))})
	e.writeRules(1, smallTags())
	run := e.startRuled(reviewer)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := len(e.rec.get("tag_order")); n != 2 {
		t.Fatalf("tag_order ran %d times, want 2", n)
	}
	var approved bool
	for _, ev := range e.events(run.UUID) {
		if ev.Kind == runtime.EventApproval {
			approved = true
			jsonEqual(t, ev.Payload, `{"approved":true,"decidedBy":0,"decidedByRule":"small-tags"}`)
		}
	}
	if !approved {
		t.Fatalf("no approval event: %v", e.kinds(run.UUID))
	}
	dec, err := e.store.LatestDecision(e.ctx, run.UID)
	if err != nil || dec.DecidedByService != "rule:small-tags" || !dec.Approved {
		t.Fatalf("decision = %+v, %v", dec, err)
	}
	var actorName, reason string
	if err := e.sql.QueryRowContext(e.ctx, `SELECT actor_name, reason FROM tx_runsdesk_audit WHERE run_uuid = ? AND action = 'approval'`, run.UUID).Scan(&actorName, &reason); err != nil {
		t.Fatalf("audit row: %v", err)
	}
	if actorName != "rule:small-tags" || !strings.Contains(reason, "small-tags") {
		t.Fatalf("audit row: actor %q reason %q", actorName, reason)
	}
	if n := e.ruleUses("small-tags"); n != 1 {
		t.Fatalf("uses = %d, want 1", n)
	}
}

// TestRuleLimits: each refusal of a rule leaves the turn waiting for a person, uncounted.
func TestRuleLimits(t *testing.T) {
	one := int64(1)
	cases := []struct {
		name   string
		script []model.Turn
		rule   func(e *env) runtime.StandingApproval
		author int64
		four   bool
		starts runtime.Actor
		want   runtime.Status
	}{
		{name: "arguments outside when", script: []model.Turn{turn(call("tag_order", `{"amount":500}`))},
			rule: func(*env) runtime.StandingApproval { return smallTags() }, author: 1, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "one call without a rule", script: []model.Turn{turn(call("tag_order", `{"amount":5}`), call("send_mail", `{}`))},
			rule: func(*env) runtime.StandingApproval { return smallTags() }, author: 1, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "until passed", script: []model.Turn{turn(call("tag_order", `{"amount":5}`))},
			rule: func(e *env) runtime.StandingApproval {
				r := smallTags()
				r.Until = e.clock.Now().Unix()
				return r
			}, author: 1, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "other configuration", script: []model.Turn{turn(call("tag_order", `{"amount":5}`))},
			rule: func(*env) runtime.StandingApproval {
				r := smallTags()
				r.Configuration = "refunds"
				return r
			}, author: 1, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "input pause never answered", script: []model.Turn{turn(call("ask_city", `{}`))},
			rule: func(*env) runtime.StandingApproval {
				return runtime.StandingApproval{Name: "cities", Tool: "ask_city", When: json.RawMessage(`{}`)}
			}, author: 1, starts: reviewer, want: runtime.StatusWaitingInput},
		{name: "four-eyes turn the author started", script: []model.Turn{turn(call("tag_order", `{"amount":5}`))},
			rule: func(*env) runtime.StandingApproval { return smallTags() }, author: reviewer.UserUID, four: true, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "four-eyes turn, author unknown", script: []model.Turn{turn(call("tag_order", `{"amount":5}`))},
			rule: func(*env) runtime.StandingApproval { return smallTags() }, author: 0, four: true, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "four-eyes turn someone else started", script: []model.Turn{turn(call("tag_order", `{"amount":5}`))},
			rule: func(*env) runtime.StandingApproval { return smallTags() }, author: admin.UserUID, four: true, starts: reviewer, want: runtime.StatusCompleted},
		{name: "non-idempotent write without allow_writes", script: []model.Turn{turn(call("issue_refund", `{"amount":5}`))},
			rule: func(*env) runtime.StandingApproval {
				r := smallTags()
				r.Name, r.Tool = "refunds", "issue_refund"
				return r
			}, author: 1, starts: reviewer, want: runtime.StatusWaitingApproval},
		{name: "non-idempotent write with allow_writes", script: []model.Turn{turn(call("issue_refund", `{"amount":5}`))},
			rule: func(*env) runtime.StandingApproval {
				r := smallTags()
				r.Name, r.Tool, r.AllowWrites, r.MaxUses = "refunds", "issue_refund", true, one
				return r
			}, author: 1, starts: reviewer, want: runtime.StatusCompleted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.script)
			e.cfg.RequireSecondApprover = c.four
			e.saveConfig()
			rule := c.rule(e)
			e.writeRules(c.author, rule)
			run := e.startRuled(c.starts)
			e.wantStatus(run.UUID, c.want)
			wantUses := int64(0)
			if c.want == runtime.StatusCompleted {
				wantUses = 1
			}
			if n := e.ruleUses(rule.Name); n != wantUses {
				t.Fatalf("uses = %d, want %d", n, wantUses)
			}
		})
	}
}

// TestRuleStopsAtMaxUsesAndRevocation: a rule used up, or revoked by an apply without it,
// approves nothing more.
func TestRuleStopsAtMaxUsesAndRevocation(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{"amount":5}`))})
	rule := smallTags()
	rule.MaxUses = 1
	e.writeRules(1, rule)
	e.wantStatus(e.startRuled(reviewer).UUID, runtime.StatusCompleted)
	e.wantStatus(e.startRuled(reviewer).UUID, runtime.StatusWaitingApproval)

	rule.MaxUses = 0
	e.writeRules(1, rule)
	e.wantStatus(e.startRuled(reviewer).UUID, runtime.StatusCompleted)
	if err := e.store.WriteStandingApprovals(e.ctx, nil, []string{rule.Name}, 1); err != nil {
		t.Fatal(err)
	}
	e.wantStatus(e.startRuled(reviewer).UUID, runtime.StatusWaitingApproval)
	if n := e.ruleUses(rule.Name); n != 2 {
		t.Fatalf("uses = %d, want 2", n)
	}
}

// TestRuleMaxUsesUnderConcurrentSuspends: many runs pausing at once under a rule with
// max_uses 3 give exactly 3 automatic approvals; the others wait for a person.
func TestRuleMaxUsesUnderConcurrentSuspends(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{"amount":5}`))})
	rule := smallTags()
	rule.MaxUses = 3
	e.writeRules(1, rule)
	const n = 16
	uuids := make([]string, n)
	for i := range n {
		run, err := e.rt.Start(e.ctx, reviewer, e.cfg.Identifier, "help me")
		if err != nil {
			t.Fatal(err)
		}
		uuids[i] = run.UUID
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				ok, err := e.rt.RunOnce(e.ctx)
				if err != nil {
					t.Errorf("run once: %v", err)
				}
				if !ok || err != nil {
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	e.rt.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		completed, waiting := 0, 0
		for _, u := range uuids {
			switch e.run(u).Status {
			case runtime.StatusCompleted:
				completed++
			case runtime.StatusWaitingApproval:
				waiting++
			}
		}
		if completed+waiting == n {
			if completed != 3 || waiting != n-3 {
				t.Fatalf("completed %d, waiting %d; want 3 and %d", completed, waiting, n-3)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs did not settle: completed %d, waiting %d of %d", completed, waiting, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if uses := e.ruleUses(rule.Name); uses != 3 {
		t.Fatalf("uses = %d, want 3", uses)
	}
	if got := len(e.rec.get("tag_order")); got != 3 {
		t.Fatalf("tag_order ran %d times, want 3", got)
	}
}

// TestRuleApprovedTurnNotifiesOnlyTheDecision: a turn a standing approval approves at once
// sends no `waiting` notification (nobody was asked) and its `decided` one as any decision's;
// a turn the rule matched but the pipeline refused (four-eyes, the author started it) waits
// for a person, who is told at once.
func TestRuleApprovedTurnNotifiesOnlyTheDecision(t *testing.T) {
	for _, c := range []struct {
		name   string
		author int64
		want   []runtime.NotifyEvent
		status runtime.Status
	}{
		{"approved by the rule", admin.UserUID, []runtime.NotifyEvent{runtime.NotifyDecided}, runtime.StatusCompleted},
		{"refused by four-eyes", reviewer.UserUID, []runtime.NotifyEvent{runtime.NotifyWaiting}, runtime.StatusWaitingApproval},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call("tag_order", `{"amount":5}`))})
			e.cfg.RequireSecondApprover = true
			e.cfg.Notify = []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyWaiting, runtime.NotifyDecided},
				Channel: runtime.ChannelWebhook, URL: "https://hooks.example/desk", SecretEnv: "HOOK_SECRET"}}
			e.saveConfig()
			e.writeRules(c.author, smallTags())
			run := e.startRuled(reviewer)
			e.wantStatus(run.UUID, c.status)
			ns, err := e.store.RunNotifications(e.ctx, run.UID, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []runtime.NotifyEvent
			for _, n := range ns {
				got = append(got, n.Event)
				if n.DueAt > e.clock.Now().Unix() {
					t.Errorf("%s notification due at %d, after now %d", n.Event, n.DueAt, e.clock.Now().Unix())
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("notifications %v, want %v", got, c.want)
			}
		})
	}
}
