package runtime

import (
	"context"
	"strings"
)

// Governance decisions runsdesk writes to the governance log (upstream's values).
const (
	// GovernanceToolDenied is a gate refusing a tool: a call not offered to the run or no
	// longer permitted, the calls of a denied turn, or a decider the tool gate refuses.
	GovernanceToolDenied = "tool_denied"
	// GovernanceWriteUnapproved is an input resume meeting an approval-bound call, which it
	// refuses.
	GovernanceWriteUnapproved = "write_unapproved"
)

// Governance reasons: why a gate refused (GovernanceEvent.Reason).
const (
	ReasonToolNotOffered             = "toolNotOffered"
	ReasonToolNoLongerPermitted      = "toolNoLongerPermitted"
	ReasonDeniedByOperator           = "deniedByOperator"
	ReasonInputResumeWithoutApproval = "inputResumeWithoutApproval"
	ReasonToolNotRegistered          = "toolNotRegistered"
	ReasonToolAdminOnly              = "toolAdminOnly"
	ReasonDeciderDisabled            = "deciderDisabled"
	ReasonServiceAccountSubmit       = "serviceAccountMayNotSubmit"
	ReasonServiceAccountWrite        = "serviceAccountMayNotApproveWrite"
)

// MaxGovernanceRows bounds how many governance rows Store.GovernanceEvents returns for a run.
const MaxGovernanceRows = 1000

// NoSequence is GovernanceEvent.Sequence of a row that follows no known step.
const NoSequence = -1

// GovernanceEvent is one row of the governance log (tx_nrllm_governance_event): a policy
// decision about a run, with names and codes only, never content (no arguments, results,
// prompts or submitted values). Run and CorrelationID (the run's uuid) both name the run;
// Sequence is the step the row follows: the step it was written with, or for a decider
// refused while the run waited the run's last step then (NoSequence when unknown). BeUser is the run's owner
// for a refusal inside the run, the refused decider for a decider gate (0 for a service
// account, which Detail then names). Detail is "key=value" pairs joined by "; ".
type GovernanceEvent struct {
	UID                     int64
	Run                     int64
	CorrelationID           string
	Sequence                int
	Decision                string
	Reason                  string
	Provider                string
	Model                   string
	ConfigurationIdentifier string
	BeUser                  int64
	ToolName                string
	Guardrail               string
	Detail                  string
	Crdate                  int64
}

// governanceNote is what a planned refusal records about itself: the row its step writes,
// without the run's and tool's fields, which the segment fills in (segment.governance). It is
// stored with the plan, so a recovered segment writes the row when it stores the step.
type governanceNote struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail,omitempty"`
}

// refused is the plan step that answers c with the refusal message and records note.
func refused(c PendingCall, message string, note governanceNote) planStep {
	return planStep{Call: c, Refusal: message, Governance: &note}
}

// governance is the row of note about a call of tool in this segment's run; the store gives it
// the sequence and time of the step's event it rides on.
func (s *segment) governance(note governanceNote, tool string) *GovernanceEvent {
	return &GovernanceEvent{
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
	s.pending[len(s.pending)-1].Governance = s.governance(*st.Governance, st.Call.Function.Name)
}

// gateDenial is the governance row of a decider refused by the tool gate: tool (or "") and
// the reason, for the gate of kind ("approver" or "submitter").
func gateDenial(kind, tool, reason string) *GovernanceEvent {
	return &GovernanceEvent{Decision: GovernanceToolDenied, Reason: reason, ToolName: tool, Detail: "gate=" + kind, Sequence: NoSequence}
}

// describeGateDenial completes the governance row g of a decider the tool gate refused with
// the run, its configuration and the decider (a service account is named in Detail).
func (r *Runtime) describeGateDenial(g *GovernanceEvent, actor Actor, run Run, cfg Configuration) {
	g.Run, g.CorrelationID, g.ConfigurationIdentifier, g.BeUser = run.UID, run.UUID, run.ConfigurationIdentifier, actor.UserUID
	g.Provider, g.Model, g.Crdate = cfg.Provider.Kind, cfg.Provider.Model, r.unix()
	if svc := actor.ServiceName(); svc != "" {
		g.Detail = strings.Join([]string{g.Detail, "serviceAccount=" + svc}, "; ")
	}
}

// recordGateDenial writes the governance row of a decider refusal, when e carries one, after
// the run's last step, in its own write, best-effort: no run is waiting on it (the run is
// unchanged by the refusal), and the refusal is answered whether or not the row is stored; a
// failure is logged.
func (r *Runtime) recordGateDenial(ctx context.Context, e *Error) {
	g := e.governance
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
func (r *Runtime) Governance(ctx context.Context, actor Actor, uuid string) ([]GovernanceEvent, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return nil, e
	}
	if !MayAct(actor, ActionRead, run) {
		return nil, newError(CodeRunNotFound, uuid, "no such run")
	}
	rows, err := r.store.GovernanceEvents(ctx, run.UID, run.UUID)
	if err != nil {
		return nil, storeError(uuid, err)
	}
	return rows, nil
}
