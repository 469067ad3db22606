package engine_test

import (
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/tool/mcptest"
	"runsdesk/runtime/wait"
)

// oddState is a request state with bytes a careless echo would change.
const oddState = "st+/=\u00e9 \"q\"\\n\x01"

// answerLog records what a server's tool received when a call was retried with an answer.
type answerLog struct {
	mu      sync.Mutex
	answers []string
}

func (l *answerLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answers = append(l.answers, s)
}

func (l *answerLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.answers...)
}

// elicitingServer is a real MCP server whose confirm_refund asks for an amount (requested
// schema) on its first round and, retried, records the answer and whether the state was echoed.
func elicitingServer(t *testing.T, log *answerLog, requested map[string]any) *mcptest.Server {
	return mcptest.New(t, mcptest.Tool{
		Tool: mcp.Tool{Name: "confirm_refund", Description: "Refund after the operator confirms.",
			InputSchema: mcptest.ObjectSchema(map[string]any{"order": map[string]any{"type": "string"}}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		Handler: mcptest.Asking("How much should be refunded?", requested, oddState, func(a mcptest.Answer) { log.add(a.String()) }),
	})
}

var amountSchema = map[string]any{"type": "object", "required": []any{"amount"},
	"properties": map[string]any{"amount": map[string]any{"type": "number", "minimum": 0, "title": "Amount"}}}

func elicitEnv(t *testing.T, log *answerLog) *env {
	srv := elicitingServer(t, log, amountSchema)
	def := srv.Definition(t, "crm_refund", "confirm_refund", false)
	def.MCP.ElicitationTimeout = 2 * time.Minute
	return remoteEnv(t, []model.Turn{turn(call("crm_refund", `{"order":"A1"}`)), {Content: "done"}}, def)
}

// TestElicitationAcceptThroughInput: the server's request becomes WAITING_FOR_INPUT with its
// schema and message; an invalid submission never reaches the server; a valid one is sent as
// accept with the request state echoed byte for byte, and the run continues.
func TestElicitationAcceptThroughInput(t *testing.T) {
	log := &answerLog{}
	e := elicitEnv(t, log)
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	v := e.view(run.UUID)
	if v.Pause == nil || v.Pause.InputTool != "crm_refund" || v.Pause.Elicitation == nil ||
		v.Pause.Elicitation.Message != "How much should be refunded?" || !contains(string(v.Pause.InputSchema), `"minimum":0`) {
		t.Fatalf("pause = %+v", v.Pause)
	}
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"amount": -1}, TurnDigest: v.Pause.Digest})
	if !errors.Is(err, runtime.ErrInvalidInputSubmission) || len(log.all()) != 0 {
		t.Fatalf("invalid submission: err %v, server answers %v", err, log.all())
	}
	submit(t, e, admin, run.UUID, map[string]any{"amount": 12.5}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "accept 12.5 state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}
	if errs := e.toolErrors(run.UUID); len(errs) != 1 || errs[0] {
		t.Fatalf("tool events = %v", errs)
	}
	if kinds := e.kinds(run.UUID); !contains(fmt.Sprint(kinds), "input") {
		t.Fatalf("events %v lack the input decision", kinds)
	}
}

// TestElicitationDeclineAndCancel: Decline and Cancel go through the decision pipeline and
// reach the server as decline and cancel; the run continues.
func TestElicitationDeclineAndCancel(t *testing.T) {
	for _, action := range []string{"decline", "cancel"} {
		t.Run(action, func(t *testing.T) {
			log := &answerLog{}
			e := elicitEnv(t, log)
			run := e.startAndRun(admin)
			v := e.view(run.UUID)
			out, err := e.rt.AnswerElicitation(e.ctx, reviewer, run.UUID, runtime.ElicitationDecision{Action: action, TurnDigest: v.Pause.Digest})
			if err != nil || out.Decision.Kind != "elicitation" || out.Decision.DecidedBy != reviewer.UserUID {
				t.Fatalf("answer: %+v, %v", out, err)
			}
			e.rt.Wait()
			e.wantStatus(run.UUID, runtime.StatusCompleted)
			if got := log.all(); len(got) != 1 || got[0] != action+" <nil> state-ok=true" {
				t.Fatalf("server answers = %q", got)
			}
			if _, err := e.rt.AnswerElicitation(e.ctx, reviewer, run.UUID, runtime.ElicitationDecision{Action: action, TurnDigest: v.Pause.Digest}); !errors.Is(err, runtime.ErrRunAlreadyResuming) {
				t.Fatalf("second answer: %v", err)
			}
		})
	}
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	if _, err := e.rt.AnswerElicitation(e.ctx, admin, run.UUID, runtime.ElicitationDecision{Action: "decline", TurnDigest: e.view(run.UUID).Pause.Digest}); !errors.Is(err, runtime.ErrInvalidRequest) {
		t.Fatalf("declining a desk input pause: %v", err)
	}
	if _, err := e.rt.AnswerElicitation(e.ctx, admin, run.UUID, runtime.ElicitationDecision{Action: "accept"}); !errors.Is(err, runtime.ErrInvalidRequest) {
		t.Fatalf("action accept: %v", err)
	}
}

// TestElicitationTimeout: past elicitation_timeout a submission is refused clearly, the desk
// answers the server cancel and the run continues; a later submission is refused too.
func TestElicitationTimeout(t *testing.T) {
	log := &answerLog{}
	e := elicitEnv(t, log)
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	e.clock.Advance(2*time.Minute + time.Second)
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"amount": 3}, TurnDigest: digest})
	if !errors.Is(err, runtime.ErrElicitationExpired) {
		t.Fatalf("late submission: %v, want ElicitationExpired", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "cancel <nil> state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}
	if errs := e.toolErrors(run.UUID); len(errs) != 1 || !errs[0] {
		t.Fatalf("tool events after the expiry = %v, want one tool error", errs)
	}
	_, err = e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"amount": 3}, TurnDigest: digest})
	if !errors.Is(err, runtime.ErrRunAlreadyResuming) && !errors.Is(err, runtime.ErrRunNotAwaitingInput) {
		t.Fatalf("submission after the expiry was answered: %v", err)
	}
	var expired bool
	for _, ev := range e.events(run.UUID) {
		if ev.Kind == "elicitation" && contains(string(ev.Payload), `"expired":true`) && contains(string(ev.Payload), `"decidedBy":0`) {
			expired = true
		}
	}
	if !expired {
		t.Fatal("no elicitation event recording the desk's expiry")
	}
}

// TestExpirerAnswersAnExpiredElicitation: the expirer (Expire) answers an expired request
// cancel through the decision pipeline and the run continues, though 101 input pauses waited
// longer (they stay waiting); before the expiry nothing is due.
func TestExpirerAnswersAnExpiredElicitation(t *testing.T) {
	log := &answerLog{}
	e := elicitEnv(t, log)
	run := e.startAndRun(admin)
	for i := range 101 {
		if _, err := e.sql.ExecContext(e.ctx, `INSERT INTO tx_nrllm_agentrun (uuid, status, configuration_uid, configuration_identifier,
			be_user, suspended_state, queued_request, suspended_at, pending_tools, crdate, tstamp)
			SELECT UUID(), status, configuration_uid, configuration_identifier, be_user, JSON_REMOVE(suspended_state, '$.elicitation'),
			'', suspended_at - 1000 + ?, pending_tools, crdate, tstamp FROM tx_nrllm_agentrun WHERE uid = ?`, i, run.UID); err != nil {
			t.Fatal(err)
		}
	}
	if rep := e.expire(); rep != (engine.ExpireReport{}) {
		t.Fatalf("before the expiry: %+v", rep)
	}
	e.clock.Advance(2*time.Minute + time.Second)
	if rep := e.expire(); rep != (engine.ExpireReport{Elicitations: 1}) {
		t.Fatalf("after the expiry: %+v", rep)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "cancel <nil> state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}
	var waiting int
	if err := e.sql.QueryRowContext(e.ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status = 'waiting_for_input'`).Scan(&waiting); err != nil || waiting != 101 {
		t.Fatalf("input pauses still waiting: %d, %v; want 101", waiting, err)
	}
	if _, err := e.rt.ExpireElicitation(e.ctx, run.UUID); !errors.Is(err, runtime.ErrRunAlreadyResuming) && !errors.Is(err, runtime.ErrRunNotAwaitingInput) {
		t.Fatalf("second expiry: %v", err)
	}
}

// TestElicitationExpiryAfterAReminder: on a pause with a wait policy of its own, the reminder
// leaves the request's expiry due next, the expirer answers it then, and the pause's own
// expiry never comes; a request whose pause expired first is decided by that expiry instead.
func TestElicitationExpiryAfterAReminder(t *testing.T) {
	log := &answerLog{}
	e := elicitEnv(t, log)
	withConfigWait(wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny, RemindAfter: time.Minute})(e)
	run := e.startAndRun(admin)
	e.clock.Advance(time.Minute)
	if rep := e.expire(); rep != (engine.ExpireReport{Reminded: 1}) {
		t.Fatalf("at the reminder: %+v", rep)
	}
	e.clock.Advance(time.Minute + time.Second)
	if rep := e.expire(); rep != (engine.ExpireReport{Elicitations: 1}) {
		t.Fatalf("at the request's expiry: %+v", rep)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "cancel <nil> state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}

	late := elicitEnv(t, &answerLog{})
	withConfigWait(wait.Policy{ExpiresAfter: time.Minute, OnExpiry: wait.Deny})(late)
	run = late.startAndRun(admin)
	late.clock.Advance(3 * time.Minute)
	if rep := late.expire(); rep != (engine.ExpireReport{Expired: 1}) {
		t.Fatalf("past both expiries: %+v", rep)
	}
	late.wantStatus(run.UUID, runtime.StatusCompleted)
}

// TestElicitationConfirmation: a request without fields is a confirmation (the view says so,
// with no form); a form posted to it, which carries no values, is sent as accept and the run
// continues.
func TestElicitationConfirmation(t *testing.T) {
	log := &answerLog{}
	srv := elicitingServer(t, log, map[string]any{"type": "object", "properties": map[string]any{}})
	e := remoteEnv(t, []model.Turn{turn(call("crm_refund", `{"order":"A1"}`)), {Content: "done"}}, srv.Definition(t, "crm_refund", "confirm_refund", false))
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	v := e.view(run.UUID)
	if v.Pause.Form != nil || v.Pause.Elicitation == nil || !v.Pause.Elicitation.Confirmation {
		t.Fatalf("pause = %+v, elicitation %+v", v.Pause, v.Pause.Elicitation)
	}
	form := url.Values{"turn_digest": {v.Pause.Digest}}
	if _, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Form: form, TurnDigest: v.Pause.Digest}); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); len(got) != 1 || got[0] != "accept <nil> state-ok=true" {
		t.Fatalf("server answers = %q", got)
	}

}

// TestConcurrentElicitationAnswers: submissions, Declines, Cancels and the desk's expiry race
// on one elicitation pause; exactly one wins and the server hears exactly one answer.
func TestConcurrentElicitationAnswers(t *testing.T) {
	log := &answerLog{}
	e := elicitEnv(t, log)
	run := e.startAndRun(admin)
	won := raceElicitationAnswers(t, e, run.UUID)
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); won != 1 || len(got) != 1 {
		t.Fatalf("%d answers won, server heard %q; want exactly one", won, got)
	}
}

// raceElicitationAnswers sends submissions, Declines and Cancels at once to the elicitation
// pause run uuid waits on and returns how many were accepted; every other must be refused as
// already handled or no longer waiting.
func raceElicitationAnswers(t *testing.T, e *env, uuid string) int {
	t.Helper()
	digest := e.view(uuid).Pause.Digest
	const n = 24
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			key := fmt.Sprintf("k%d", i)
			switch i % 3 {
			case 0:
				_, errs[i] = e.rt.SubmitInput(e.ctx, admin, uuid, runtime.InputSubmission{Data: map[string]any{"amount": i}, TurnDigest: digest, IdempotencyKey: key})
			case 1:
				_, errs[i] = e.rt.AnswerElicitation(e.ctx, reviewer, uuid, runtime.ElicitationDecision{Action: "decline", TurnDigest: digest, IdempotencyKey: key})
			default:
				_, errs[i] = e.rt.AnswerElicitation(e.ctx, admin2, uuid, runtime.ElicitationDecision{Action: "cancel", TurnDigest: digest, IdempotencyKey: key})
			}
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, runtime.ErrRunAlreadyResuming), errors.Is(err, runtime.ErrRunNotAwaitingInput):
		default:
			t.Fatalf("answer %d: %v", i, err)
		}
	}
	return won
}

// TestConcurrentExpirersAnswerAnElicitationOnce: expirers racing on one expired request (as
// on several processes) answer it exactly once; the server hears one cancel.
func TestConcurrentExpirersAnswerAnElicitationOnce(t *testing.T) {
	log := &answerLog{}
	e := elicitEnv(t, log)
	run := e.startAndRun(admin)
	e.clock.Advance(2*time.Minute + time.Second)
	const n = 16
	reps := make([]engine.ExpireReport, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			reps[i], errs[i] = e.rt.Expire(e.ctx, 100)
		}()
	}
	close(start)
	wg.Wait()
	e.rt.Wait()
	won := 0
	for i, rep := range reps {
		if errs[i] != nil {
			t.Fatalf("expirer %d: %v", i, errs[i])
		}
		won += rep.Elicitations
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := log.all(); won != 1 || len(got) != 1 || got[0] != "cancel <nil> state-ok=true" {
		t.Fatalf("%d expirers answered, server heard %q; want exactly one cancel", won, got)
	}
}

// TestElicitationsPerCallAreCountedAcrossPauses: a server that asks again after every answer
// is put to a person five times, each its own pause (the count kept in the pause's state); the
// desk declines the sixth request itself and the run goes on.
func TestElicitationsPerCallAreCountedAcrossPauses(t *testing.T) {
	srv := mcptest.New(t, mcptest.Tool{
		Tool:    mcp.Tool{Name: "again", InputSchema: mcptest.ObjectSchema(nil), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		Handler: mcptest.AskingAgain("How much?", amountSchema),
	})
	e := remoteEnv(t, []model.Turn{turn(call("crm_again", `{}`)), {Content: "done"}}, srv.Definition(t, "crm_again", "again", false))
	run := e.startAndRun(admin)
	for i := 1; i <= tool.MaxElicitationsPerCall; i++ {
		e.wantStatus(run.UUID, runtime.StatusWaitingInput)
		submit(t, e, admin, run.UUID, map[string]any{"amount": i}, "")
		e.rt.Wait()
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if errs := e.toolErrors(run.UUID); len(errs) != 1 || errs[0] {
		t.Fatalf("tool events = %v, want one result", errs)
	}
}
