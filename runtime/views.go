package runtime

import (
	"context"
	"encoding/json"
	"errors"

	"runsdesk/runtime/tool"
)

// Pause describes what a waiting run waits for, derived from its stored state: the pending
// calls (with previews), for an input pause the target tool and its schema, and the digest a
// decision must echo. Tools describes each pending call's tool as registered now.
type Pause struct {
	Status       Status
	PendingCalls []PendingCall
	Previews     []CallPreview
	InputTool    string
	InputSchema  json.RawMessage
	Digest       string
	Tools        map[string]ToolInfo
}

// ToolInfo is what the desk shows about a pending call's tool.
type ToolInfo struct {
	Registered    bool
	Offered       bool
	Effect        tool.Effect
	AdminOnly     bool
	NeedsApproval bool
}

// RunView is a run as callers may see it: payload columns stripped; for a waiting run its
// Pause, or Unreadable with a reason when the state cannot be read (the run is still listed).
type RunView struct {
	Run        Run
	Pause      *Pause
	Unreadable string
}

// Get returns the run (Status of upstream §3.1) with its pause while waiting.
func (r *Runtime) Get(ctx context.Context, actor Actor, uuid string) (RunView, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return RunView{}, e
	}
	if !MayAct(actor, ActionRead, run) {
		return RunView{}, newError(CodeRunNotFound, uuid, "no such run")
	}
	views, err := r.views(ctx, []Run{run})
	if err != nil {
		return RunView{}, storeError(uuid, err)
	}
	return views[0], nil
}

// Events returns the run's events with sequence > after.
func (r *Runtime) Events(ctx context.Context, actor Actor, uuid string, after int) ([]Event, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return nil, e
	}
	if !MayAct(actor, ActionRead, run) {
		return nil, newError(CodeRunNotFound, uuid, "no such run")
	}
	evs, err := r.store.Events(ctx, run.UID, after)
	if err != nil {
		return nil, storeError(uuid, err)
	}
	return evs, nil
}

// Inbox returns one page of waiting runs with their pauses. A store failure is an error,
// never an empty page; one unreadable run is listed as unreadable, not hidden.
func (r *Runtime) Inbox(ctx context.Context, actor Actor, q WaitingQuery) ([]RunView, error) {
	if !MayAct(actor, ActionRead, Run{}) {
		return nil, newError(CodeRunAccessDenied, "", "you may not see the inbox")
	}
	runs, err := r.store.ListWaiting(ctx, q)
	if err != nil {
		return nil, storeError("", err)
	}
	return r.views(ctx, runs)
}

// Counts returns the number of waiting runs per kind under q's filters.
func (r *Runtime) Counts(ctx context.Context, actor Actor, q WaitingQuery) (WaitingCounts, error) {
	if !MayAct(actor, ActionRead, Run{}) {
		return WaitingCounts{}, newError(CodeRunAccessDenied, "", "you may not see the inbox")
	}
	c, err := r.store.CountWaiting(ctx, q)
	if err != nil {
		return c, storeError("", err)
	}
	return c, nil
}

// Recent returns one page of finished runs, newest first.
func (r *Runtime) Recent(ctx context.Context, actor Actor, q RecentQuery) ([]Run, error) {
	if !MayAct(actor, ActionRead, Run{}) {
		return nil, newError(CodeRunAccessDenied, "", "you may not see runs")
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

func (r *Runtime) views(ctx context.Context, runs []Run) ([]RunView, error) {
	out := make([]RunView, len(runs))
	var reg *tool.Registry
	cfgs := map[int64]*Configuration{}
	for i, run := range runs {
		out[i].Run = stripped(run)
		if !run.Status.Waiting() {
			continue
		}
		kind := contApproval
		if run.Status == StatusWaitingInput {
			kind = contInput
		}
		st, e := decodeFor(run, decision{kind: kind})
		if e != nil {
			out[i].Unreadable = e.Message
			continue
		}
		if reg == nil {
			var err error
			if reg, err = r.toolset(ctx); err != nil {
				return nil, err
			}
		}
		cfg, ok := cfgs[run.ConfigurationUID]
		if !ok {
			c, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
			switch {
			case err == nil:
				cfg = &c
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
			cfgs[run.ConfigurationUID] = cfg
		}
		out[i].Pause = pauseOf(run, st, reg, cfg)
	}
	return out, nil
}

func pauseOf(run Run, st SuspendedState, reg *tool.Registry, cfg *Configuration) *Pause {
	d := decision{kind: contApproval}
	if st.IsInputPause() {
		d.kind = contInput
	}
	var offered map[string]bool
	if cfg != nil {
		offered = offeredSet(*cfg, reg)
	}
	p := &Pause{
		Status: run.Status, PendingCalls: st.PendingCalls, Previews: st.CallPreviews,
		InputTool: st.InputTool(), Digest: d.digestOf(st), Tools: map[string]ToolInfo{},
	}
	if st.IsInputPause() {
		p.InputSchema = st.InputSchema
	}
	for _, name := range st.toolNames() {
		t, ok := reg.Get(name)
		info := ToolInfo{Registered: ok, Offered: offered[name], Effect: tool.EffectNonIdempotentWrite, NeedsApproval: true}
		if ok {
			info.Effect, info.AdminOnly, info.NeedsApproval = tool.EffectOf(t), tool.IsAdminOnly(t), tool.NeedsApproval(t)
		}
		p.Tools[name] = info
	}
	return p
}
