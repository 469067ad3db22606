package engine

import (
	"context"
	"slices"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// ruleHold is how long the `waiting` notifications of a turn standing approvals cover are
// held back at suspend: the rule's claim drops them, a refusal releases them at once, and a
// process that dies between the two leaves them due after the hold.
const ruleHold = 60

// turnRules is the decider of the standing approvals in force that cover every pending call
// of the approval pause st the segment s is about to store (matchRules); ok is false when
// none do, or the rules cannot be read (the turn waits for a person).
func (r *Runtime) turnRules(ctx context.Context, s *segment, st runtime.PauseState) (runtime.RuleDecider, bool) {
	if r.rules == nil {
		return runtime.RuleDecider{}, false
	}
	rules, err := r.rules.ActiveRules(ctx, st.ToolNames(), r.unix())
	if err != nil {
		r.log.Warn("standing approvals unreadable; the turn waits for a person", "run", s.run.UUID, "err", err)
		return runtime.RuleDecider{}, false
	}
	return r.matchRules(st.PendingCalls, rules, s.cfg, s.reg)
}

// approveByRule is the automatic approval, by the rule actor rule:<name>, of the turn the
// segment s has just paused for approval (st, stored at since) that decider's rules cover:
// through the one decision pipeline, which checks it as any approver (four-eyes against the
// rules' author, the decider gate, the pinned definitions) and counts each rule's use and
// drops the pause's held `waiting` notifications in the claim's transaction. When the
// pipeline refuses it (a rule used up meanwhile, say), or counts it as one vote of a turn that
// needs several, the run keeps waiting for people and its `waiting` notifications are
// released.
func (r *Runtime) approveByRule(ctx context.Context, s *segment, st runtime.PauseState, decider runtime.RuleDecider, since int64) {
	names := strings.Join(decider.Names, ",")
	out, err := r.decide(ctx, runtime.RuleActor(decider), s.run.UUID, approval{runtime.ApprovalDecision{
		Approved: true, TurnDigest: pauseDigest(st),
		Audit: &runtime.AuditNote{Action: "approval", Outcome: "approved", Reason: "standing approval " + names},
	}})
	switch {
	case err == nil && out.Resumed:
		r.log.Info("turn approved by standing approval", "run", s.run.UUID, "rules", names)
		return
	case err == nil:
		r.log.Info("standing approval counted as one vote; the turn waits for people's", "run", s.run.UUID, "rules", names,
			"votes", out.Votes, "required", out.Required)
	default:
		r.log.Info("standing approval did not decide; the turn waits for a person", "run", s.run.UUID, "rules", names, "err", err)
	}
	if err := r.rules.ReleaseWaiting(ctx, s.run.UID, since, r.unix()); err != nil {
		r.log.Error("waiting notifications not released; they fall due after the hold", "run", s.run.UUID, "err", err)
	}
}

// matchRules finds for each call the first rule (by name) in force for it: its tool, its
// configuration ("" = any) offering the tool, allow_writes when the tool declares a
// non-idempotent write, and arguments that validate against when. The decider is the rules
// used, in call order; its author is theirs when all share one, else unknown (0). ok is
// false when any call has no rule.
func (r *Runtime) matchRules(calls []runtime.PendingCall, rules []runtime.StandingApproval, cfg runtime.Configuration, reg *tool.Registry) (runtime.RuleDecider, bool) {
	slices.SortFunc(rules, func(a, b runtime.StandingApproval) int { return strings.Compare(a.Name, b.Name) })
	offered := offeredSet(cfg, reg)
	var d runtime.RuleDecider
	authors := map[int64]bool{}
	for _, c := range calls {
		rule, ok := r.ruleFor(c, rules, cfg, reg, offered)
		if !ok {
			return runtime.RuleDecider{}, false
		}
		if !slices.Contains(d.Names, rule.Name) {
			d.Names = append(d.Names, rule.Name)
		}
		authors[rule.Author] = true
	}
	if len(authors) == 1 {
		for a := range authors {
			d.Author = a
		}
	}
	return d, len(d.Names) > 0
}

// ruleFor is the first of rules that covers call c (see matchRules).
func (r *Runtime) ruleFor(c runtime.PendingCall, rules []runtime.StandingApproval, cfg runtime.Configuration, reg *tool.Registry, offered map[string]bool) (runtime.StandingApproval, bool) {
	name := c.Function.Name
	t, known := reg.Get(name)
	if !known || !offered[name] || c.ArgumentsError != "" {
		return runtime.StandingApproval{}, false
	}
	var args map[string]any
	if err := unmarshalNumber(c.Function.Arguments, &args); err != nil || args == nil {
		return runtime.StandingApproval{}, false
	}
	for _, rule := range rules {
		switch {
		case rule.Tool != name, rule.Configuration != "" && rule.Configuration != cfg.Identifier:
			continue
		case tool.EffectOf(t) == tool.EffectNonIdempotentWrite && !rule.AllowWrites:
			continue
		}
		sch, err := r.schemas.Compile(rule.When)
		if err != nil {
			r.log.Warn("standing approval's when does not compile", "rule", rule.Name, "err", err)
			continue
		}
		if len(sch.Validate(args)) == 0 {
			return rule, true
		}
	}
	return runtime.StandingApproval{}, false
}
