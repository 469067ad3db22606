package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// Get returns the run (payload columns stripped) with its pause while waiting, and what the
// decision pipeline's checks of the decider say of actor deciding it (Pause.Gate).
func (r *Runtime) Get(ctx context.Context, actor runtime.Actor, uuid string) (runtime.RunView, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return runtime.RunView{}, e
	}
	if !runtime.MayAct(actor, runtime.ActionRead, run) {
		return runtime.RunView{}, newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	views, err := r.views(ctx, []runtime.Run{run}, wholePause, nil, &actor)
	if err != nil {
		return runtime.RunView{}, storeError(uuid, err)
	}
	return views[0], nil
}

// Events returns the run's events with sequence > after.
func (r *Runtime) Events(ctx context.Context, actor runtime.Actor, uuid string, after int) ([]runtime.Event, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return nil, e
	}
	if !runtime.MayAct(actor, runtime.ActionRead, run) {
		return nil, newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	evs, err := r.store.Events(ctx, run.UID, after)
	if err != nil {
		return nil, storeError(uuid, err)
	}
	return evs, nil
}

// Timeline returns the history of run, which the caller read through this Runtime (Get, or an
// Error's View), without reading the run again: the same events and rows as Events (after -1)
// and Governance, the calls its approvals edited, the calls it executed (as Calls) and the
// reasons its deciders gave, and the comments people wrote. A run actor may not read is
// RunNotFound.
func (r *Runtime) Timeline(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Timeline, error) {
	if !runtime.MayAct(actor, runtime.ActionRead, run) {
		return runtime.Timeline{}, newError(runtime.CodeRunNotFound, run.UUID, "no such run")
	}
	evs, err := r.store.Events(ctx, run.UID, -1)
	if err != nil {
		return runtime.Timeline{}, storeError(run.UUID, err)
	}
	rows, err := r.store.GovernanceEvents(ctx, run.UID, run.UUID)
	if err != nil {
		return runtime.Timeline{}, storeError(run.UUID, err)
	}
	edits, err := r.callEdits(ctx, run)
	if err != nil {
		return runtime.Timeline{}, err
	}
	decs, err := r.store.ReasonedDecisions(ctx, run.UID)
	if err != nil {
		return runtime.Timeline{}, storeError(run.UUID, err)
	}
	calls, err := r.executedCalls(ctx, run)
	if err != nil {
		return runtime.Timeline{}, err
	}
	comments, err := r.comments(ctx, run, evs)
	if err != nil {
		return runtime.Timeline{}, err
	}
	return runtime.Timeline{Events: evs, Governance: rows, Edits: edits, Calls: calls, Reasons: reasonsByEvent(evs, decs), Comments: comments}, nil
}

// comments are run's comments by the sequence of their event, read only when evs has a
// comment event.
func (r *Runtime) comments(ctx context.Context, run runtime.Run, evs []runtime.Event) (map[int]runtime.Comment, error) {
	if !slices.ContainsFunc(evs, func(e runtime.Event) bool { return e.Kind == runtime.EventComment }) {
		return nil, nil
	}
	list, err := r.store.Comments(ctx, run.UID, run.UUID)
	if err != nil {
		return nil, storeError(run.UUID, err)
	}
	out := make(map[int]runtime.Comment, len(list))
	for _, c := range list {
		out[c.Sequence] = c
	}
	return out, nil
}

// reasonsByEvent places each decision's reason on its event: a decision and its event are
// written by one claim with the same kind and time, so each decision takes the first event of
// its kind and time that no earlier decision took.
func reasonsByEvent(evs []runtime.Event, decs []runtime.Decision) map[int]string {
	if len(decs) == 0 {
		return nil
	}
	out := make(map[int]string, len(decs))
	next := 0
	for _, d := range decs {
		for i := next; i < len(evs); i++ {
			if evs[i].Kind == d.Kind && evs[i].Crdate == d.Crdate {
				out[evs[i].Sequence] = d.Reason
				next = i + 1
				break
			}
		}
	}
	return out
}

// Inbox returns one page of waiting runs with their pauses, read as a list card shows them:
// the transcript is skipped, and Digest is set only on approval pauses actor may decide (an
// input pause's digest comes with Get, beside its form). configurations, when not nil, are
// the catalog's configurations (Catalog.Configurations) as the caller read them for this
// page: each pause's offered tools come from them, and a run whose configuration is not among
// them counts as having none; nil reads each configuration of the page from the catalog. A
// store failure is an error, never an empty page; one unreadable run is listed as unreadable,
// not hidden.
func (r *Runtime) Inbox(ctx context.Context, actor runtime.Actor, q runtime.WaitingQuery, configurations []runtime.Configuration) ([]runtime.RunView, error) {
	if !runtime.MayAct(actor, runtime.ActionRead, runtime.Run{}) {
		return nil, newError(runtime.CodeRunAccessDenied, "", "you may not see the inbox")
	}
	runs, err := r.store.ListWaiting(ctx, q)
	if err != nil {
		return nil, storeError("", err)
	}
	return r.views(ctx, runs, newCardPauses(actor, r.pauses).read, configurations, nil)
}

// Recent returns one page of finished runs, newest first.
func (r *Runtime) Recent(ctx context.Context, actor runtime.Actor, q runtime.RecentQuery) ([]runtime.Run, error) {
	if !runtime.MayAct(actor, runtime.ActionRead, runtime.Run{}) {
		return nil, newError(runtime.CodeRunAccessDenied, "", "you may not see runs")
	}
	runs, err := r.store.ListRecent(ctx, q)
	if err != nil {
		return nil, storeError("", err)
	}
	for i := range runs {
		runs[i] = stripped(runs[i])
	}
	return runs, nil
}

// List returns one page of runs of a group, each as Get shows it (a waiting run with its whole
// pause and digest), for the API's run list. The page's configurations come from the
// catalog's display cache, so a page costs the list's one statement.
func (r *Runtime) List(ctx context.Context, actor runtime.Actor, q runtime.RunsQuery) ([]runtime.RunView, error) {
	if !runtime.MayAct(actor, runtime.ActionRead, runtime.Run{}) {
		return nil, newError(runtime.CodeRunAccessDenied, "", "you may not see runs")
	}
	runs, err := r.store.ListRuns(ctx, q)
	if err != nil {
		return nil, storeError("", err)
	}
	configurations, err := r.DisplayConfigurations(ctx)
	if err != nil {
		return nil, storeError("", err)
	}
	return r.views(ctx, runs, wholePause, configurations, &actor)
}

// pauseReader reads a waiting run's pause and the digest its view carries.
type pauseReader func(run runtime.Run) (runtime.PauseState, string, *runtime.Error)

// wholePause reads the whole state, rehydrated as a decision rehydrates it, and its digest.
func wholePause(run runtime.Run) (runtime.PauseState, string, *runtime.Error) {
	st, e := rehydrate(run, pauseKind(run.Status))
	if e != nil {
		return runtime.PauseState{}, "", e
	}
	return st.PauseState, pauseDigest(st.PauseState), nil
}

// cardPauses reads pauses as a list card shows them to actor, through the runtime's pause
// memo (which also remembers whether an input pause's schema is usable).
type cardPauses struct {
	actor runtime.Actor
	memo  *pauseMemo
}

func newCardPauses(actor runtime.Actor, memo *pauseMemo) *cardPauses {
	return &cardPauses{actor: actor, memo: memo}
}

// read reads what a list card shows, with the digest of an approval pause the actor may
// decide (the one decision a card carries).
func (c *cardPauses) read(run runtime.Run) (runtime.PauseState, string, *runtime.Error) {
	kind := pauseKind(run.Status)
	r := c.memo.read(run.SuspendedState)
	if r.err != nil {
		return r.pause, "", unreadableState(run, r.err)
	}
	if e := pauseFits(r.pause, run, kind, func(json.RawMessage) bool { return r.inputUsable() }); e != nil {
		return r.pause, "", e
	}
	if kind != contApproval || !runtime.MayAct(c.actor, runtime.ActionApprove, run) {
		return r.pause, "", nil
	}
	return r.pause, r.approvalDigest(), nil
}

// viewerGate is what the run page shows viewer may do to run's pause p (Pause.Gate): the
// decisionGate of a submission on an input pause; on an approval pause that of approving (a
// denial is never gated) and the calls viewer may edit (editableCall against reg and the
// tools cfg offers).
func viewerGate(viewer runtime.Actor, run runtime.Run, cfg runtime.Configuration, p runtime.PauseState, reg *tool.Registry, offered map[string]bool) runtime.DecisionGate {
	if p.IsInputPause() {
		return decisionGate(viewer, run, cfg, p, reg, input{})
	}
	g := decisionGate(viewer, run, cfg, p, reg, approval{runtime.ApprovalDecision{Approved: true}})
	if g.Access != nil {
		return g
	}
	for _, c := range p.PendingCalls {
		if _, _, e := editableCall(viewer, run.UUID, p, reg, offered, c.ID); e == nil {
			g.Editable = append(g.Editable, c.ID)
		}
	}
	return g
}

func pauseKind(s runtime.Status) string {
	if s == runtime.StatusWaitingInput {
		return contInput
	}
	return contApproval
}

// views describes runs, reading each waiting run's pause with read and its configuration from
// configurations (see Inbox); with a viewer, each pause's Gate is decisionGate's for them.
func (r *Runtime) views(ctx context.Context, runs []runtime.Run, read pauseReader, configurations []runtime.Configuration, viewer *runtime.Actor) ([]runtime.RunView, error) {
	out := make([]runtime.RunView, len(runs))
	tools := newPageTools(r, configurations)
	for i, run := range runs {
		out[i].Run = stripped(run)
		if !run.Status.Waiting() {
			continue
		}
		p, digest, e := read(run)
		if e != nil {
			out[i].Unreadable = e.Message
			continue
		}
		reg, offered, err := tools.of(ctx, run.ConfigurationUID)
		if err != nil {
			return nil, storeError(run.UUID, err)
		}
		cfg := tools.cfgs[run.ConfigurationUID]
		adHocCfg, adHocReg, err := withAdHoc(cfg, reg, p)
		if err != nil {
			out[i].Unreadable = "the request's ad hoc tool is unusable"
			continue
		}
		if adHocReg != reg {
			cfg, reg, offered = adHocCfg, adHocReg, offeredSet(adHocCfg, adHocReg)
		}
		out[i].Pause = pauseOf(run, p, digest, reg, offered, tools.policy[run.ConfigurationUID], r.pins)
		if p.IsInputPause() {
			if sch, err := r.schemas.Compile(p.InputSchema); err == nil {
				withForm(out[i].Pause, sch)
			}
		}
		if viewer != nil {
			out[i].Pause.Gate = viewerGate(*viewer, run, cfg, p, reg, offered)
			if !p.IsInputPause() {
				if out[i].Pause.Quorum, err = r.pauseVotes(ctx, run, cfg, p, reg, *viewer); err != nil {
					return nil, storeError(run.UUID, err)
				}
			}
		}
	}
	return out, nil
}

// withForm completes the view p of an input pause with its compiled schema sch: the form when
// sch yields a form field; else, on a remote server's request for input, the confirmation it
// is (answered by accepting {}). A pause whose schema does not compile gets neither.
func withForm(p *runtime.Pause, sch *schema.Schema) {
	if sch.HasForm() {
		p.Form = sch
		return
	}
	if p.Elicitation != nil {
		p.Elicitation.Confirmation = true
	}
}

// pageTools loads, once per page, the tool registry as pages show it (displayToolset) and each
// configuration's offered tools.
type pageTools struct {
	r   *Runtime
	reg *tool.Registry
	// known are the page's configurations by uid when the caller read them (nil: read each).
	known   map[int64]runtime.Configuration
	offered map[int64]map[string]bool
	policy  map[int64]runtime.PolicyPin
	// cfgs are the configurations found, by uid.
	cfgs map[int64]runtime.Configuration
}

func newPageTools(r *Runtime, configurations []runtime.Configuration) *pageTools {
	t := &pageTools{r: r, offered: map[int64]map[string]bool{}, policy: map[int64]runtime.PolicyPin{}, cfgs: map[int64]runtime.Configuration{}}
	if configurations != nil {
		t.known = make(map[int64]runtime.Configuration, len(configurations))
		for _, c := range configurations {
			t.known[c.UID] = c
		}
	}
	return t
}

// of returns the registry and the tools configuration uid offers (none when it is gone).
func (t *pageTools) of(ctx context.Context, uid int64) (*tool.Registry, map[string]bool, error) {
	if t.reg == nil {
		reg, err := t.r.displayToolset(ctx)
		if err != nil {
			return nil, nil, err
		}
		t.reg = reg
	}
	offered, ok := t.offered[uid]
	if ok {
		return t.reg, offered, nil
	}
	cfg, found, err := t.configuration(ctx, uid)
	if err != nil {
		return nil, nil, err
	}
	if found {
		offered, t.policy[uid], t.cfgs[uid] = offeredSet(cfg, t.reg), policyOf(cfg), cfg
	}
	t.offered[uid] = offered
	return t.reg, offered, nil
}

// configuration is configuration uid, from the caller's list when there is one, else from the
// catalog; found is false when it is gone.
func (t *pageTools) configuration(ctx context.Context, uid int64) (runtime.Configuration, bool, error) {
	if t.known != nil {
		cfg, ok := t.known[uid]
		return cfg, ok, nil
	}
	cfg, err := t.r.catalog.ConfigurationByUID(ctx, uid)
	switch {
	case err == nil:
		return cfg, true, nil
	case errors.Is(err, runtime.ErrNotFound):
		return runtime.Configuration{}, false, nil
	}
	return runtime.Configuration{}, false, err
}

// pauseOf is the view of run's pause st: its tools as reg has them (offered by the run's
// configuration, whose decision policy is policy) and the definitions a decision made from
// it is bound to, with how they changed since the pause.
func pauseOf(run runtime.Run, st runtime.PauseState, digest string, reg *tool.Registry, offered map[string]bool, policy runtime.PolicyPin, pins *pinMemo) *runtime.Pause {
	names := st.ToolNames()
	current := pins.current(names, reg, policy)
	p := &runtime.Pause{
		Status: run.Status, PendingCalls: st.PendingCalls, Previews: st.CallPreviews,
		InputTool: st.InputTool(), Digest: digest, Tools: make(map[string]runtime.ToolInfo, len(names)), Guardrails: st.GuardrailApprovals, ModelText: st.ModelText,
		PinDigest: current.digest, Changes: runtime.Changes(st.Definitions, current.pin), Edit: st.Edit,
	}
	if st.IsInputPause() {
		p.InputSchema = st.InputSchema
	}
	if e := st.Elicitation; e != nil {
		p.Elicitation = &runtime.PauseElicitation{Message: e.Message, ExpiresAt: e.ExpiresAt}
	}
	for _, name := range names {
		t, ok := reg.Get(name)
		info := runtime.ToolInfo{Registered: ok, Offered: offered[name], Effect: tool.EffectNonIdempotentWrite, NeedsApproval: true}
		if ok {
			info.Effect, info.AdminOnly, info.NeedsApproval = tool.EffectOf(t), tool.IsAdminOnly(t), tool.NeedsApproval(t)
			info.Editable = tool.IsEditable(t)
		}
		p.Tools[name] = info
	}
	return p
}
