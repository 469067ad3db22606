package engine_test

import (
	"errors"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

func approve(t *testing.T, e *env, actor runtime.Actor, uuid string, ok bool) {
	t.Helper()
	if _, err := e.rt.Approve(e.ctx, actor, uuid, runtime.ApprovalDecision{Approved: ok, TurnDigest: e.view(uuid).Pause.Digest}); err != nil {
		t.Fatalf("approve(%v): %v", ok, err)
	}
	e.rt.Wait()
}

// TestApprovalScanBeforeExecution: an approval-bound call anywhere in the turn pauses the
// run before any call of the turn runs; approval then executes the whole turn.
func TestApprovalScanBeforeExecution(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{"q":1}`), call("send_mail", `{"to":"x"}`))})
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	if r.ClaimedBy != "" || r.LeaseExpires != 0 || r.SuspendedAt == 0 {
		t.Fatalf("suspended run keeps a lease or lacks suspended_at: %+v", r)
	}
	if r.Iterations != 1 || r.TotalTokens == 0 || r.TotalTokens != r.PromptTokens+r.CompletionTokens {
		t.Fatalf("waiting run's totals so far: iterations %d tokens %d/%d/%d", r.Iterations, r.PromptTokens, r.CompletionTokens, r.TotalTokens)
	}
	if n := len(e.rec.get("lookup")); n != 0 {
		t.Fatalf("lookup ran %d times before approval", n)
	}
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if len(e.rec.get("lookup")) != 1 || len(e.rec.get("send_mail")) != 1 {
		t.Fatalf("calls after approval = %v", e.rec.calls)
	}
	var decided bool
	for _, ev := range e.events(run.UUID) {
		if ev.Kind == runtime.EventApproval {
			decided = true
			jsonEqual(t, ev.Payload, `{"approved":true,"decidedBy":1}`)
		}
	}
	if !decided {
		t.Fatalf("no approval event in %v", e.kinds(run.UUID))
	}
}

// TestDenialContinuesTheRun: a denial refuses every call of the turn; the model continues
// from the refusal and the run completes.
func TestDenialContinuesTheRun(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(reviewer)
	approve(t, e, admin, run.UUID, false)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.TerminationReason != runtime.ReasonCompleted || len(e.rec.get("send_mail")) != 0 {
		t.Fatalf("reason %q, send_mail calls %d", r.TerminationReason, len(e.rec.get("send_mail")))
	}
}

// TestWriteImpliesApproval: a tool declaring a write pauses for approval without a marker,
// and executes under a write fence.
func TestWriteImpliesApproval(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{}`))})
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	approve(t, e, admin2, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if len(e.rec.get("tag_order")) != 1 {
		t.Fatalf("tag_order not executed")
	}
}

// TestApprovalResumeRefusesInputCall: an input-requiring call in an approved turn is refused
// ("requires user input that was not provided"), never executed without its input.
func TestApprovalResumeRefusesInputCall(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`), call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if len(e.rec.get("ask_city")) != 0 || len(e.rec.get("send_mail")) != 1 {
		t.Fatalf("calls = %v", e.rec.calls)
	}
}

// TestApprovedToolDisabledWhileWaiting: an approved call whose tool left the configuration
// while the run waited is refused as no longer permitted; the run continues.
func TestApprovedToolDisabledWhileWaiting(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	e.cfg.Tools = []string{"lookup"}
	e.saveConfig()
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if len(e.rec.get("send_mail")) != 0 {
		t.Fatalf("disabled tool executed")
	}
}

// TestFourEyes is rule 4.8: with require_second_approver the initiator may deny but not
// approve (admins included); another person may approve.
func TestFourEyes(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), turn(call("send_mail", `{}`))})
	e.cfg.RequireSecondApprover = true
	e.saveConfig()
	run := e.startAndRun(admin)
	_, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest})
	if !errors.Is(err, runtime.ErrSelfApprovalDenied) {
		t.Fatalf("self-approval err = %v", err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	approve(t, e, admin, run.UUID, false)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	approve(t, e, admin2, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
}

// TestPreviewCaptured: a previewing tool's lines are stored with the pause.
func TestPreviewCaptured(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`), call("notify", `{}`))})
	run := e.startAndRun(admin)
	p := e.view(run.UUID).Pause
	if len(p.Previews) != 1 || p.Previews[0].Index != 1 || p.Previews[0].Lines[0] != "would do a thing" {
		t.Fatalf("previews = %+v", p.Previews)
	}
}
