package engine_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// withPeople stores the harness's people (ada, bob, rita, sam) as be_users rows with their uids.
func (e *env) withPeople() {
	e.t.Helper()
	for _, p := range []runtime.Actor{admin, admin2, reviewer, support} {
		if _, err := e.sql.ExecContext(e.ctx, `INSERT INTO be_users (uid, username, role) VALUES (?, ?, ?)`, p.UserUID, p.Name, string(p.Role)); err != nil {
			e.t.Fatal(err)
		}
	}
}

// TestAssignment: a reviewer takes a waiting run; another's take is already_assigned naming
// her; an admin forces it over (audited as forced); a reviewer may not assign to someone else
// unless reviewers_may_assign; the assignee releases it; support and unknown people are
// refused; each change is an assignment event.
func TestAssignment(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	run := e.startAndRun(admin)
	got, err := e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{To: "rita"})
	if err != nil || got.Assignee != reviewer.UserUID || got.AssigneeName != "rita" {
		t.Fatalf("take: %+v, %v; want rita", got, err)
	}
	if stored := e.run(run.UUID); stored.Assignee != reviewer.UserUID || stored.AssignedAt == 0 {
		t.Fatalf("stored assignee %d at %d", stored.Assignee, stored.AssignedAt)
	}
	if again, err := e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{To: "rita"}); err != nil || again.Assignee != reviewer.UserUID {
		t.Fatalf("a second take by the assignee: %+v, %v; want no change", again, err)
	}
	_, err = e.rt.Assign(e.ctx, admin2, run.UUID, runtime.Assignment{To: "bob"})
	wantCode(t, err, runtime.CodeAlreadyAssigned)
	if !strings.Contains(err.Error(), "rita") {
		t.Errorf("already_assigned %q does not name rita", err)
	}
	_, err = e.rt.Assign(e.ctx, service, run.UUID, runtime.Assignment{To: "bob", Force: true})
	wantCode(t, err, runtime.CodeRunAccessDenied)
	if got, err := e.rt.Assign(e.ctx, admin2, run.UUID, runtime.Assignment{To: "bob", Force: true}); err != nil || got.Assignee != admin2.UserUID {
		t.Fatalf("bob forces: %+v, %v", got, err)
	}
	_, err = e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{To: "rita"})
	wantCode(t, err, runtime.CodeAlreadyAssigned)
	if got, err := e.rt.Assign(e.ctx, admin2, run.UUID, runtime.Assignment{}); err != nil || got.Assignee != 0 {
		t.Fatalf("bob releases: %+v, %v", got, err)
	}
	_, err = e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{To: "ada"})
	wantCode(t, err, runtime.CodeRunAccessDenied)
	e.cfg.Assignment.ReviewersMayAssign = true
	e.saveConfig()
	if got, err := e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{To: "ada"}); err != nil || got.Assignee != admin.UserUID {
		t.Fatalf("rita assigns to ada under reviewers_may_assign: %+v, %v", got, err)
	}
	_, err = e.rt.Assign(e.ctx, support, run.UUID, runtime.Assignment{To: "sam"})
	wantCode(t, err, runtime.CodeRunAccessDenied)
	_, err = e.rt.Assign(e.ctx, admin, run.UUID, runtime.Assignment{To: "sam"})
	wantCode(t, err, runtime.CodeInvalidRequest)
	_, err = e.rt.Assign(e.ctx, admin, run.UUID, runtime.Assignment{To: "nobody"})
	wantCode(t, err, runtime.CodeInvalidRequest)

	evs := e.events(run.UUID)
	n := 0
	for _, ev := range evs {
		if ev.Kind == runtime.EventAssignment {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d assignment events, want 4 (take, force, release, assign)", n)
	}
	var outcomes string
	if err := e.sql.QueryRowContext(e.ctx, `SELECT GROUP_CONCAT(outcome ORDER BY uid) FROM tx_runsdesk_audit WHERE action = 'assignment'`).Scan(&outcomes); err != nil {
		t.Fatal(err)
	}
	if outcomes != "taken,forced,released,assigned" {
		t.Errorf("audit outcomes %q, want taken,forced,released,assigned", outcomes)
	}
	if _, err := e.rt.Cancel(e.ctx, admin, run.UUID); err != nil {
		t.Fatal(err)
	}
	if r := e.run(run.UUID); r.Assigned() != 0 {
		t.Errorf("a cancelled run is still assigned to %d", r.Assigned())
	}
	_, err = e.rt.Assign(e.ctx, admin, run.UUID, runtime.Assignment{To: "ada"})
	wantCode(t, err, runtime.CodeInvalidRequest)
}

// TestStrictAssignment: a run assigned to rita is decided by her only under strict (403
// assigned_to_other for ada); without strict ada's decision is taken and its event names
// whose run it was.
func TestStrictAssignment(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	e.cfg.Assignment.Strict = true
	e.saveConfig()
	strict := e.startAndRun(admin2)
	if _, err := e.rt.Assign(e.ctx, reviewer, strict.UUID, runtime.Assignment{To: "rita"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.rt.Approve(e.ctx, admin, strict.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(strict.UUID).Pause.Digest})
	wantCode(t, err, runtime.CodeAssignedToOther)
	if _, err := e.rt.Approve(e.ctx, reviewer, strict.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(strict.UUID).Pause.Digest}); err != nil {
		t.Fatalf("rita decides her run: %v", err)
	}
	e.cfg.Assignment.Strict = false
	e.saveConfig()
	loose := e.startAndRun(admin2)
	if _, err := e.rt.Assign(e.ctx, reviewer, loose.UUID, runtime.Assignment{To: "rita"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Approve(e.ctx, admin, loose.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(loose.UUID).Pause.Digest}); err != nil {
		t.Fatalf("ada decides rita's run without strict: %v", err)
	}
	found := false
	for _, ev := range e.events(loose.UUID) {
		if ev.Kind == runtime.EventApproval && strings.Contains(string(ev.Payload), `"assignedTo":3`) {
			found = true
		}
	}
	if !found {
		t.Error("the approval event does not record that the run was assigned to rita")
	}
}

// TestConcurrentTakes: 20 concurrent takes of one run by 20 admins: exactly one assignee, 19
// already_assigned.
func TestConcurrentTakes(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	const n = 20
	var people []runtime.Actor
	for i := range n {
		p := runtime.Actor{UserUID: int64(100 + i), Name: "p" + string(rune('a'+i)), Role: runtime.RoleAdmin}
		if _, err := e.sql.ExecContext(e.ctx, `INSERT INTO be_users (uid, username, role) VALUES (?, ?, 'admin')`, p.UserUID, p.Name); err != nil {
			t.Fatal(err)
		}
		people = append(people, p)
	}
	run := e.startAndRun(admin)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, p := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.rt.Assign(e.ctx, p, run.UUID, runtime.Assignment{To: p.Name})
		}()
	}
	wg.Wait()
	won, taken := 0, 0
	for _, err := range errs {
		var re *runtime.Error
		switch {
		case err == nil:
			won++
		case errors.As(err, &re) && re.Code == runtime.CodeAlreadyAssigned:
			taken++
		default:
			t.Errorf("take: %v", err)
		}
	}
	if won != 1 || taken != n-1 {
		t.Fatalf("%d won, %d already_assigned; want 1 and %d", won, taken, n-1)
	}
	if r := e.run(run.UUID); r.Assignee < 100 {
		t.Errorf("assignee %d, want one of the takers", r.Assignee)
	}
}

// TestAutoAssignment: with auto: least_loaded and a pool of rita and bob, each new pause goes
// to the member holding fewer waiting runs (rita, then bob, then rita again); sam (support) in
// the pool is never chosen; round_robin spreads by the run's uuid over the eligible members
// only; a pool whose members may not decide leaves the run unassigned; an auto event and audit
// row record it.
func TestAutoAssignment(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	e.cfg.Assignment = runtime.AssignmentPolicy{Auto: runtime.AutoLeastLoaded, Pool: []string{"sam", "rita", "bob"}}
	e.saveConfig()
	var got []string
	for range 3 {
		r := e.startAndRun(admin)
		got = append(got, e.run(r.UUID).AssigneeName)
	}
	if strings.Join(got, ",") != "rita,bob,rita" {
		t.Errorf("least_loaded assigned %v, want rita, bob, rita", got)
	}
	e.cfg.Assignment = runtime.AssignmentPolicy{Auto: runtime.AutoRoundRobin, Pool: []string{"sam", "bob"}}
	e.saveConfig()
	for range 3 {
		r := e.startAndRun(admin)
		if name := e.run(r.UUID).AssigneeName; name != "bob" {
			t.Errorf("round_robin over bob alone assigned %q", name)
		}
	}
	e.cfg.Assignment = runtime.AssignmentPolicy{Auto: runtime.AutoRoundRobin, Pool: []string{"sam"}}
	e.saveConfig()
	r := e.startAndRun(admin)
	if a := e.run(r.UUID).Assignee; a != 0 {
		t.Errorf("a pool of support only assigned the run to %d", a)
	}
	var autos int
	if err := e.sql.QueryRowContext(e.ctx, `SELECT COUNT(*) FROM tx_runsdesk_audit WHERE action = 'assignment' AND outcome = 'auto' AND actor_name = 'system:assignment'`).Scan(&autos); err != nil {
		t.Fatal(err)
	}
	if autos != 6 {
		t.Errorf("%d automatic assignment audit rows, want 6", autos)
	}
}

// TestAssignedNotificationToThePerson: an email rule with to_people sends the assigned event
// to the new assignee's address (one outbox row, to rita's address only); an assignee without
// an address gets none, and a release sends nothing.
func TestAssignedNotificationToThePerson(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	if _, err := e.sql.ExecContext(e.ctx, `UPDATE be_users SET email = 'rita@example.com' WHERE username = 'rita'`); err != nil {
		t.Fatal(err)
	}
	e.cfg.Notify = []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyAssigned}, Channel: runtime.ChannelEmail, ToPeople: true}}
	e.saveConfig()
	run := e.startAndRun(admin)
	if _, err := e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{To: "rita"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Assign(e.ctx, reviewer, run.UUID, runtime.Assignment{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Assign(e.ctx, admin2, run.UUID, runtime.Assignment{To: "bob"}); err != nil {
		t.Fatal(err)
	}
	rows, err := e.sql.QueryContext(e.ctx, `SELECT event, target FROM tx_runsdesk_outbox WHERE run_uuid = ? ORDER BY uid`, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var event, target string
		if err := rows.Scan(&event, &target); err != nil {
			t.Fatal(err)
		}
		got = append(got, event+" "+target)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "assigned ") || !strings.Contains(got[0], `"to":["rita@example.com"]`) {
		t.Fatalf("outbox rows %q, want one assigned row to rita@example.com", got)
	}
}
