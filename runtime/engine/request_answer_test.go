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
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// answerOf is the answer of request uuid to its caller ci.
func (e *env) answerOf(uuid string) runtime.RequestAnswer {
	e.t.Helper()
	ans, err := e.rt.RequestAnswer(e.ctx, service, uuid)
	if err != nil {
		e.t.Fatalf("RequestAnswer(%s): %v", uuid, err)
	}
	return ans
}

// wantAnswer wants ans to be the answer JSON want (compared as JSON).
func wantAnswer(t *testing.T, ans runtime.RequestAnswer, want string) {
	t.Helper()
	got, err := json.Marshal(ans)
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, got, want)
}

// TestRequestAnswerFollowsTheDecision: a request's answer is pending while it waits, then
// the decision stored with the run: an approval with the approver's uid, username and
// reason; a denial; an approval with edited arguments (edited_arguments); an answered
// question with its values, sealed at rest with the run's output and opened for the caller.
func TestRequestAnswerFollowsTheDecision(t *testing.T) {
	e := externalEnv(t, withKeys(t))
	e.withPeople()
	e.saveTool(tool.Definition{Name: "pay", Editable: true, Effect: tool.EffectNonIdempotentWrite,
		Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`)})
	e.cfg.Tools = append(e.cfg.Tools, "pay")
	e.saveConfig()

	run, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer",
		Arguments: json.RawMessage(`{"amount":5}`), ExternalID: "ticket-1"})
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, e.answerOf(run.UUID), `{"id":"`+run.UUID+`","external_id":"ticket-1","status":"pending"}`)
	decidedAt := e.clock.Now().Unix()
	if _, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, Reason: "known vendor", TurnDigest: e.view(run.UUID).Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(run.UUID)
	wantAnswer(t, e.answerOf(run.UUID), fmt.Sprintf(`{"id":%q,"external_id":"ticket-1","status":"approved","decision":{"approved":true,
		"reason":"known vendor","decided_by":1,"decided_by_name":"ada","decided_by_service":"","decided_at":%d}}`, run.UUID, decidedAt))

	denied := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":6}`, runtime.StatusWaitingApproval)
	if _, err := e.rt.Approve(e.ctx, reviewer, denied.UUID, runtime.ApprovalDecision{Approved: false, Reason: "too much", TurnDigest: e.view(denied.UUID).Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(denied.UUID)
	wantAnswer(t, e.answerOf(denied.UUID), fmt.Sprintf(`{"id":%q,"external_id":"","status":"denied","decision":{"approved":false,
		"reason":"too much","decided_by":3,"decided_by_name":"rita","decided_by_service":"","decided_at":%d}}`, denied.UUID, decidedAt))

	edited := e.request(runtime.RequestApproval, "pay", `{"amount":100}`, runtime.StatusWaitingApproval)
	view := e.view(edited.UUID)
	edits := map[string]jsonpatch.Patch{view.Pause.PendingCalls[0].ID: mustPatch(t, `[{"op":"replace","path":"/amount","value":40}]`)}
	if _, err := e.rt.Approve(e.ctx, reviewer, edited.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest,
		Edits: edits, PatchDigest: schema.PatchDigest(view.Pause.Digest, edits)}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(edited.UUID)
	wantAnswer(t, e.answerOf(edited.UUID), fmt.Sprintf(`{"id":%q,"external_id":"","status":"approved","decision":{"approved":true,
		"reason":"","edited_arguments":{"amount":40},"decided_by":3,"decided_by_name":"rita","decided_by_service":"","decided_at":%d}}`, edited.UUID, decidedAt))

	asked := e.request(runtime.RequestInput, "ask_budget", `{}`, runtime.StatusWaitingInput)
	if _, err := e.rt.SubmitInput(e.ctx, admin, asked.UUID, runtime.InputSubmission{Data: map[string]any{"budget": 900},
		TurnDigest: e.view(asked.UUID).Pause.Digest, IdempotencyKey: "k-budget"}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(asked.UUID)
	wantAnswer(t, e.answerOf(asked.UUID), fmt.Sprintf(`{"id":%q,"external_id":"","status":"answered","decision":{"approved":true,
		"reason":"","values":{"budget":900},"decided_by":1,"decided_by_name":"ada","decided_by_service":"","decided_at":%d}}`, asked.UUID, decidedAt))
	var stored string
	if err := e.sql.QueryRow(`SELECT o.output_text FROM tx_runsdesk_run_output o JOIN tx_nrllm_agentrun r ON r.uid = o.run WHERE r.uuid = ?`, asked.UUID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "900") || runtime.UnopenedKey(stored) == "" {
		t.Errorf("the values are stored as %q, want them sealed", stored)
	}
}

// TestRequestAnswerRefusesCorruptValues: values stored that are not one JSON object are
// refused with an error naming the run, never guessed.
func TestRequestAnswerRefusesCorruptValues(t *testing.T) {
	e := externalEnv(t)
	asked := e.request(runtime.RequestInput, "ask_budget", `{}`, runtime.StatusWaitingInput)
	if _, err := e.rt.SubmitInput(e.ctx, admin, asked.UUID, runtime.InputSubmission{Data: map[string]any{"budget": 1},
		TurnDigest: e.view(asked.UUID).Pause.Digest, IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(asked.UUID)
	if _, err := e.sql.Exec(`UPDATE tx_runsdesk_run_output SET output_text = '[1' WHERE run = ?`, e.run(asked.UUID).UID); err != nil {
		t.Fatal(err)
	}
	_, err := e.rt.RequestAnswer(e.ctx, service, asked.UUID)
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeCorruptSuspendedState || re.RunUUID != asked.UUID {
		t.Fatalf("corrupt values: %v, want corrupt_suspended_state naming the run", err)
	}
}

// TestRequestAnswerOfExpiries: a denying expiry answers expired with the decision by
// system:expiry; a cancelling one expired without a decision; a withdrawn request cancelled.
func TestRequestAnswerOfExpiries(t *testing.T) {
	e := externalEnv(t)
	e.cfg.Wait = wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny}
	e.saveConfig()
	denied := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":1}`, runtime.StatusWaitingApproval)
	e.clock.Advance(2 * time.Hour)
	e.expire()
	e.wantDecided(denied.UUID)
	ans := e.answerOf(denied.UUID)
	if ans.Status != runtime.RequestExpired || ans.Decision == nil || ans.Decision.Approved || ans.Decision.DecidedBy != 0 ||
		ans.Decision.DecidedByService != "system:expiry" || ans.Decision.DecidedAt != e.clock.Now().Unix() {
		t.Errorf("denying expiry answered %+v (decision %+v)", ans, ans.Decision)
	}

	e.cfg.Wait = wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Cancel}
	e.saveConfig()
	cancelled := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":2}`, runtime.StatusWaitingApproval)
	e.clock.Advance(2 * time.Hour)
	e.expire()
	wantAnswer(t, e.answerOf(cancelled.UUID), `{"id":"`+cancelled.UUID+`","external_id":"","status":"expired"}`)

	withdrawn := e.request(runtime.RequestInput, "ask_budget", `{}`, runtime.StatusWaitingInput)
	ans, err := e.rt.WithdrawRequest(e.ctx, service, withdrawn.UUID)
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, ans, `{"id":"`+withdrawn.UUID+`","external_id":"","status":"cancelled"}`)
	e.wantStatus(withdrawn.UUID, runtime.StatusCancelled)
}

// TestRequestOnlyToItsCaller: another service account, a person, and the caller asking about
// a run that is no request all get run_not_found, for reading and for withdrawing; nothing
// is cancelled.
func TestRequestOnlyToItsCaller(t *testing.T) {
	e := externalEnv(t)
	run := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":1}`, runtime.StatusWaitingApproval)
	cron := runtime.Actor{Name: "cron", Role: runtime.RoleService, Scopes: []string{"request"}}
	for _, actor := range []runtime.Actor{cron, admin} {
		if _, err := e.rt.RequestAnswer(e.ctx, actor, run.UUID); !errors.Is(err, runtime.ErrRunNotFound) {
			t.Errorf("%s reads: %v, want run_not_found", actor.Name, err)
		}
		if _, err := e.rt.WithdrawRequest(e.ctx, actor, run.UUID); !errors.Is(err, runtime.ErrRunNotFound) {
			t.Errorf("%s withdraws: %v, want run_not_found", actor.Name, err)
		}
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)

	agent := newEnv(t, nil)
	plain, err := agent.rt.Start(agent.ctx, service, "test", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.rt.RequestAnswer(agent.ctx, service, plain.UUID); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("a run that is no request: %v, want run_not_found", err)
	}
}

// TestWithdrawAfterTheDecision: once a decision claimed a request (its continuation not yet
// run) or ended it, neither a withdrawal nor a person's cancel takes it: run_not_cancellable,
// and the decision stands.
func TestWithdrawAfterTheDecision(t *testing.T) {
	e := externalEnv(t)
	run := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":1}`, runtime.StatusWaitingApproval)
	e.hooks.arm(runtime.HookAfterClaim)
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusRunning)
	if _, err := e.rt.WithdrawRequest(e.ctx, service, run.UUID); !errors.Is(err, runtime.ErrRunNotCancellable) {
		t.Errorf("withdraw after the claim: %v, want run_not_cancellable", err)
	}
	if _, err := e.rt.Cancel(e.ctx, admin, run.UUID); !errors.Is(err, runtime.ErrRunNotCancellable) {
		t.Errorf("cancel after the claim: %v, want run_not_cancellable", err)
	}
	e.wantStatus(run.UUID, runtime.StatusRunning)

	decided := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":2}`, runtime.StatusWaitingApproval)
	approve(t, e, admin, decided.UUID, false)
	e.wantDecided(decided.UUID)
	if _, err := e.rt.WithdrawRequest(e.ctx, service, decided.UUID); !errors.Is(err, runtime.ErrRunNotCancellable) {
		t.Errorf("withdraw after the decision: %v, want run_not_cancellable", err)
	}
	if ans := e.answerOf(decided.UUID); ans.Status != runtime.RequestDenied {
		t.Errorf("answer after a refused withdrawal: %+v", ans)
	}
}

// TestWithdrawRacesDecisions: 16 approvals and 16 withdrawals (half the caller's, half a
// person's cancel) of one request at once, over several rounds: exactly one wins, and the
// request ends as that one says (completed with its one decision, or cancelled with none).
func TestWithdrawRacesDecisions(t *testing.T) {
	e := externalEnv(t)
	for round := range 6 {
		run := e.request(runtime.RequestApproval, "wire_transfer", fmt.Sprintf(`{"amount":%d}`, round), runtime.StatusWaitingApproval)
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
				switch {
				case i%2 == 0:
					decider := runtime.Actor{UserUID: int64(100 + i), Name: fmt.Sprintf("p%d", i), Role: runtime.RoleAdmin}
					_, errs[i] = e.rt.Approve(e.ctx, decider, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: fmt.Sprintf("k%d", i)})
				case i%4 == 1:
					_, errs[i] = e.rt.WithdrawRequest(e.ctx, service, run.UUID)
				default:
					_, errs[i] = e.rt.Cancel(e.ctx, admin, run.UUID)
				}
			}()
		}
		close(start)
		wg.Wait()
		e.rt.Wait()
		approvals, withdrawals := 0, 0
		for i, err := range errs {
			switch {
			case err == nil && i%2 == 0:
				approvals++
			case err == nil:
				withdrawals++
			case !errors.Is(err, runtime.ErrRunAlreadyResuming) && !errors.Is(err, runtime.ErrRunNotAwaitingApproval) && !errors.Is(err, runtime.ErrRunNotCancellable):
				t.Fatalf("round %d, caller %d: %v", round, i, err)
			}
		}
		if approvals+withdrawals != 1 {
			t.Fatalf("round %d: %d approvals and %d withdrawals won, want exactly one", round, approvals, withdrawals)
		}
		decisions := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, e.run(run.UUID).UID)
		if approvals == 1 {
			e.wantDecided(run.UUID)
			if decisions != 1 || e.answerOf(run.UUID).Status != runtime.RequestApproved {
				t.Fatalf("round %d: approval won, %d decisions stored, answer %+v", round, decisions, e.answerOf(run.UUID))
			}
			continue
		}
		e.wantStatus(run.UUID, runtime.StatusCancelled)
		if decisions != 0 || e.answerOf(run.UUID).Status != runtime.RequestCancelled {
			t.Fatalf("round %d: withdrawal won, %d decisions stored, answer %+v", round, decisions, e.answerOf(run.UUID))
		}
	}
}

// TestReplayedRequestDecision: the replay of a request's approval (the same idempotency key)
// reports, as the first outcome did, that the decision answers an external request.
func TestReplayedRequestDecision(t *testing.T) {
	e := externalEnv(t)
	run := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":1}`, runtime.StatusWaitingApproval)
	d := runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest, IdempotencyKey: "k-1"}
	for i := range 2 {
		out, err := e.rt.Approve(e.ctx, admin, run.UUID, d)
		e.rt.Wait()
		if err != nil || out.Replayed != (i == 1) || !out.Request {
			t.Fatalf("approval %d: %+v, %v; want an outcome for a request", i, out, err)
		}
	}
}
