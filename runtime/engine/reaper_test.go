package engine_test

import (
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestWorkerKilledMidContinuation: the continuation dies (fault hook + lease expiry) mid-tool
// or before settling. A read-only or idempotent tool is recovered from stored state: the
// reaper requeues and a worker resumes with the person's decision, and no call that finished
// before the crash runs again (checkpoints). A non-idempotent write in flight is dead-lettered
// not_retryable.
func TestWorkerKilledMidContinuation(t *testing.T) {
	cases := []struct {
		name       string
		script     []model.Turn
		input      bool
		point      string
		hit        int
		wantStatus runtime.Status
		wantReason string
		wantCalls  map[string]int
	}{
		{name: "input, read-only", script: []model.Turn{turn(call("ask_city", `{"note":"n"}`))}, input: true,
			wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted, wantCalls: map[string]int{"ask_city": 1}},
		{name: "approval, idempotent write", script: []model.Turn{turn(call("tag_order", `{}`))},
			wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted, wantCalls: map[string]int{"tag_order": 1}},
		{name: "approval, non-idempotent write", script: []model.Turn{turn(call("issue_refund", `{}`))},
			wantStatus: runtime.StatusFailed, wantReason: runtime.ReasonNotRetryable, wantCalls: map[string]int{"issue_refund": 0}},
		{name: "input, killed before settle", script: []model.Turn{turn(call("ask_city", `{"note":"n"}`))}, input: true,
			point: runtime.HookBeforeSettle, wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted,
			wantCalls: map[string]int{"ask_city": 1}},
		{name: "input, killed at the second call", script: []model.Turn{turn(call("ask_city", `{"note":"n"}`), call("lookup", `{}`))}, input: true,
			point: runtime.HookMidTool, hit: 2, wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted,
			wantCalls: map[string]int{"ask_city": 1, "lookup": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.script)
			run := e.startAndRun(admin)
			point, hit := c.point, c.hit
			if point == "" {
				point = runtime.HookMidTool
			}
			e.hooks.armAt(point, max(hit, 1))
			if c.input {
				submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
				e.rt.Wait()
			} else {
				approve(t, e, admin2, run.UUID, true)
			}
			r := e.wantStatus(run.UUID, runtime.StatusRunning)
			if r.ClaimedBy == "" || r.QueuedRequest == "" {
				t.Fatalf("claimed continuation not stored: %+v", r)
			}
			rep, err := e.rt.Reap(e.ctx, 50)
			if err != nil || rep.Requeued+rep.DeadLettered != 0 {
				t.Fatalf("reap before expiry = %+v, %v; want nothing", rep, err)
			}
			e.clock.Advance(2 * time.Minute)
			if rep, err = e.rt.Reap(e.ctx, 50); err != nil {
				t.Fatal(err)
			}
			if c.wantStatus == runtime.StatusFailed {
				if rep.DeadLettered != 1 {
					t.Fatalf("reap = %+v, want 1 dead-lettered", rep)
				}
			} else {
				if rep.Requeued != 1 {
					t.Fatalf("reap = %+v, want 1 requeued", rep)
				}
				if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
					t.Fatalf("worker did not pick the requeued run: %v %v", ok, err)
				}
			}
			r = e.wantStatus(run.UUID, c.wantStatus)
			if r.TerminationReason != c.wantReason {
				t.Fatalf("reason = %q, want %q", r.TerminationReason, c.wantReason)
			}
			for name, n := range c.wantCalls {
				if got := len(e.rec.get(name)); got != n {
					t.Fatalf("%s executed %d times, want %d", name, got, n)
				}
			}
			if c.input {
				jsonEqual(t, e.rec.get("ask_city")[0], `{"note":"n","city":"Berlin"}`)
			}
		})
	}
}

// TestReaperRules: the requeue budget, a run with no stored request, and a waiting run that is
// never touched.
func TestReaperRules(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	waiting := e.startAndRun(admin)
	e.wantStatus(waiting.UUID, runtime.StatusWaitingApproval)

	exhausted, err := e.rt.Start(e.ctx, admin, "test", "x")
	if err != nil {
		t.Fatal(err)
	}
	noRequest, err := e.rt.Start(e.ctx, admin, "test", "y")
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now().Unix()
	for _, uuid := range []string{exhausted.UUID, noRequest.UUID} {
		if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET status='running', claimed_by='worker:dead', lease_expires=? WHERE uuid=?", now-1, uuid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET requeue_count=3 WHERE uuid=?", exhausted.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET queued_request='' WHERE uuid=?", noRequest.UUID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	rep, err := e.rt.Reap(e.ctx, 50)
	if err != nil || rep.DeadLettered != 2 || rep.Requeued != 0 {
		t.Fatalf("reap = %+v, %v", rep, err)
	}
	if r := e.wantStatus(exhausted.UUID, runtime.StatusFailed); r.TerminationReason != runtime.ReasonRetriesExhausted {
		t.Fatalf("exhausted reason %q", r.TerminationReason)
	}
	if r := e.wantStatus(noRequest.UUID, runtime.StatusFailed); r.TerminationReason != runtime.ReasonNotRetryable {
		t.Fatalf("no-request reason %q", r.TerminationReason)
	}
	e.wantStatus(waiting.UUID, runtime.StatusWaitingApproval)
	if _, err := e.rt.Reap(e.ctx, 0); err == nil {
		t.Fatalf("reap limit 0 accepted")
	}
}
