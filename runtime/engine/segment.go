package engine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/guardrail"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// outcome is how one segment of execution ended (see docs/state-machine.md).
type outcome string

const (
	outcomeCompleted        outcome = "completed"
	outcomeAwaitingApproval outcome = "awaiting_approval"
	outcomeAwaitingInput    outcome = "awaiting_input"
	outcomeSuspendFailed    outcome = "suspend_failed"
	outcomeFailed           outcome = "failed"
	outcomeCancelled        outcome = "cancelled"
	outcomeLeaseLost        outcome = "lease_lost"
	outcomeRequeued         outcome = "requeued"
	outcomeAborted          outcome = "aborted"
)

// errLeaseLost stops a segment whose guarded write matched no row.
var errLeaseLost = errors.New("lease lost")

// errCancelled stops a segment whose run was cancelled.
var errCancelled = errors.New("run cancelled")

// segment is one contiguous execution of a run under a lease.
//
// Its events are not written on their own: event buffers them in pending, and the segment's
// next write that stores its progress (checkpoint, suspend, settle) carries them in the same
// transaction. A step's event is therefore stored exactly when the step is: a run recovered
// from its last checkpoint repeats the steps after it and records them then, never twice. When
// a segment ends without storing its progress (lease lost, handed back, requeued) the pending
// events are dropped for that reason; when its run was cancelled they are appended as they
// are, the run being final.
type segment struct {
	r        *Runtime
	run      runtime.Run
	lease    runtime.Lease
	cfg      runtime.Configuration
	reg      *tool.Registry
	offered  map[string]bool
	provider model.Provider
	msgs     []model.Message
	iter     int
	prompt   int64
	compl    int64
	cost     float64
	rails    *guardrail.Set
	pending  []runtime.NewEvent
	wroteAt  time.Time
	// fenced is the effect of a non-idempotent write this segment fenced whose outcome is not
	// stored yet: from the fence on the write may have happened, and only a write that stores
	// the segment's progress (stored) clears it.
	fenced tool.Effect
	// title is the subject an external request's pause takes ("": the template's).
	title string
}

// toolset returns the registry of the in-process tools plus the live data-defined tools. The
// definitions are read every time (a change applies at once); the registry is rebuilt only
// when they differ from the last ones built.
func (r *Runtime) toolset(ctx context.Context) (*tool.Registry, error) {
	defs, err := r.catalog.ToolDefinitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("load tool definitions: %w", err)
	}
	return r.registryOf(defs)
}

// registryOf is the registry of the in-process tools plus defs, built once per distinct defs.
func (r *Runtime) registryOf(defs []tool.Definition) (*tool.Registry, error) {
	build := func() (*tool.Registry, error) {
		tools := append([]tool.Tool(nil), r.builtin...)
		for _, d := range defs {
			newTool := tool.NewHTTP
			if d.MCP != nil {
				newTool = tool.NewMCP
			}
			t, err := newTool(d, r.client, r.getenv)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %w", d.Name, err)
			}
			tools = append(tools, t)
		}
		return tool.New(tools...)
	}
	enc, err := json.Marshal(defs)
	if err != nil {
		return build()
	}
	return r.tools.GetOrLoad(sha256.Sum256(enc), build)
}

// newRegistryCache is toolset's cache: the last registry built, by the SHA-256 of the
// definitions it was built from.
func newRegistryCache() *cache.Cache[[sha256.Size]byte, *tool.Registry] {
	return cache.New[[sha256.Size]byte, *tool.Registry](cache.Options{Max: 1})
}

// newSegment sets up a segment of run: its configuration and tools are the handoff's when
// there is one, else resolved now. An external configuration's segment has no provider.
func (r *Runtime) newSegment(ctx context.Context, run runtime.Run, lease runtime.Lease, h *handoff) (*segment, error) {
	cfg, reg, err := r.resolve(ctx, run, h)
	if err != nil {
		return nil, err
	}
	var p model.Provider
	if !cfg.IsExternal() {
		if p, err = model.New(cfg.Provider, r.client, r.getenv); err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
	}
	rails, err := guardrail.New(cfg.Guardrails, r.client)
	if err != nil {
		return nil, fmt.Errorf("guardrails: %w", err)
	}
	return &segment{r: r, run: run, lease: lease, cfg: cfg, reg: reg, offered: offeredSet(cfg, reg), provider: p,
		rails: rails, wroteAt: time.Unix(lease.Now, 0)}, nil
}

func (r *Runtime) resolve(ctx context.Context, run runtime.Run, h *handoff) (runtime.Configuration, *tool.Registry, error) {
	if h != nil {
		return h.cfg, h.reg, nil
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if err != nil {
		return runtime.Configuration{}, nil, fmt.Errorf("load configuration %d: %w", run.ConfigurationUID, err)
	}
	reg, err := r.toolset(ctx)
	if err != nil {
		return runtime.Configuration{}, nil, err
	}
	return cfg, reg, nil
}

func (s *segment) maxIterations() int {
	if s.cfg.MaxIterations <= 0 || s.cfg.MaxIterations > runtime.DefaultMaxIterations {
		return runtime.DefaultMaxIterations
	}
	return s.cfg.MaxIterations
}

// renewSkip is how recent a segment's last successful guarded write (the claim, a checkpoint,
// a fence or a renewal) must be for a step boundary to skip its lease renewal: that write
// already proved the claim and renewed the lease. A cancel (or a lost lease) in the window is
// still caught by the segment's next guarded write (fence, checkpoint, suspend, or the
// owner-guarded Finish), at the cost of at most one more step done for a cancelled run.
const renewSkip = time.Second

// boundary is the step boundary: stop on shutdown, renew the lease unless the last guarded
// write is less than renewSkip old (by the runtime's clock); a guard miss means cancelled or
// lost.
func (s *segment) boundary(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if since := s.r.now().Sub(s.wroteAt); since >= 0 && since < renewSkip {
		return nil
	}
	s.extendLease()
	err := s.r.store.RenewLease(ctx, s.run.UID, s.lease)
	if err == nil {
		s.held()
	}
	return s.storeResult(ctx, err)
}

// extendLease moves the segment's lease to start now, for its next guarded write.
func (s *segment) extendLease() {
	now := s.r.unix()
	s.lease.Now, s.lease.Expires = now, now+int64(s.r.lease/time.Second)
}

// held notes a successful guarded write: the claim is proven and the lease renewed now.
func (s *segment) held() { s.wroteAt = s.r.now() }

// stored notes a successful guarded write that carried the pending events (and so the
// outcome of a fenced write).
func (s *segment) stored() {
	s.pending = nil
	s.fenced = ""
	s.held()
}

// storeFault is a segment's own store write failing for a reason other than its guard (the
// database is unreachable, say): the work done so far is checkpointed, so the run is handed
// back to the queue rather than failed.
type storeFault struct{ err error }

func (e storeFault) Error() string { return "store: " + e.err.Error() }
func (e storeFault) Unwrap() error { return e.err }

// storeResult classifies the result of a guarded write of this segment: a guard miss means
// cancelled or lease lost, any other error is a storeFault.
func (s *segment) storeResult(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, runtime.ErrGuard):
		return s.whyGuardMissed(ctx)
	}
	return storeFault{err}
}

func (s *segment) whyGuardMissed(ctx context.Context) error {
	cur, err := s.r.store.FindByUID(ctx, s.run.UID)
	if err == nil && cur.Status == runtime.StatusCancelled {
		return errCancelled
	}
	if err == nil {
		s.r.log.Warn("the run is no longer held by this segment", "run", s.run.UUID, "owner", s.lease.Owner, "lease_expires", s.lease.Expires,
			"status", cur.Status, "now_claimed_by", cur.ClaimedBy, "now_lease_expires", cur.LeaseExpires, "requeues", cur.RequeueCount)
	}
	return errLeaseLost
}

// event records a step of the segment, to be written with its next write that stores its
// progress.
func (s *segment) event(kind string, round int, d time.Duration, payload any) {
	s.eventSaying(kind, round, d, payload, runtime.EventContent{})
}

// eventSaying is event with what the step said, kept beside it as the run's privacy mode
// keeps content (runtime.Keep).
func (s *segment) eventSaying(kind string, round int, d time.Duration, payload any, said runtime.EventContent) {
	s.pending = append(s.pending, runtime.NewEvent{
		Run: s.run.UID, Kind: kind, Round: round,
		DurationMS: float64(d.Microseconds()) / 1000, Payload: mustJSON(payload), Now: s.r.unix(),
		Content: runtime.Keep(s.cfg.Privacy, said),
	})
}

// dropUnstored forgets the events of steps whose progress was not stored: the run goes back
// to its last checkpoint and whoever continues it repeats those steps and records them.
func (s *segment) dropUnstored() {
	if len(s.pending) > 0 {
		s.r.log.Warn("events of unstored steps dropped; the steps are repeated from the last checkpoint",
			"run", s.run.UUID, "events", len(s.pending))
	}
	s.pending = nil
}

// cancelled ends a segment whose run was cancelled. The run is final, so the steps done since
// the last write are recorded as they happened, each event in its own transaction, and the
// run keeps the totals of the model calls the segment made.
func (s *segment) cancelled(ctx context.Context) outcome {
	ctx = context.WithoutCancel(ctx)
	for _, e := range s.pending {
		if _, err := s.r.store.AppendEvent(ctx, e); err != nil {
			s.r.log.Warn("event not recorded", "run", s.run.UUID, "kind", e.Kind, "err", err)
		}
	}
	s.pending = nil
	err := s.r.store.RecordCancelledTotals(ctx, s.run.UID, s.iter, s.prompt, s.compl, s.cost, s.r.unix())
	if err != nil && !errors.Is(err, runtime.ErrGuard) {
		s.r.log.Warn("totals of the cancelled run not recorded", "run", s.run.UUID, "err", err)
	}
	return outcomeCancelled
}

func (s *segment) totals(status runtime.Status, reason, errorClass string, truncated bool) runtime.Settlement {
	return runtime.Settlement{
		Status: status, Iterations: s.iter, Truncated: truncated,
		PromptTokens: s.prompt, CompletionTokens: s.compl, TotalTokens: s.prompt + s.compl,
		EstimatedCost: s.cost, ErrorClass: errorClass, Reason: reason,
	}
}

// settle stores the run's outcome st with the segment's pending events, its configuration
// (for the `finished` notifications) and, for a completed run whose configuration keeps
// outputs, its output: st.Output when set, else finalOutput.
func (s *segment) settle(ctx context.Context, st runtime.Settlement) outcome {
	if err := s.r.hook(runtime.HookBeforeSettle, s.run.UID); err != nil {
		return outcomeAborted
	}
	st.Configuration = &s.cfg
	switch {
	case s.cfg.NoOutput:
		st.Output = ""
	case st.Status == runtime.StatusCompleted && st.Output == "":
		st.Output = finalOutput(s.msgs)
	}
	err := s.r.store.Finish(context.WithoutCancel(ctx), s.run.UID, s.lease.Owner, st, s.r.unix(), s.pending...)
	if err != nil {
		return s.settleFailed(ctx, err)
	}
	s.stored()
	if st.Status == runtime.StatusCompleted {
		return outcomeCompleted
	}
	return outcomeFailed
}

// settleFailed ends a segment whose settle was not stored: its run was cancelled, or it is
// left to the owner that took it or to the reaper, which continues it from the last
// checkpoint.
func (s *segment) settleFailed(ctx context.Context, err error) outcome {
	if !errors.Is(err, runtime.ErrGuard) {
		s.r.log.Error("settle failed", "run", s.run.UUID, "err", err)
	} else if s.whyGuardMissed(context.WithoutCancel(ctx)) == errCancelled {
		return s.cancelled(ctx)
	}
	s.dropUnstored()
	return outcomeLeaseLost
}

func (s *segment) fail(ctx context.Context, errorClass string) outcome {
	s.r.log.Warn("run failed", "run", s.run.UUID, "class", errorClass)
	return s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonProviderFailed, errorClass, false))
}

// stop ends a segment after an interruption: a cancellation or lost lease leaves the row to
// its new owner; a shutdown or a store fault hands the run back to the queue so another
// process continues it; a retryable provider failure hands it back to be retried after a
// backoff. Any other error fails the run.
func (s *segment) stop(ctx context.Context, err error) outcome {
	var el *elicited
	var lost holdLost
	switch {
	case errors.As(err, &el):
		return s.suspendForInput(ctx, el)
	case errors.As(err, &lost):
		return s.deadLetterHeld(ctx, lost)
	case errors.Is(err, errCancelled):
		return s.cancelled(ctx)
	case errors.Is(err, errLeaseLost):
		s.r.log.Warn("lease lost", "run", s.run.UUID)
		s.dropUnstored()
		return outcomeLeaseLost
	case errors.Is(err, errAborted):
		return outcomeAborted
	case s.fenced != "":
		return s.writeUnrecorded(ctx, err)
	case ctx.Err() != nil:
		s.dropUnstored()
		out, err := s.giveBack(ctx, 0, "")
		if err != nil {
			s.r.log.Error("requeue at shutdown failed; the reaper recovers the run", "run", s.run.UUID, "err", err)
		}
		return out
	case errors.As(err, new(storeFault)):
		return s.handBack(ctx)
	case model.IsRetryable(err):
		return s.retryLater(ctx, err)
	}
	return s.fail(ctx, errorClassOf(err))
}

// giveBack returns the run to the queue (requeue running → queued), to be claimed from retryAt
// (0 = at once), within the shared requeue budget: a run that has spent it is dead-lettered
// retries_exhausted with errorClass instead (its totals kept). A guard miss means the run was
// cancelled or the lease lost. The error is the requeue's own store failure, for the caller
// to retry.
func (s *segment) giveBack(ctx context.Context, retryAt int64, errorClass string) (outcome, error) {
	ctx = context.WithoutCancel(ctx)
	if budgetSpent(s.run) {
		s.r.log.Warn("requeue budget spent; run dead-lettered", "run", s.run.UUID, "requeues", s.run.RequeueCount)
		return s.settle(ctx, s.totals(runtime.StatusFailed, runtime.ReasonRetriesExhausted, errorClass, false)), nil
	}
	err := s.r.store.Requeue(ctx, s.run.UID, s.lease.Owner, s.r.unix(), retryAt)
	switch {
	case err == nil:
		s.r.Wake()
		return outcomeRequeued, nil
	case errors.Is(err, runtime.ErrGuard):
		if s.whyGuardMissed(ctx) == errCancelled {
			return s.cancelled(ctx), nil
		}
		return outcomeLeaseLost, nil
	}
	return outcomeLeaseLost, err
}

// handBack returns the run to the queue after a store fault, retrying while the database is
// away (retryStore); after that the reaper recovers it.
func (s *segment) handBack(ctx context.Context) outcome {
	s.dropUnstored()
	out := outcomeLeaseLost
	err := s.retryStore(func() error {
		var err error
		out, err = s.giveBack(ctx, 0, "")
		return err
	})
	switch {
	case errors.Is(err, errAborted):
		return outcomeAborted
	case err != nil:
		return outcomeLeaseLost
	case out == outcomeRequeued:
		s.r.log.Warn("run handed back to the queue after a store fault", "run", s.run.UUID)
	}
	return out
}

// retryStore calls write until it succeeds, its guard misses or one lease period has passed,
// backing off while the database is away, and returns write's last error; errAborted when the
// runtime shuts down meanwhile.
func (s *segment) retryStore(write func() error) error {
	started := time.Now()
	wait := 250 * time.Millisecond
	for {
		err := write()
		if err == nil || errors.Is(err, runtime.ErrGuard) || time.Since(started) > s.r.lease {
			return err
		}
		select {
		case <-time.After(wait):
		case <-s.r.base.Done():
			return errAborted
		}
		wait = min(2*wait, 15*time.Second)
	}
}

// writeUnrecorded ends a segment whose non-idempotent write may have happened but whose
// outcome could not be stored. Handing the run back would do the write again, so it is
// dead-lettered not_retryable with error class WriteOutcomeNotRecorded and the fence kept.
// When even that is not stored the row stays running with its fence set, and the reaper
// dead-letters it once the lease lapses.
func (s *segment) writeUnrecorded(ctx context.Context, err error) outcome {
	s.r.log.Error("the outcome of a write that may have happened was not recorded; the run is dead-lettered, not retried",
		"run", s.run.UUID, "effect", string(s.fenced), "err", err)
	st := s.totals(runtime.StatusFailed, runtime.ReasonNotRetryable, "WriteOutcomeNotRecorded", false)
	st.PendingEffect = string(s.fenced)
	return s.settle(ctx, st)
}

// retryLater hands back a run whose provider call failed in a way a later attempt may not
// (HTTP 429, 5xx, a transport failure, after the client's own retries), to be claimed again
// after retryBackoff of its requeues so far.
func (s *segment) retryLater(ctx context.Context, cause error) outcome {
	s.dropUnstored()
	class := errorClassOf(cause)
	at := s.r.now().Add(retryBackoff(s.run.RequeueCount))
	out, err := s.giveBack(ctx, at.Unix(), class)
	switch {
	case err != nil:
		s.r.log.Error("requeue after a provider failure failed", "run", s.run.UUID, "err", err)
	case out == outcomeRequeued:
		s.r.log.Warn("provider failed; run requeued", "run", s.run.UUID, "class", class, "retry_at", at.UTC())
	}
	return out
}

// errAborted is returned by a fault hook: the segment stops dead, leaving the row as a
// crashed process would.
var errAborted = errors.New("segment aborted at a fault point")

func errorClassOf(err error) string {
	var se *model.StatusError
	if errors.As(err, &se) {
		return "ProviderHTTPError"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "ProviderTimeout"
	}
	return "ProviderError"
}
