package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/tool/mcptest"
)

// holdOptions make the hold pool look at its runs often, so a test sees answers picked up.
func holdOptions(holds int) envOption {
	return func(_ *env, c *engine.Config) {
		c.ElicitationHolds = holds
		c.HoldPoll = 20 * time.Millisecond
		c.HoldHeartbeat = 2 * time.Second
	}
}

// inSessionEnv is a run whose remote tool crm_refund is served by a real go-sdk server on
// the last protocol before the multi-round-trip form: its call asks for an amount by sending
// elicitation/create during the call. readOnly chooses the tool's effect (false: a
// non-idempotent write).
func inSessionEnv(t *testing.T, log *answerLog, readOnly bool, holds int) *env {
	t.Helper()
	return inSessionScript(t, log, readOnly, holds, model.Turn{Content: "done"})
}

// inSessionScript is inSessionEnv with the model's turn after the call.
func inSessionScript(t *testing.T, log *answerLog, readOnly bool, holds int, next model.Turn) *env {
	t.Helper()
	srv := mcptest.NewInSession(t, mcptest.Tool{
		Tool: mcp.Tool{Name: "confirm_refund", Description: "Refund after the operator confirms.",
			InputSchema: mcptest.ObjectSchema(map[string]any{"order": map[string]any{"type": "string"}}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly}},
		Handler: mcptest.AskingInSession(t, "How much should be refunded?", amountSchema, func(a mcptest.Answer) { log.add(a.String()) }),
	})
	return heldEnv(t, srv.Definition(t, "crm_refund", "confirm_refund", false), holds, next)
}

// heldEnv is a run whose model calls def (as crm_refund) and then takes the turn next.
func heldEnv(t *testing.T, def tool.Definition, holds int, next model.Turn) *env {
	t.Helper()
	def.Name = "crm_refund"
	def.MCP.ElicitationTimeout = 2 * time.Minute
	return remoteEnvWith(t, []model.Turn{turn(call("crm_refund", `{"order":"A1"}`)), next}, []envOption{holdOptions(holds)}, def)
}

// eventually waits (real time) until the run has status want.
func (e *env) eventually(uuid string, want runtime.Status) runtime.Run {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		run := e.run(uuid)
		if run.Status == want {
			return run
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s is %s (%s %s), want %s", uuid, run.Status, run.TerminationReason, run.ErrorClass, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// toldModel fails unless the transcript of the run, waiting again after the call, holds want.
func toldModel(t *testing.T, e *env, uuid, want string) {
	t.Helper()
	run := e.wantStatus(uuid, runtime.StatusWaitingInput)
	if !strings.Contains(run.SuspendedState, want) {
		t.Fatalf("the model was not told %q; transcript %s", want, run.SuspendedState)
	}
}

// TestInSessionElicitationIsHeld: a server that asks during the call (elicitation/create)
// gets a person's answer: the run waits for input with the server's message and schema, its
// lease cleared and its hold heartbeat set; an invalid submission never reaches the server; a
// valid one is sent on the held session as accept and the call's result continues the run.
func TestInSessionElicitationIsHeld(t *testing.T) {
	log := &answerLog{}
	e := inSessionEnv(t, log, true, 0)
	run := e.startAndRun(admin)
	run = e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	if run.ClaimedBy != "" || run.LeaseExpires != 0 || run.HoldHeartbeat == 0 {
		t.Fatalf("waiting run: claimed_by %q, lease %d, hold heartbeat %d", run.ClaimedBy, run.LeaseExpires, run.HoldHeartbeat)
	}
	v := e.view(run.UUID)
	if v.Pause == nil || v.Pause.Elicitation == nil || v.Pause.Elicitation.Message != "How much should be refunded?" ||
		!contains(string(v.Pause.InputSchema), `"minimum":0`) {
		t.Fatalf("pause = %+v", v.Pause)
	}
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"amount": -1}, TurnDigest: v.Pause.Digest})
	if !errors.Is(err, runtime.ErrInvalidInputSubmission) || len(log.all()) != 0 {
		t.Fatalf("invalid submission: err %v, server answers %v", err, log.all())
	}
	submit(t, e, admin, run.UUID, map[string]any{"amount": 12.5}, "")
	e.eventually(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "accept 12.5 state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}
	if errs := e.toolErrors(run.UUID); len(errs) != 1 || errs[0] {
		t.Fatalf("tool events = %v", errs)
	}
}

// TestInSessionDecline: Decline reaches the server on the held session as decline.
func TestInSessionDecline(t *testing.T) {
	log := &answerLog{}
	e := inSessionEnv(t, log, true, 0)
	run := e.startAndRun(admin)
	v := e.view(run.UUID)
	if _, err := e.rt.AnswerElicitation(e.ctx, reviewer, run.UUID, runtime.ElicitationDecision{Action: "decline", TurnDigest: v.Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	e.eventually(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "decline <nil> state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}
}

// TestInSessionHoldLapses: when the holder is gone (its runtime closed, its heartbeat no
// longer renewed), a late submission is refused with elicitation_expired, and another
// process ends the request: the run continues with the honest tool error for a read-only
// tool, and is dead-lettered (not_retryable, WriteOutcomeUnknown) for a write.
func TestInSessionHoldLapses(t *testing.T) {
	for _, readOnly := range []bool{true, false} {
		name := map[bool]string{true: "read-only", false: "write"}[readOnly]
		t.Run(name, func(t *testing.T) {
			log := &answerLog{}
			e := inSessionScript(t, log, readOnly, 0, turn(call("ask_city", `{}`)))
			run := e.startAndRun(admin)
			e.wantStatus(run.UUID, runtime.StatusWaitingInput)
			digest := e.view(run.UUID).Pause.Digest
			e.rt.Close()
			other := engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: e.tools, Now: e.clock.Now, Lease: time.Minute,
				HoldHeartbeat: 2 * time.Second})
			t.Cleanup(other.Close)
			if n, err := other.EndLapsedHolds(e.ctx); err != nil || n != 0 {
				t.Fatalf("before the lapse: %d, %v", n, err)
			}
			e.clock.Advance(7 * time.Second)
			_, err := other.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"amount": 3}, TurnDigest: digest})
			if !errors.Is(err, runtime.ErrElicitationExpired) {
				t.Fatalf("late submission: %v, want ElicitationExpired", err)
			}
			if _, err := other.EndLapsedHolds(e.ctx); err != nil {
				t.Fatal(err)
			}
			other.Wait()
			if len(log.all()) != 0 {
				t.Fatalf("the server heard %v", log.all())
			}
			if readOnly {
				toldModel(t, e, run.UUID, "tool crm_refund: the server's request for input ended before an answer")
				if errs := e.toolErrors(run.UUID); len(errs) != 1 || !errs[0] {
					t.Fatalf("tool events = %v, want one tool error", errs)
				}
				return
			}
			got := e.wantStatus(run.UUID, runtime.StatusFailed)
			if got.TerminationReason != runtime.ReasonNotRetryable || got.ErrorClass != "WriteOutcomeUnknown" || got.PendingEffect != string(tool.EffectNonIdempotentWrite) {
				t.Fatalf("dead-letter: reason %q, class %q, effect %q", got.TerminationReason, got.ErrorClass, got.PendingEffect)
			}
		})
	}
}

// TestInSessionHoldsAreBounded: with no hold of the process free, a request for input
// during a call is declined at once and the model told why.
func TestInSessionHoldsAreBounded(t *testing.T) {
	log := &answerLog{}
	e := inSessionScript(t, log, true, -1, turn(call("ask_city", `{}`)))
	run := e.startAndRun(admin)
	if got := log.all(); len(got) != 1 || got[0] != "decline <nil> state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}
	toldModel(t, e, run.UUID, "all 0 elicitation holds of this process are in use (--elicitation-holds); the desk declined")
}

// TestInSessionTypeScriptServer: a real server built with the TypeScript SDK
// (tools/mcp-ts, @modelcontextprotocol/sdk 1.32), which asks with elicitInput during the call,
// gets the person's answer on the held session, and the run continues with its result; a
// call of its write tool whose holder is gone is dead-lettered.
func TestInSessionTypeScriptServer(t *testing.T) {
	ts := mcptest.StartTypeScript(t)
	t.Run("accept", func(t *testing.T) {
		e := heldEnv(t, mcptest.Definition(t, ts.URL, "crm_refund", "confirm_refund", false), 0, model.Turn{Content: "done"})
		run := e.startAndRun(admin)
		e.wantStatus(run.UUID, runtime.StatusWaitingInput)
		if v := e.view(run.UUID); v.Pause.Elicitation == nil || v.Pause.Elicitation.Message != "How much should be refunded?" {
			t.Fatalf("pause = %+v", v.Pause)
		}
		submit(t, e, admin, run.UUID, map[string]any{"amount": 12.5}, "")
		e.eventually(run.UUID, runtime.StatusCompleted)
		if got := ts.Answers(); len(got) != 1 || got[0] != `{"action":"accept","content":{"amount":12.5}}` {
			t.Fatalf("server answers = %q", got)
		}
		if errs := e.toolErrors(run.UUID); len(errs) != 1 || errs[0] {
			t.Fatalf("tool events = %v", errs)
		}
	})
	t.Run("write whose holder is gone", func(t *testing.T) {
		e := heldEnv(t, mcptest.Definition(t, ts.URL, "crm_refund", "issue_refund", false), 0, model.Turn{Content: "done"})
		run := e.startAndRun(admin)
		e.wantStatus(run.UUID, runtime.StatusWaitingInput)
		e.rt.Close()
		other := engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: e.tools, Now: e.clock.Now, Lease: time.Minute,
			HoldHeartbeat: 2 * time.Second})
		t.Cleanup(other.Close)
		e.clock.Advance(7 * time.Second)
		if n, err := other.EndLapsedHolds(e.ctx); err != nil || n != 1 {
			t.Fatalf("EndLapsedHolds: %d, %v", n, err)
		}
		other.Wait()
		got := e.wantStatus(run.UUID, runtime.StatusFailed)
		if got.TerminationReason != runtime.ReasonNotRetryable || got.ErrorClass != "WriteOutcomeUnknown" {
			t.Fatalf("dead-letter: reason %q, class %q", got.TerminationReason, got.ErrorClass)
		}
	})
}

// TestConcurrentHeldAnswers: submissions, Declines and Cancels race on one held pause;
// exactly one is accepted and the server hears exactly one answer on the held session.
func TestConcurrentHeldAnswers(t *testing.T) {
	log := &answerLog{}
	e := inSessionEnv(t, log, true, 0)
	run := e.startAndRun(admin)
	won := raceElicitationAnswers(t, e, run.UUID)
	e.eventually(run.UUID, runtime.StatusCompleted)
	if got := log.all(); won != 1 || len(got) != 1 {
		t.Fatalf("%d answers won, server heard %q; want exactly one", won, got)
	}
}

// TestHeldRequestExpires: past elicitation_timeout the holder itself ends the request: the
// run continues with the honest tool error and the server hears no answer.
func TestHeldRequestExpires(t *testing.T) {
	log := &answerLog{}
	e := inSessionScript(t, log, true, 0, turn(call("ask_city", `{}`)))
	run := e.startAndRun(admin)
	e.clock.Advance(2*time.Minute + time.Second)
	deadline := time.Now().Add(15 * time.Second)
	for again := e.run(run.UUID); (again.Status != runtime.StatusWaitingInput || !strings.Contains(again.SuspendedState, "ended before an answer")) && time.Now().Before(deadline); again = e.run(run.UUID) {
		time.Sleep(20 * time.Millisecond)
	}
	toldModel(t, e, run.UUID, "tool crm_refund: the server's request for input ended before an answer")
	if len(log.all()) != 0 {
		t.Fatalf("the server heard %v", log.all())
	}
}
