package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// govSecret is an argument value no governance row may carry.
const govSecret = "gov-secret-4711"

// governance returns the run's governance rows as the runtime reads them.
func (e *env) governance(uuid string) []runtime.GovernanceEvent {
	e.t.Helper()
	rows, err := e.rt.Governance(e.ctx, admin, uuid)
	if err != nil {
		e.t.Fatalf("governance %s: %v", uuid, err)
	}
	return rows
}

// wantGovernance checks the run's rows, in order, by decision, reason, tool and detail, and
// that each names the run (uid and uuid), its configuration and provider, and carries no
// argument value.
func (e *env) wantGovernance(run runtime.Run, want ...[4]string) []runtime.GovernanceEvent {
	e.t.Helper()
	rows := e.governance(run.UUID)
	got := make([][4]string, len(rows))
	for i, g := range rows {
		got[i] = [4]string{g.Decision, g.Reason, g.ToolName, g.Detail}
		if g.Run != run.UID || g.CorrelationID != run.UUID || g.ConfigurationIdentifier != "test" || g.Provider != "scripted" || g.Crdate == 0 {
			e.t.Errorf("row %d does not name the run, its configuration and provider: %+v", i, g)
		}
		if strings.Contains(fmt.Sprintf("%+v", g), govSecret) {
			e.t.Errorf("row %d carries an argument value: %+v", i, g)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Fatalf("governance rows %v, want %v", got, want)
	}
	return rows
}

// wantStepOf checks that row g was written with the run's tool step (its sequence and time).
func (e *env) wantStepOf(uuid string, g runtime.GovernanceEvent) {
	e.t.Helper()
	for _, ev := range e.events(uuid) {
		if ev.Sequence == g.Sequence {
			if ev.Kind != runtime.EventTool || ev.Crdate != g.Crdate {
				e.t.Errorf("row %+v written with event %s at %d, want its tool step", g, ev.Kind, ev.Crdate)
			}
			return
		}
	}
	e.t.Errorf("row %+v names sequence %d, which no event has", g, g.Sequence)
}

// TestGovernanceToolNotOffered: a call of a tool the run is not offered is refused and writes
// tool_denied (toolNotOffered) with its step; a call refused for malformed arguments is no
// policy decision and writes none.
func TestGovernanceToolNotOffered(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{"order":"`+govSecret+`"}`), model.ScriptedCall{Name: "lookup", Arguments: []byte(`"nope"`)})})
	e.cfg.Tools = []string{"lookup"}
	e.saveConfig()
	run := e.startAndRun(reviewer)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	rows := e.wantGovernance(run, [4]string{runtime.GovernanceToolDenied, runtime.ReasonToolNotOffered, "tag_order", ""})
	if rows[0].BeUser != reviewer.UserUID {
		t.Errorf("be_user %d, want the run's owner %d", rows[0].BeUser, reviewer.UserUID)
	}
	e.wantStepOf(run.UUID, rows[0])
}

// TestGovernanceDeniedTurn: denying a turn refuses each of its calls as tool_denied
// (deniedByOperator), one row per call, each with its step.
func TestGovernanceDeniedTurn(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{"to":"`+govSecret+`"}`), call("lookup", `{}`))})
	run := e.startAndRun(reviewer)
	approve(t, e, admin, run.UUID, false)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	rows := e.wantGovernance(run,
		[4]string{runtime.GovernanceToolDenied, runtime.ReasonDeniedByOperator, "send_mail", ""},
		[4]string{runtime.GovernanceToolDenied, runtime.ReasonDeniedByOperator, "lookup", ""})
	for _, g := range rows {
		e.wantStepOf(run.UUID, g)
	}
}

// TestGovernanceNoLongerPermitted: an approved call whose tool left the configuration while
// the run waited is refused as tool_denied (toolNoLongerPermitted); the calls still offered
// write no row.
func TestGovernanceNoLongerPermitted(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`), call("lookup", `{}`))})
	run := e.startAndRun(admin)
	e.cfg.Tools = []string{"lookup"}
	e.saveConfig()
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	e.wantGovernance(run, [4]string{runtime.GovernanceToolDenied, runtime.ReasonToolNoLongerPermitted, "send_mail", ""})
}

// TestGovernanceInputResumeMeetsApprovalBoundCall: a call of an approval-bound tool that became
// offered while the run waited for input is refused on the input resume and written as
// write_unapproved / inputResumeWithoutApproval / inputTool=<the input tool>, with its step;
// the input tool runs with the person's values, which no row carries.
func TestGovernanceInputResumeMeetsApprovalBoundCall(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`), call("send_mail", `{"to":"x"}`))})
	e.cfg.Tools = []string{"ask_city", "lookup"}
	e.saveConfig()
	run := e.startAndRun(reviewer)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	e.cfg.Tools = []string{"ask_city", "lookup", "send_mail"}
	e.saveConfig()
	submit(t, e, reviewer, run.UUID, map[string]any{"city": govSecret}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if len(e.rec.get("send_mail")) != 0 || len(e.rec.get("ask_city")) != 1 {
		t.Fatalf("calls %v: want ask_city once and send_mail never", e.rec.calls)
	}
	rows := e.wantGovernance(run, [4]string{runtime.GovernanceWriteUnapproved, runtime.ReasonInputResumeWithoutApproval, "send_mail", "inputTool=ask_city"})
	e.wantStepOf(run.UUID, rows[0])
}

// TestGovernanceDeciderGates: a decider the tool gate refuses (a reviewer approving an
// admin-only write, a service account approving a write, a reviewer submitting to an
// admin-only input tool) writes tool_denied naming the tool, the reason and the gate, with
// the decider as be_user (a service account named in detail), following the run's last step;
// the run is unchanged.
func TestGovernanceDeciderGates(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("issue_refund", `{"amount":"`+govSecret+`"}`))})
	refund := e.startAndRun(admin)
	digest := e.view(refund.UUID).Pause.Digest
	for _, actor := range []runtime.Actor{reviewer, service} {
		_, err := e.rt.Approve(e.ctx, actor, refund.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest})
		if !errors.Is(err, runtime.ErrApproverNotPermitted) {
			t.Fatalf("%s approving: %v, want ApproverNotPermitted", actor.Name, err)
		}
	}
	e.wantStatus(refund.UUID, runtime.StatusWaitingApproval)
	rows := e.wantGovernance(refund,
		[4]string{runtime.GovernanceToolDenied, runtime.ReasonToolAdminOnly, "issue_refund", "gate=approver"},
		[4]string{runtime.GovernanceToolDenied, runtime.ReasonServiceAccountWrite, "issue_refund", "gate=approver; serviceAccount=ci"})
	last := e.events(refund.UUID)[len(e.events(refund.UUID))-1].Sequence
	if rows[0].BeUser != reviewer.UserUID || rows[1].BeUser != 0 || rows[0].Sequence != last || rows[1].Sequence != last {
		t.Errorf("rows %+v: want the deciders as be_user, after the last step (%d)", rows, last)
	}

	e2 := newEnv(t, []model.Turn{turn(call("ask_amount", `{}`))})
	ask := e2.startAndRun(admin)
	_, err := e2.rt.SubmitInput(e2.ctx, reviewer, ask.UUID, runtime.InputSubmission{Data: map[string]any{"amount": 5}, TurnDigest: e2.view(ask.UUID).Pause.Digest})
	if !errors.Is(err, runtime.ErrSubmitterNotPermitted) {
		t.Fatalf("reviewer submitting to an admin-only tool: %v", err)
	}
	e2.wantGovernance(ask, [4]string{runtime.GovernanceToolDenied, runtime.ReasonToolAdminOnly, "ask_amount", "gate=submitter"})
}

// governanceFault fails every AppendGovernance, as a database that is away would.
type governanceFault struct{ runtime.Store }

func (governanceFault) AppendGovernance(context.Context, runtime.GovernanceEvent) error {
	return errors.New("dial unix mysqld.sock: connection refused")
}

// TestGovernanceRowOfARefusedDeciderIsBestEffort: when the governance row of a refused
// decider cannot be written, the refusal is still answered as such (not as a store failure)
// and the run is unchanged.
func TestGovernanceRowOfARefusedDeciderIsBestEffort(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("issue_refund", `{}`))},
		withStore(func(s runtime.Store) runtime.Store { return governanceFault{s} }))
	run := e.startAndRun(admin)
	_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest})
	if !errors.Is(err, runtime.ErrApproverNotPermitted) {
		t.Fatalf("approve with the governance log away: %v, want ApproverNotPermitted", err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	e.wantGovernance(run)
}

// checkpointWithGovernanceFault fails, once, the first checkpoint that carries a governance
// row, as a database that is away would.
type checkpointWithGovernanceFault struct {
	runtime.Store
	mu    sync.Mutex
	fired bool
}

func (c *checkpointWithGovernanceFault) Checkpoint(ctx context.Context, uid int64, lease runtime.Lease, state, req string, events ...runtime.NewEvent) error {
	c.mu.Lock()
	fire := !c.fired && carriesGovernance(events)
	c.fired = c.fired || fire
	c.mu.Unlock()
	if fire {
		return errors.New("dial unix mysqld.sock: connection refused")
	}
	return c.Store.Checkpoint(ctx, uid, lease, state, req, events...)
}

func carriesGovernance(events []runtime.NewEvent) bool {
	for _, ev := range events {
		if len(ev.Governance) > 0 {
			return true
		}
	}
	return false
}

// TestGovernanceRowCommitsWithItsStep: the row of a refused call is stored in the transaction
// of the checkpoint that stores the step: when that checkpoint fails no row is written, the
// run goes back to its last checkpoint, and the repeated step writes the row once.
func TestGovernanceRowCommitsWithItsStep(t *testing.T) {
	fault := &checkpointWithGovernanceFault{}
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{}`)), {Content: "done"}},
		withStore(func(s runtime.Store) runtime.Store { fault.Store = s; return fault }))
	e.cfg.Tools = []string{"lookup"}
	e.saveConfig()
	run := e.startAndRun(admin)
	if !fault.fired {
		t.Fatal("no checkpoint carried a governance row")
	}
	e.wantStatus(run.UUID, runtime.StatusQueued)
	e.wantGovernance(run)
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("second run once: %v %v", ok, err)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	rows := e.wantGovernance(run, [4]string{runtime.GovernanceToolDenied, runtime.ReasonToolNotOffered, "tag_order", ""})
	e.wantStepOf(run.UUID, rows[0])
}

// TestGovernanceConcurrentRefusals: 20 concurrent approvals the approver gate refuses each get
// ApproverNotPermitted and write exactly one row; the run still waits, unchanged.
func TestGovernanceConcurrentRefusals(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("issue_refund", `{}`))})
	run := e.startAndRun(admin)
	before := e.run(run.UUID)
	digest := e.view(run.UUID).Pause.Digest
	const n = 20
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: fmt.Sprintf("k-%d", i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, runtime.ErrApproverNotPermitted) {
			t.Errorf("concurrent refused approval: %v", err)
		}
	}
	want := make([][4]string, n)
	for i := range want {
		want[i] = [4]string{runtime.GovernanceToolDenied, runtime.ReasonToolAdminOnly, "issue_refund", "gate=approver"}
	}
	e.wantGovernance(run, want...)
	if after := e.run(run.UUID); after.Status != runtime.StatusWaitingApproval || after.Tstamp != before.Tstamp || after.SuspendedState != before.SuspendedState {
		t.Errorf("refused approvals changed the run: %+v", after)
	}
}
