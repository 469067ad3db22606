package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// faultStore wraps the real store and fails chosen operations.
type faultStore struct {
	runtime.Store
	failSuspend  bool
	failClaim    error
	failDecision bool
}

func (f *faultStore) Suspend(ctx context.Context, uid int64, owner string, s runtime.Suspension, now int64, events ...runtime.NewEvent) error {
	if f.failSuspend {
		return fmt.Errorf("disk full")
	}
	return f.Store.Suspend(ctx, uid, owner, s, now, events...)
}

func (f *faultStore) Commit(ctx context.Context, p runtime.CommitPlan) (runtime.Run, runtime.Event, error) {
	if f.failClaim != nil {
		return runtime.Run{}, runtime.Event{}, f.failClaim
	}
	return f.Store.Commit(ctx, p)
}

func (f *faultStore) FindDecision(ctx context.Context, run int64, key string) (runtime.Decision, error) {
	if f.failDecision {
		return runtime.Decision{}, fmt.Errorf("connection reset")
	}
	return f.Store.FindDecision(ctx, run, key)
}

// TestErrorCatalogue covers the error catalogue's decision refusals: the code, the run named
// in the error, and the run left as it was (each code's HTTP status: handlers/refusal's
// TestRefusalTable).
func TestErrorCatalogue(t *testing.T) {
	approvalScript := []model.Turn{turn(call("send_mail", `{}`))}
	inputScript := []model.Turn{turn(call("ask_city", `{}`))}
	writeScript := []model.Turn{turn(call("issue_refund", `{}`))}
	type tc struct {
		name   string
		script []model.Turn
		setup  func(e *env, fs *faultStore, uuid string)
		act    func(e *env, uuid, digest string) error
		want   runtime.Code
		after  runtime.Status
	}
	approveAs := func(a runtime.Actor, ok bool) func(*env, string, string) error {
		return func(e *env, uuid, digest string) error {
			_, err := e.rt.Approve(e.ctx, a, uuid, runtime.ApprovalDecision{Approved: ok, TurnDigest: digest})
			return err
		}
	}
	submitAs := func(a runtime.Actor, data map[string]any) func(*env, string, string) error {
		return func(e *env, uuid, digest string) error {
			_, err := e.rt.SubmitInput(e.ctx, a, uuid, runtime.InputSubmission{Data: data, TurnDigest: digest})
			return err
		}
	}
	berlin := map[string]any{"city": "Berlin"}
	corrupt := func(state string) func(*env, *faultStore, string) {
		return func(e *env, _ *faultStore, uuid string) {
			if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET suspended_state=? WHERE uuid=?", state, uuid); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []tc{
		{name: "not awaiting approval", script: inputScript, act: approveAs(admin, true), want: runtime.CodeRunNotAwaitingApproval, after: runtime.StatusWaitingInput},
		{name: "not awaiting input", script: approvalScript, act: submitAs(admin, berlin), want: runtime.CodeRunNotAwaitingInput, after: runtime.StatusWaitingApproval},
		{name: "access denied support approve", script: approvalScript, act: approveAs(support, true), want: runtime.CodeRunAccessDenied, after: runtime.StatusWaitingApproval},
		{name: "access denied service submit", script: inputScript, act: submitAs(service, berlin), want: runtime.CodeRunAccessDenied, after: runtime.StatusWaitingInput},
		{name: "configuration gone", script: approvalScript, setup: func(e *env, _ *faultStore, _ string) {
			if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_configuration SET deleted=1"); err != nil {
				t.Fatal(err)
			}
		}, act: approveAs(admin, true), want: runtime.CodeRunConfigurationGone, after: runtime.StatusWaitingApproval},
		{name: "corrupt state not json", script: approvalScript, setup: corrupt(`{not json`), act: approveAs(admin, true), want: runtime.CodeCorruptSuspendedState, after: runtime.StatusWaitingApproval},
		{name: "corrupt state unusable schema", script: inputScript, setup: corrupt(`{"messages":[],"pendingCalls":[{"id":"c","type":"function","function":{"name":"ask_city","arguments":{}}}],"inputToolName":"ask_city","inputSchema":{}}`), act: submitAs(admin, berlin), want: runtime.CodeCorruptSuspendedState, after: runtime.StatusWaitingInput},
		{name: "state unavailable", script: approvalScript, setup: func(_ *env, fs *faultStore, _ string) { fs.failClaim = fmt.Errorf("connection refused") }, act: approveAs(admin, true), want: runtime.CodeRunStateUnavailable, after: runtime.StatusWaitingApproval},
		{name: "state unavailable on replay lookup", script: approvalScript, setup: func(_ *env, fs *faultStore, _ string) { fs.failDecision = true }, act: func(e *env, uuid, _ string) error {
			_, err := e.rt.Approve(e.ctx, admin, uuid, runtime.ApprovalDecision{Approved: true, TurnDigest: "0000", IdempotencyKey: "k"})
			return err
		}, want: runtime.CodeRunStateUnavailable, after: runtime.StatusWaitingApproval},
		{name: "invalid input", script: inputScript, act: submitAs(admin, map[string]any{}), want: runtime.CodeInvalidInputSubmission, after: runtime.StatusWaitingInput},
		{name: "stale approval", script: approvalScript, act: func(e *env, uuid, _ string) error {
			_, err := e.rt.Approve(e.ctx, admin, uuid, runtime.ApprovalDecision{Approved: true, TurnDigest: "0000"})
			return err
		}, want: runtime.CodeStaleApprovalTurn, after: runtime.StatusWaitingApproval},
		{name: "missing digest is stale", script: approvalScript, act: func(e *env, uuid, _ string) error {
			_, err := e.rt.Approve(e.ctx, admin, uuid, runtime.ApprovalDecision{Approved: true})
			return err
		}, want: runtime.CodeStaleApprovalTurn, after: runtime.StatusWaitingApproval},
		{name: "stale input", script: inputScript, act: func(e *env, uuid, _ string) error {
			_, err := e.rt.SubmitInput(e.ctx, admin, uuid, runtime.InputSubmission{Data: berlin, TurnDigest: "feed"})
			return err
		}, want: runtime.CodeStaleInputTurn, after: runtime.StatusWaitingInput},
		{name: "approver not permitted: reviewer on admin-only write", script: writeScript, act: approveAs(reviewer, true), want: runtime.CodeApproverNotPermitted, after: runtime.StatusWaitingApproval},
		{name: "approver not permitted: service on write", script: writeScript, act: approveAs(service, true), want: runtime.CodeApproverNotPermitted, after: runtime.StatusWaitingApproval},
		{name: "submitter not permitted: reviewer on admin-only input", script: []model.Turn{turn(call("ask_amount", `{}`))}, act: submitAs(reviewer, map[string]any{"amount": 5}), want: runtime.CodeSubmitterNotPermitted, after: runtime.StatusWaitingInput},
		{name: "approval not auditable", script: writeScript, setup: func(_ *env, fs *faultStore, _ string) {
			fs.failClaim = fmt.Errorf("insert event: %w", runtime.ErrEventNotRecorded)
		}, act: approveAs(admin, true), want: runtime.CodeApprovalNotAuditable, after: runtime.StatusWaitingApproval},
		{name: "unknown run", script: approvalScript, act: func(e *env, _, digest string) error {
			_, err := e.rt.Approve(e.ctx, admin, "00000000-0000-4000-8000-000000000000", runtime.ApprovalDecision{Approved: true, TurnDigest: digest})
			return err
		}, want: runtime.CodeRunNotFound, after: runtime.StatusWaitingApproval},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := &faultStore{}
			e := newEnv(t, c.script, withStore(func(s runtime.Store) runtime.Store { fs.Store = s; return fs }))
			run := e.startAndRun(admin)
			digest := e.view(run.UUID).Pause.Digest
			before := e.run(run.UUID)
			nEvents := len(e.events(run.UUID))
			if c.setup != nil {
				c.setup(e, fs, run.UUID)
			}
			err := c.act(e, run.UUID, digest)
			var re *runtime.Error
			if !errors.As(err, &re) || re.Code != c.want {
				t.Fatalf("err = %v, want code %s", err, c.want)
			}
			if c.want != runtime.CodeRunNotFound && re.RunUUID != run.UUID {
				t.Fatalf("error names run %q, want %q", re.RunUUID, run.UUID)
			}
			e.rt.Wait()
			after := e.run(run.UUID)
			if after.Status != c.after || after.ClaimedBy != "" || after.SuspendedAt != before.SuspendedAt {
				t.Fatalf("run changed: %s claimed %q suspended_at %d→%d", after.Status, after.ClaimedBy, before.SuspendedAt, after.SuspendedAt)
			}
			if n := len(e.events(run.UUID)); n != nEvents {
				t.Fatalf("events %d → %d", nEvents, n)
			}
		})
	}
}

// TestAlreadyResumingNamesTheDecider: after one decision, another person's decision is
// refused as already handled, with who and when.
func TestAlreadyResumingNamesTheDecider(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	if _, err := e.rt.Approve(e.ctx, admin2, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: "a"}); err != nil {
		t.Fatal(err)
	}
	e.rt.Wait()
	_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: false, TurnDigest: digest, IdempotencyKey: "b"})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeRunAlreadyResuming || re.Decided == nil || re.Decided.DecidedBy != admin2.UserUID || re.Decided.Crdate == 0 || !re.Decided.Approved {
		t.Fatalf("err = %+v, want RunAlreadyResuming by %d", err, admin2.UserUID)
	}
	out, err := e.rt.Approve(e.ctx, admin2, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: "a"})
	if err != nil || !out.Replayed || !out.Decision.Approved {
		t.Fatalf("replay = %+v, %v; want the first outcome", out, err)
	}
}

// outageStore fails every checkpoint and the first requeues, like a database that is away for
// a moment.
type outageStore struct {
	runtime.Store
	mu                sync.Mutex
	checkpointsFailed int
	requeueFailures   int
}

func (o *outageStore) Checkpoint(ctx context.Context, uid int64, lease runtime.Lease, state, req string, events ...runtime.NewEvent) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.checkpointsFailed < 1 {
		o.checkpointsFailed++
		return fmt.Errorf("dial unix mysqld.sock: connection refused")
	}
	return o.Store.Checkpoint(ctx, uid, lease, state, req, events...)
}

func (o *outageStore) Requeue(ctx context.Context, uid int64, owner string, now, retryAt int64) error {
	o.mu.Lock()
	if o.requeueFailures > 0 {
		o.requeueFailures--
		o.mu.Unlock()
		return fmt.Errorf("dial unix mysqld.sock: connection refused")
	}
	o.mu.Unlock()
	return o.Store.Requeue(ctx, uid, owner, now, retryAt)
}

// TestStoreFaultHandsRunBack: a segment whose own write fails (the database is away) is not
// failed as a provider error and not left to wait out its lease: once the database answers
// again it is handed back to the queue, and a worker finishes it from the checkpoint.
func TestStoreFaultHandsRunBack(t *testing.T) {
	out := &outageStore{requeueFailures: 2}
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`))}, withStore(func(s runtime.Store) runtime.Store { out.Store = s; return out }))
	run, err := e.rt.Start(e.ctx, admin, "test", "go")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	r := e.wantStatus(run.UUID, runtime.StatusQueued)
	if r.RequeueCount != 1 || r.ClaimedBy != "" {
		t.Fatalf("handed back run = %+v", r)
	}
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("second run once: %v %v", ok, err)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
}
