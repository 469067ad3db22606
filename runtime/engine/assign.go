package engine

import (
	"context"
	"errors"
	"fmt"

	"runsdesk/runtime"
)

// maxAssignAttempts bounds how often Assign reads the run again when its pause changed (not its
// assignee) between the read and the write.
const maxAssignAttempts = 3

// Assign changes who holds waiting run uuid (runtime.Assignment) and returns the run as
// changed: a person taking it for themself, an admin (or a service account with the approve
// scope, or a reviewer under `assignment: {reviewers_may_assign: true}`) assigning it to an
// enabled admin or reviewer, or releasing it (the assignee always may). A run someone else
// holds is refused AlreadyAssigned, naming them, unless an admin forces the change. It is one
// record-only commit plan: the pause and the assignee as read, the assignment event and its
// audit row; of concurrent changes from one assignee exactly one wins.
func (r *Runtime) Assign(ctx context.Context, actor runtime.Actor, uuid string, a runtime.Assignment) (runtime.Run, error) {
	changed, _, err := r.commitRecord(ctx, uuid, maxAssignAttempts, func(run runtime.Run) (*runtime.CommitPlan, error) {
		if actor.Role != runtime.RoleConsole && !runtime.MayKnow(actor, runtime.ActionApprove, run) {
			return nil, newError(runtime.CodeRunNotFound, uuid, "no such run")
		}
		plan, e := r.assignPlan(ctx, actor, run, a)
		return plan, errOrNil(e)
	})
	if err != nil {
		return runtime.Run{}, err
	}
	return stripped(changed), nil
}

// commitRecord commits the record-only plan that plan makes of run uuid as read (nil: nothing
// to write; the run is returned as read), reading the run again when the plan's guard missed
// because the pause moved on meanwhile, at most attempts reads; a store failure is
// RunStateUnavailable (wrapping it), as is a run that kept changing.
func (r *Runtime) commitRecord(ctx context.Context, uuid string, attempts int, plan func(runtime.Run) (*runtime.CommitPlan, error)) (runtime.Run, runtime.Event, error) {
	for attempt := 1; ; attempt++ {
		run, e := r.loadRun(ctx, uuid)
		if e != nil {
			return runtime.Run{}, runtime.Event{}, e
		}
		p, err := plan(run)
		if err != nil || p == nil {
			return run, runtime.Event{}, err
		}
		changed, ev, err := r.store.Commit(ctx, *p)
		switch {
		case err == nil:
			return changed, ev, nil
		case !errors.Is(err, runtime.ErrGuard):
			return runtime.Run{}, runtime.Event{}, storeError(uuid, err)
		case attempt == attempts:
			return runtime.Run{}, runtime.Event{}, newError(runtime.CodeRunStateUnavailable, uuid, "the run kept changing while it was written; try again")
		}
	}
}

// assignPlan is the plan that makes a on run for actor, nil when the run already is as a
// asks, or why it may not be made.
func (r *Runtime) assignPlan(ctx context.Context, actor runtime.Actor, run runtime.Run, a runtime.Assignment) (*runtime.CommitPlan, *runtime.Error) {
	console := actor.Role == runtime.RoleConsole
	if !console && !runtime.MayAct(actor, runtime.ActionApprove, run) && !runtime.MayAct(actor, runtime.ActionSubmit, run) {
		return nil, newError(runtime.CodeRunAccessDenied, run.UUID, "%s may not assign runs", actorLabel(actor))
	}
	if !run.Status.Waiting() {
		return nil, newError(runtime.CodeInvalidRequest, run.UUID, "only a waiting run can be assigned; this one is %s", run.Status)
	}
	var to runtime.Actor
	if a.To != "" {
		var e *runtime.Error
		if to, e = r.assignee(ctx, run, a.To); e != nil {
			return nil, e
		}
	}
	holder := run.Assignee
	if holder == to.UserUID {
		return nil, nil
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return nil, storeError(run.UUID, err)
	}
	others := holder != 0 && holder != actor.UserUID
	if others && !a.Force {
		e := newError(runtime.CodeAlreadyAssigned, run.UUID, "the run is assigned to %s", run.AssigneeName)
		e.Holder = run.AssigneeName
		return nil, e
	}
	outcome, e := mayAssign(actor, run, cfg, a, to)
	if e != nil {
		return nil, e
	}
	if others {
		if actor.Role != runtime.RoleAdmin && !console {
			return nil, newError(runtime.CodeRunAccessDenied, run.UUID, "only an admin in the browser or the CLI may take a run from its assignee")
		}
		outcome = runtime.AssignForced
	}
	plan := r.assignmentPlan(actor, run, to, outcome, a.IP)
	if err == nil {
		plan.Configuration = &cfg
	}
	return plan, nil
}

// assignmentPlan is the record-only plan giving run (as read) to to (UserUID 0: nobody) by
// actor: the assignee change, the assignment event and the audit row with outcome.
func (r *Runtime) assignmentPlan(actor runtime.Actor, run runtime.Run, to runtime.Actor, outcome, ip string) *runtime.CommitPlan {
	now := r.unix()
	payload := map[string]any{"assignee": to.UserUID, "previous": run.Assignee, "by": actor.UserUID}
	if svc := actor.ServiceName(); svc != "" {
		payload["byService"] = svc
	}
	switch outcome {
	case runtime.AssignForced:
		payload["forced"] = true
	case runtime.AssignAuto:
		payload["auto"] = true
	}
	plan := &runtime.CommitPlan{
		Read: run, Now: now,
		Assign: &runtime.AssignChange{From: run.Assignee, To: to.UserUID, ToName: to.Name},
		Event:  runtime.NewEvent{Run: run.UID, Kind: runtime.EventAssignment, Payload: mustJSON(payload), Now: now},
		Audit: &runtime.AuditRecord{Actor: actor, AuditNote: runtime.AuditNote{Action: runtime.EventAssignment, IP: ip, Outcome: outcome,
			Reason: assignReason(run, to)}},
	}
	if to.UserUID != 0 {
		plan.Notify, plan.NotifyPeople = runtime.NotifyAssigned, addresses(to)
	}
	return plan
}

// assignee is the person named username as one a run may be assigned to: an enabled admin or
// reviewer.
func (r *Runtime) assignee(ctx context.Context, run runtime.Run, username string) (runtime.Actor, *runtime.Error) {
	p, err := r.store.PersonByUsername(ctx, username)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return runtime.Actor{}, newError(runtime.CodeInvalidRequest, run.UUID, "no person is named %q", username)
	case err != nil:
		return runtime.Actor{}, storeError(run.UUID, err)
	case p.Disabled:
		return runtime.Actor{}, newError(runtime.CodeInvalidRequest, run.UUID, "%s is disabled", p.Name)
	case p.Role != runtime.RoleAdmin && p.Role != runtime.RoleReviewer:
		return runtime.Actor{}, newError(runtime.CodeInvalidRequest, run.UUID, "%s is %s and may not decide runs", p.Name, p.Role)
	}
	return p, nil
}

// mayAssign is whether actor, who may decide run, may give it to (to.UserUID 0: release it)
// under cfg, and the audit outcome: a person takes it for themself or releases their own; an
// admin or a service account with the approve scope assigns and releases for others, a
// reviewer only under reviewers_may_assign.
func mayAssign(actor runtime.Actor, run runtime.Run, cfg runtime.Configuration, a runtime.Assignment, to runtime.Actor) (string, *runtime.Error) {
	if a.Force && actor.Role == runtime.RoleService {
		return "", newError(runtime.CodeRunAccessDenied, run.UUID, "a service account may not force an assignment")
	}
	self := actor.UserUID > 0 && (to.UserUID == actor.UserUID || to.UserUID == 0 && run.Assignee == actor.UserUID)
	switch {
	case self && to.UserUID == 0:
		return runtime.AssignReleased, nil
	case self:
		return runtime.AssignTaken, nil
	case actor.Role == runtime.RoleAdmin, actor.Role == runtime.RoleService, actor.Role == runtime.RoleConsole,
		actor.Role == runtime.RoleReviewer && cfg.Assignment.ReviewersMayAssign:
		if to.UserUID == 0 {
			return runtime.AssignReleased, nil
		}
		return runtime.AssignAssigned, nil
	}
	return "", newError(runtime.CodeRunAccessDenied, run.UUID, "a reviewer may take a run only for themself (this configuration does not set assignment: {reviewers_may_assign: true})")
}

// assignReason is the audit row's words for giving run to to.
func assignReason(run runtime.Run, to runtime.Actor) string {
	from := "nobody"
	if run.Assignee != 0 {
		from = run.AssigneeName
	}
	if to.UserUID == 0 {
		return fmt.Sprintf("released from %s", from)
	}
	return fmt.Sprintf("from %s to %s", from, to.Name)
}

// errOrNil is e as an error, nil when e is nil (a nil *runtime.Error is not a nil error).
func errOrNil(e *runtime.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// addresses are the e-mail addresses of people, those who have one.
func addresses(people ...runtime.Actor) []string {
	var out []string
	for _, p := range people {
		if p.Email != "" {
			out = append(out, p.Email)
		}
	}
	return out
}
