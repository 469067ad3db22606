package engine

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"

	"runsdesk/runtime"
)

// autoAssign gives the pause s just stored to a member of its configuration's pool
// (`assignment: {auto, pool}`) when the run is unassigned: a guarded AssignOnPause of its own,
// after the suspend committed, never inside it (no shared counter row to contend on).
// Eligible members are enabled admins and reviewers, not the run's starter under four-eyes,
// and admins only when the pause's tool is admin-only. Best effort: a failure is logged and
// the run stays unassigned.
func (r *Runtime) autoAssign(ctx context.Context, s *segment, adminOnly bool) {
	policy := s.cfg.Assignment
	if policy.Auto == "" || s.run.Assignee != 0 {
		return
	}
	run, err := r.store.FindByUUID(ctx, s.run.UUID)
	if err != nil || !run.Status.Waiting() || run.Assignee != 0 {
		if err != nil {
			r.log.Warn("automatic assignment skipped", "run", s.run.UUID, "err", err)
		}
		return
	}
	members := r.eligibleMembers(ctx, run, s.cfg, adminOnly)
	if len(members) == 0 {
		r.log.Warn("automatic assignment skipped: nobody in the pool may decide the run", "run", run.UUID)
		return
	}
	to, err := r.pick(ctx, policy.Auto, run, members)
	if err != nil {
		r.log.Warn("automatic assignment skipped", "run", run.UUID, "err", err)
		return
	}
	plan := r.assignmentPlan(runtime.AutoAssignActor(), run, to, runtime.AssignAuto, "")
	plan.Configuration = &s.cfg
	if _, _, err := r.store.Commit(ctx, *plan); err != nil && !errors.Is(err, runtime.ErrGuard) {
		r.log.Warn("automatic assignment not recorded", "run", run.UUID, "err", err)
	}
}

// eligibleMembers are the pool's people who may be given run, in pool order.
func (r *Runtime) eligibleMembers(ctx context.Context, run runtime.Run, cfg runtime.Configuration, adminOnly bool) []runtime.Actor {
	var out []runtime.Actor
	for _, name := range cfg.Assignment.Pool {
		p, err := r.store.PersonByUsername(ctx, name)
		switch {
		case err != nil, p.Disabled, p.Role != runtime.RoleAdmin && p.Role != runtime.RoleReviewer:
		case adminOnly && p.Role != runtime.RoleAdmin:
		case cfg.RequireSecondApprover && run.Status == runtime.StatusWaitingApproval && p.MayHaveStarted(run):
		default:
			out = append(out, p)
		}
	}
	return out
}

// pick chooses among members by strategy: round_robin by an FNV hash of the run's uuid,
// least_loaded the member holding the fewest waiting runs now (the first in pool order on a tie).
func (r *Runtime) pick(ctx context.Context, strategy string, run runtime.Run, members []runtime.Actor) (runtime.Actor, error) {
	if strategy != runtime.AutoLeastLoaded {
		h := fnv.New32a()
		h.Write([]byte(run.UUID))
		return members[int(h.Sum32()%uint32(len(members)))], nil
	}
	uids := make([]int64, len(members))
	for i, m := range members {
		uids[i] = m.UserUID
	}
	loads, err := r.store.AssignmentLoads(ctx, uids)
	if err != nil {
		return runtime.Actor{}, err
	}
	return slices.MinFunc(members, func(a, b runtime.Actor) int { return loads[a.UserUID] - loads[b.UserUID] }), nil
}
