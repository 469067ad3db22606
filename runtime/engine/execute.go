package engine

import (
	"context"
	"errors"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// handoff is what a decision hands its continuation: the run as the claim transaction read
// it, its state as decoded there, the configuration and tools the decision was checked
// against (resolved moments before) and, for input, the compiled schema of that state the
// input was validated against (nil: validate again), so the continuation starts without
// reading, decoding, resolving or validating them again. A run continued later (from the
// queue) starts from the store.
type handoff struct {
	run   runtime.Run
	state runtime.SuspendedState
	cfg   runtime.Configuration
	reg   *tool.Registry
	input *schema.Schema
}

// execute runs one claimed run (status running, lease held by lease.Owner) until it settles,
// pauses or is interrupted, reading what to do from the stored request: a start re-runs the
// prompt from scratch; a plan continues from the checkpoint; a decision's continuation
// resumes the stored state as its kind answers it, except an external request's, which ends
// the run decided. h is the
// decision's handoff, or nil to read everything from the store.
func (r *Runtime) execute(ctx context.Context, uid int64, lease runtime.Lease, h *handoff) outcome {
	if h != nil && h.run.UID != uid {
		h = nil
	}
	run, err := r.claimedRun(ctx, uid, h)
	if err != nil {
		r.log.Error("claimed run unreadable", "run_uid", uid, "err", err)
		return outcomeLeaseLost
	}
	if run.Status != runtime.StatusRunning || run.ClaimedBy != lease.Owner {
		return outcomeLeaseLost
	}
	seg, err := r.newSegment(ctx, run, lease, h)
	if err != nil {
		if ctx.Err() != nil {
			return outcomeAborted
		}
		r.log.Error("segment setup failed", "run", run.UUID, "err", err)
		class := "SegmentSetupFailed"
		if errors.Is(err, runtime.ErrNotFound) {
			class = "ConfigurationGone"
		}
		seg = &segment{r: r, run: run, lease: lease}
		return seg.fail(ctx, class)
	}
	c, err := decodeContinuation(run.QueuedRequest)
	if err != nil {
		r.log.Error("stored request unusable", "run", run.UUID, "err", err)
		return seg.fail(ctx, "CorruptQueuedRequest")
	}
	if c.Kind == contStart {
		seg.msgs = []model.Message{{Role: "system", Content: seg.cfg.SystemPrompt}, {Role: "user", Content: c.Prompt}}
		if seg.cfg.SystemPrompt == "" {
			seg.msgs = seg.msgs[1:]
		}
		return seg.loop(ctx)
	}
	if c.Kind == contRequest {
		return seg.ask(ctx, c)
	}
	if seg.cfg.IsExternal() {
		return seg.decided(ctx, c)
	}
	if c.Kind == contPlan {
		progress, err := runtime.DecodeProgress(run.SuspendedState)
		if err != nil {
			r.log.Error("checkpoint corrupt", "run", run.UUID, "err", err)
			return seg.fail(ctx, "CorruptCheckpoint")
		}
		return seg.continuePlan(ctx, progress, c.Steps)
	}
	k, _ := decisionKindNamed(c.Kind)
	st, e := stateToResume(run, pauseKind(k.spec().waitsIn), h)
	if e != nil {
		r.log.Error("suspended state corrupt at resume", "run", run.UUID, "err", e)
		return seg.fail(ctx, "CorruptSuspendedState")
	}
	return seg.resume(ctx, k, st, c, validatedInput(h))
}

// claimedRun is the handoff's run, else the run read from the store. A claim's own read is as
// current as a new one: until the lease lapses only a cancel can change the row, and the
// segment's next guarded write notices it.
func (r *Runtime) claimedRun(ctx context.Context, uid int64, h *handoff) (runtime.Run, error) {
	if h != nil {
		return h.run, nil
	}
	return r.store.FindByUID(ctx, uid)
}

// stateToResume is the run's stored state rehydrated as the pause kind resumes (by the
// decision when there is a handoff).
func stateToResume(run runtime.Run, kind string, h *handoff) (runtime.SuspendedState, *runtime.Error) {
	if h != nil {
		return h.state, nil
	}
	return rehydrate(run, kind)
}

// validatedInput is the schema the decision validated the continuation's input against, nil
// without a handoff.
func validatedInput(h *handoff) *schema.Schema {
	if h == nil {
		return nil
	}
	return h.input
}

// dispatch runs a claimed run on a worker slot in the background (h as for execute).
func (r *Runtime) dispatch(uid int64, lease runtime.Lease, h *handoff) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		select {
		case r.slots <- struct{}{}:
		case <-r.base.Done():
			return
		}
		defer func() { <-r.slots }()
		out := r.execute(r.base, uid, lease, h)
		r.log.Debug("segment ended", "run_uid", uid, "outcome", string(out))
	}()
}
