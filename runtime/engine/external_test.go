package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// TestStartRefusesAnExternalConfiguration: a configuration of kind: external runs no model,
// so Start refuses a prompt for it (invalid_request, naming it) and queues nothing.
func TestStartRefusesAnExternalConfiguration(t *testing.T) {
	e := newEnv(t, nil)
	e.cfg.Provider = model.Settings{}
	e.cfg.External = &runtime.ExternalPolicy{Callers: []string{"ci"}}
	e.saveConfig()
	_, err := e.rt.Start(e.ctx, admin, e.cfg.Identifier, "help me")
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeInvalidRequest || !strings.Contains(re.Message, `configuration "test" is kind: external`) {
		t.Fatalf("Start = %v, want invalid_request naming the external configuration", err)
	}
	if ran, err := e.rt.RunOnce(e.ctx); ran || err != nil {
		t.Errorf("RunOnce after the refusal: ran=%v, %v; want nothing queued", ran, err)
	}
}

// externalEnv is an env whose configuration is kind: external, taking requests from the
// service account ci, with a declared approval (wire_transfer) and a declared question
// (ask_budget), both stored as data without an endpoint.
func externalEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	e := newEnv(t, nil, opts...)
	e.saveTool(tool.Definition{Name: "wire_transfer", Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`),
		Effect: tool.EffectNonIdempotentWrite})
	e.saveTool(tool.Definition{Name: "ask_budget", InputSchema: json.RawMessage(`{"type":"object","required":["budget"],"properties":{"budget":{"type":"integer"}}}`)})
	e.cfg.Provider = model.Settings{}
	e.cfg.Tools = []string{"wire_transfer", "ask_budget"}
	e.cfg.External = &runtime.ExternalPolicy{Callers: []string{service.Name}}
	e.saveConfig()
	return e
}

// request creates a request as ci and wants it waiting in want.
func (e *env) request(kind, name, args string, want runtime.Status) runtime.Run {
	e.t.Helper()
	run, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: e.cfg.Identifier, Kind: kind, Tool: name, Arguments: json.RawMessage(args)})
	if err != nil {
		e.t.Fatalf("CreateRequest(%s %s): %v", kind, name, err)
	}
	if run.Status != want {
		e.t.Fatalf("CreateRequest(%s %s) answered status %s, want %s", kind, name, run.Status, want)
	}
	return e.wantStatus(run.UUID, want)
}

// wantDecided wants the request completed with termination reason decided, its lease let go.
func (e *env) wantDecided(uuid string) {
	e.t.Helper()
	e.rt.Wait()
	r := e.wantStatus(uuid, runtime.StatusCompleted)
	if r.TerminationReason != runtime.ReasonDecided || r.ClaimedBy != "" {
		e.t.Fatalf("decided request %+v, want termination reason decided", r)
	}
}

// TestCreateRequestWaitsAtOnce: a request is born waiting (CreateRequest): an approval of a
// declared action in waiting_for_approval with its call pending as given, a question in
// waiting_for_input with the tool's form; its owner is the service account, and nothing is
// left queued for a worker.
func TestCreateRequestWaitsAtOnce(t *testing.T) {
	e := externalEnv(t)
	run := e.request(runtime.RequestApproval, "wire_transfer", `{ "amount": 125.5 }`, runtime.StatusWaitingApproval)
	v := e.view(run.UUID)
	if run.StartedByService != "ci" || run.BeUser != 0 || v.Pause == nil || len(v.Pause.PendingCalls) != 1 ||
		string(v.Pause.PendingCalls[0].Function.Arguments) != `{"amount":125.5}` || v.Pause.Digest == "" {
		t.Fatalf("approval request %+v, pause %+v", run, v.Pause)
	}
	asked := e.request(runtime.RequestInput, "ask_budget", `{"project":"roof"}`, runtime.StatusWaitingInput)
	if v := e.view(asked.UUID); v.Pause == nil || v.Pause.InputTool != "ask_budget" {
		t.Fatalf("input request's pause %+v", v.Pause)
	}
	if ran, err := e.rt.RunOnce(e.ctx); ran || err != nil {
		t.Errorf("RunOnce after two requests: ran=%v, %v; want nothing queued", ran, err)
	}
}

// TestRequestTitleAndMessage: a request's title is its pause's subject (cut to one line), in
// place of the configuration's template, and its message stands as the words beside the call;
// a title or message over its bound is invalid_request.
func TestRequestTitleAndMessage(t *testing.T) {
	e := externalEnv(t)
	e.cfg.Subject = "Pay {{amount}}"
	e.saveConfig()
	run, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer",
		Arguments: json.RawMessage(`{"amount":3}`), Title: "Refund\norder A-1", Message: "The customer was charged twice."})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.run(run.UUID).Subject; got != "Refund order A-1" {
		t.Errorf("subject %q, want the title on one line", got)
	}
	if v := e.view(run.UUID); v.Pause == nil || v.Pause.ModelText != "The customer was charged twice." {
		t.Errorf("words beside the call: %+v", v.Pause)
	}
	plain := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":4}`, runtime.StatusWaitingApproval)
	if got := e.run(plain.UUID).Subject; got != "Pay 4" {
		t.Errorf("subject without a title %q, want the template's", got)
	}
	for _, req := range []runtime.NewRequest{
		{Configuration: "test", Kind: "approval", Tool: "wire_transfer", Title: strings.Repeat("t", runtime.MaxRequestTitleBytes+1)},
		{Configuration: "test", Kind: "approval", Tool: "wire_transfer", Message: strings.Repeat("m", runtime.MaxPromptBytes+1)},
	} {
		var re *runtime.Error
		if _, err := e.rt.CreateRequest(e.ctx, service, req); !errors.As(err, &re) || re.Code != runtime.CodeInvalidRequest {
			t.Errorf("oversized title or message: %v, want invalid_request", err)
		}
	}
}

// TestCreateRequestRefusals: a caller the configuration does not name, or an agent
// configuration, is not found; an undeclared tool is unknown_tool; a kind that does not fit
// the tool and arguments that are not one object within the bound are invalid_request.
func TestCreateRequestRefusals(t *testing.T) {
	e := externalEnv(t)
	other := runtime.Actor{Name: "cron", Role: runtime.RoleService, Scopes: []string{"request"}}
	for _, tc := range []struct {
		name  string
		actor runtime.Actor
		req   runtime.NewRequest
		code  runtime.Code
	}{
		{"caller not named", other, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer"}, runtime.CodeConfigurationNotFound},
		{"a person", admin, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer"}, runtime.CodeConfigurationNotFound},
		{"no such configuration", service, runtime.NewRequest{Configuration: "nope", Kind: "approval", Tool: "wire_transfer"}, runtime.CodeConfigurationNotFound},
		{"undeclared tool", service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "lookup"}, runtime.CodeUnknownTool},
		{"approval of a question", service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "ask_budget"}, runtime.CodeInvalidRequest},
		{"input of an action", service, runtime.NewRequest{Configuration: "test", Kind: "input", Tool: "wire_transfer"}, runtime.CodeInvalidRequest},
		{"unknown kind", service, runtime.NewRequest{Configuration: "test", Kind: "vote", Tool: "wire_transfer"}, runtime.CodeInvalidRequest},
		{"arguments a list", service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer", Arguments: json.RawMessage(`[1]`)}, runtime.CodeInvalidRequest},
		{"arguments too large", service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer",
			Arguments: json.RawMessage(`{"note":"` + strings.Repeat("x", 70_000) + `"}`)}, runtime.CodeInvalidRequest},
	} {
		_, err := e.rt.CreateRequest(e.ctx, tc.actor, tc.req)
		var re *runtime.Error
		if !errors.As(err, &re) || re.Code != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_nrllm_agentrun`); n != 0 {
		t.Errorf("%d runs stored by refused requests", n)
	}
}

// TestRequestDecisionsEndItDecided: a decision's continuation runs no model: an approval, a
// denial, an approval with edited arguments and an answer each end the request completed
// with termination reason decided, the decision stored with its run.
func TestRequestDecisionsEndItDecided(t *testing.T) {
	e := externalEnv(t)
	approved := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":5}`, runtime.StatusWaitingApproval)
	approve(t, e, admin, approved.UUID, true)
	e.wantDecided(approved.UUID)

	denied := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":6}`, runtime.StatusWaitingApproval)
	if _, err := e.rt.Approve(e.ctx, admin, denied.UUID, runtime.ApprovalDecision{Approved: false, Reason: "too much", TurnDigest: e.view(denied.UUID).Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(denied.UUID)
	if d, err := e.store.LatestDecision(e.ctx, e.run(denied.UUID).UID); err != nil || d.Approved || d.DecidedBy != admin.UserUID {
		t.Errorf("the denial as stored: %+v, %v", d, err)
	}

	answered := e.request(runtime.RequestInput, "ask_budget", `{}`, runtime.StatusWaitingInput)
	if _, err := e.rt.SubmitInput(e.ctx, reviewer, answered.UUID, runtime.InputSubmission{Data: map[string]any{"budget": 900},
		TurnDigest: e.view(answered.UUID).Pause.Digest, IdempotencyKey: "k-budget"}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(answered.UUID)
	if d, err := e.store.LatestDecision(e.ctx, e.run(answered.UUID).UID); err != nil || d.Kind != "input" || d.DecidedBy != reviewer.UserUID {
		t.Errorf("the answer as stored: %+v, %v", d, err)
	}
	if n := len(e.rec.calls); n != 0 {
		t.Errorf("in-process tools ran %d times for requests", n)
	}
}

// TestRequestExpiryAndWithdrawal: a request expires as its wait policy says (a denying
// expiry completes it, decided; a cancelling one cancels it) and a cancelled (withdrawn)
// request ends cancelled.
func TestRequestExpiryAndWithdrawal(t *testing.T) {
	e := externalEnv(t)
	e.cfg.Wait = wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny}
	e.saveConfig()
	denied := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":1}`, runtime.StatusWaitingApproval)
	e.clock.Advance(2 * time.Hour)
	e.expire()
	e.wantDecided(denied.UUID)

	e.cfg.Wait = wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Cancel}
	e.saveConfig()
	cancelled := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":2}`, runtime.StatusWaitingApproval)
	e.clock.Advance(2 * time.Hour)
	e.expire()
	e.rt.Wait()
	if r := e.wantStatus(cancelled.UUID, runtime.StatusCancelled); r.TerminationReason != runtime.ReasonExpired {
		t.Errorf("cancelling expiry: %+v", r)
	}

	withdrawn := e.request(runtime.RequestInput, "ask_budget", `{}`, runtime.StatusWaitingInput)
	if _, err := e.rt.Cancel(e.ctx, service, withdrawn.UUID); err != nil {
		t.Fatalf("withdraw: %v", err)
	}
	e.wantStatus(withdrawn.UUID, runtime.StatusCancelled)
}

// TestConcurrentRequestDecisions: of 16 people approving and 16 denying one request at once,
// exactly one decision is taken; the others are told it was already decided, and the request
// ends completed, decided, with that one decision stored.
func TestConcurrentRequestDecisions(t *testing.T) {
	e := externalEnv(t)
	run := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":7}`, runtime.StatusWaitingApproval)
	digest := e.view(run.UUID).Pause.Digest
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			decider := runtime.Actor{UserUID: int64(100 + i), Name: fmt.Sprintf("p%d", i), Role: runtime.RoleAdmin}
			_, errs[i] = e.rt.Approve(e.ctx, decider, run.UUID, runtime.ApprovalDecision{Approved: i%2 == 0, TurnDigest: digest,
				IdempotencyKey: fmt.Sprintf("k%d", i)})
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, runtime.ErrRunAlreadyResuming) && !errors.Is(err, runtime.ErrRunNotAwaitingApproval):
			t.Errorf("decision %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions taken, want 1", won)
	}
	e.wantDecided(run.UUID)
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, e.run(run.UUID).UID); n != 1 {
		t.Errorf("%d decisions stored, want 1", n)
	}
}
