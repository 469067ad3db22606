package engine

import (
	"context"
	"strings"

	"runsdesk/runtime"
)

// governanceNote is what a planned refusal records about itself: the row its step writes,
// without the run's and tool's fields, which the segment fills in (segment.governance). It is
// stored with the plan, so a recovered segment writes the row when it stores the step.
type governanceNote struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail,omitempty"`
}

// refused is the plan step that answers c with the refusal message and records note.
func refused(c runtime.PendingCall, message string, note governanceNote) planStep {
	return planStep{Call: c, Refusal: message, Governance: &note}
}

// governance is the row of note about a call of tool in this segment's run; the store gives it
// the sequence and time of the step's event it rides on.
func (s *segment) governance(note governanceNote, tool string) *runtime.GovernanceEvent {
	return &runtime.GovernanceEvent{
		Run: s.run.UID, CorrelationID: s.run.UUID, Decision: note.Decision, Reason: note.Reason,
		Provider: s.cfg.Provider.Kind, Model: s.cfg.Provider.Model, ConfigurationIdentifier: s.run.ConfigurationIdentifier,
		BeUser: s.run.BeUser, ToolName: tool, Detail: note.Detail,
	}
}

// govern attaches the governance row of st's refusal, if it records one, to the step's event,
// which call has just recorded: the row is stored with the step, in the same transaction,
// exactly when the step is.
func (s *segment) govern(st planStep) {
	if st.Governance == nil || len(s.pending) == 0 {
		return
	}
	s.governStep(s.governance(*st.Governance, st.Call.Function.Name))
}

// governStep adds g to the governance rows of the segment's last recorded step, so the row is
// stored with that step.
func (s *segment) governStep(g *runtime.GovernanceEvent) {
	last := &s.pending[len(s.pending)-1]
	last.Governance = append(last.Governance, *g)
}

// gateDenial is the governance row of a decider refused by the tool gate: tool (or "") and
// the reason, for the gate of kind ("approver" or "submitter").
func gateDenial(kind, tool, reason string) *runtime.GovernanceEvent {
	return &runtime.GovernanceEvent{Decision: runtime.GovernanceToolDenied, Reason: reason, ToolName: tool, Detail: "gate=" + kind, Sequence: runtime.NoSequence}
}

// describeGateDenial completes the governance row g of a decider the tool gate refused with
// the run, its configuration and the decider (a service account or standing approvals are
// named in Detail: serviceAccount=<name>, rule=<names>).
func (r *Runtime) describeGateDenial(g *runtime.GovernanceEvent, actor runtime.Actor, run runtime.Run, cfg runtime.Configuration) {
	g.Run, g.CorrelationID, g.ConfigurationIdentifier, g.BeUser = run.UID, run.UUID, run.ConfigurationIdentifier, actor.UserUID
	g.Provider, g.Model, g.Crdate = cfg.Provider.Kind, cfg.Provider.Model, r.unix()
	switch {
	case actor.ServiceName() != "":
		g.Detail = strings.Join([]string{g.Detail, "serviceAccount=" + actor.ServiceName()}, "; ")
	case actor.Rule != nil:
		g.Detail = strings.Join([]string{g.Detail, "rule=" + strings.Join(actor.Rule.Names, ",")}, "; ")
	}
}

// recordGateDenial writes the governance row of a decider refusal, when e carries one, after
// the run's last step, in its own write, best-effort: no run is waiting on it (the run is
// unchanged by the refusal), and the refusal is answered whether or not the row is stored; a
// failure is logged.
func (r *Runtime) recordGateDenial(ctx context.Context, e *runtime.Error) {
	g := e.GateDenial
	if g == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if last, err := r.store.MaxSequence(ctx, g.Run); err == nil {
		g.Sequence = last
	}
	if err := r.store.AppendGovernance(ctx, *g); err != nil {
		r.log.Warn("governance row not recorded", "run", g.CorrelationID, "decision", g.Decision, "reason", g.Reason, "err", err)
	}
}

// Governance returns the run's governance rows (by run uid or correlation id), oldest first.
func (r *Runtime) Governance(ctx context.Context, actor runtime.Actor, uuid string) ([]runtime.GovernanceEvent, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return nil, e
	}
	if !runtime.MayAct(actor, runtime.ActionRead, run) {
		return nil, newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	rows, err := r.store.GovernanceEvents(ctx, run.UID, run.UUID)
	if err != nil {
		return nil, storeError(uuid, err)
	}
	return rows, nil
}
