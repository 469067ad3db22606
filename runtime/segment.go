package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// outcome is how one segment of execution ended (upstream §2.3).
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
type segment struct {
	r        *Runtime
	run      Run
	lease    Lease
	cfg      Configuration
	reg      *tool.Registry
	offered  map[string]bool
	provider model.Provider
	msgs     []model.Message
	iter     int
	prompt   int64
	compl    int64
}

// toolset returns the registry of the in-process tools plus the live data-defined tools. The
// definitions are read every time (a change applies at once); the registry is rebuilt only
// when they differ from the last ones built.
func (r *Runtime) toolset(ctx context.Context) (*tool.Registry, error) {
	defs, err := r.catalog.ToolDefinitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("load tool definitions: %w", err)
	}
	enc, encErr := json.Marshal(defs)
	key := sha256.Sum256(enc)
	r.tools.Lock()
	defer r.tools.Unlock()
	if encErr == nil && r.tools.reg != nil && r.tools.key == key {
		return r.tools.reg, nil
	}
	tools := append([]tool.Tool(nil), r.builtin...)
	for _, d := range defs {
		t, err := tool.NewHTTP(d, r.client, r.getenv)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		tools = append(tools, t)
	}
	reg, err := tool.New(tools...)
	if err != nil {
		return nil, err
	}
	if encErr == nil {
		r.tools.reg, r.tools.key = reg, key
	}
	return reg, nil
}

// registryCache is the last registry toolset built and the hash of the definitions it was
// built from.
type registryCache struct {
	sync.Mutex
	key [sha256.Size]byte
	reg *tool.Registry
}

// offeredSet is the configuration's allowed tools that are registered (live, re-resolved on
// every segment).
func offeredSet(cfg Configuration, reg *tool.Registry) map[string]bool {
	out := map[string]bool{}
	for _, n := range cfg.Tools {
		if _, ok := reg.Get(n); ok {
			out[n] = true
		}
	}
	return out
}

func (r *Runtime) newSegment(ctx context.Context, run Run, lease Lease) (*segment, error) {
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if err != nil {
		return nil, fmt.Errorf("load configuration %d: %w", run.ConfigurationUID, err)
	}
	reg, err := r.toolset(ctx)
	if err != nil {
		return nil, err
	}
	p, err := model.New(cfg.Provider, r.client, r.getenv)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	return &segment{r: r, run: run, lease: lease, cfg: cfg, reg: reg, offered: offeredSet(cfg, reg), provider: p}, nil
}

func (s *segment) maxIterations() int {
	if s.cfg.MaxIterations <= 0 || s.cfg.MaxIterations > DefaultMaxIterations {
		return DefaultMaxIterations
	}
	return s.cfg.MaxIterations
}

// boundary is the step boundary: renew the lease; a guard miss means cancelled or lost.
func (s *segment) boundary(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.r.unix()
	s.lease.Now = now
	s.lease.Expires = now + int64(s.r.lease/time.Second)
	return s.storeResult(ctx, s.r.store.RenewLease(ctx, s.run.UID, s.lease))
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
	case errors.Is(err, ErrGuard):
		return s.whyGuardMissed(ctx)
	}
	return storeFault{err}
}

func (s *segment) whyGuardMissed(ctx context.Context) error {
	cur, err := s.r.store.FindByUID(ctx, s.run.UID)
	if err == nil && cur.Status == StatusCancelled {
		return errCancelled
	}
	return errLeaseLost
}

func (s *segment) event(ctx context.Context, kind string, round int, d time.Duration, payload any) {
	_, err := s.r.store.AppendEvent(ctx, NewEvent{
		Run: s.run.UID, Kind: kind, Round: round,
		DurationMS: float64(d.Microseconds()) / 1000, Payload: mustJSON(payload), Now: s.r.unix(),
	})
	if err != nil {
		s.r.log.Warn("event not recorded", "run", s.run.UUID, "kind", kind, "err", err)
	}
}

func (s *segment) totals(status Status, reason, errorClass string, truncated bool) Settlement {
	return Settlement{
		Status: status, Iterations: s.iter, Truncated: truncated,
		PromptTokens: s.prompt, CompletionTokens: s.compl, TotalTokens: s.prompt + s.compl,
		ErrorClass: errorClass, Reason: reason,
	}
}

func (s *segment) settle(ctx context.Context, st Settlement) outcome {
	if err := s.r.hook(HookBeforeSettle, s.run.UID); err != nil {
		return outcomeAborted
	}
	err := s.r.store.Finish(context.WithoutCancel(ctx), s.run.UID, s.lease.Owner, st, s.r.unix())
	switch {
	case errors.Is(err, ErrGuard):
		return outcomeLeaseLost
	case err != nil:
		s.r.log.Error("settle failed", "run", s.run.UUID, "err", err)
		return outcomeLeaseLost
	}
	if st.Status == StatusCompleted {
		return outcomeCompleted
	}
	return outcomeFailed
}

func (s *segment) fail(ctx context.Context, errorClass string) outcome {
	s.r.log.Warn("run failed", "run", s.run.UUID, "class", errorClass)
	return s.settle(ctx, s.totals(StatusFailed, ReasonProviderFailed, errorClass, false))
}

// stop ends a segment after an interruption: a cancellation or lost lease leaves the row to
// its new owner; a shutdown hands the run back to the queue so another process continues it.
func (s *segment) stop(ctx context.Context, err error) outcome {
	switch {
	case errors.Is(err, errCancelled):
		return outcomeCancelled
	case errors.Is(err, errLeaseLost):
		s.r.log.Warn("lease lost", "run", s.run.UUID)
		return outcomeLeaseLost
	case errors.Is(err, errAborted):
		return outcomeAborted
	case ctx.Err() != nil:
		rerr := s.r.store.Requeue(context.WithoutCancel(ctx), s.run.UID, s.lease.Owner, s.r.unix())
		if rerr != nil {
			return outcomeLeaseLost
		}
		return outcomeRequeued
	case errors.As(err, new(storeFault)):
		return s.handBack(ctx)
	}
	return s.fail(ctx, errorClassOf(err))
}

// handBack returns the run to the queue after a store fault, retrying with backoff while the
// database is away, for at most one lease period; after that the reaper recovers it.
func (s *segment) handBack(ctx context.Context) outcome {
	started := time.Now()
	wait := 250 * time.Millisecond
	for {
		err := s.r.store.Requeue(context.WithoutCancel(ctx), s.run.UID, s.lease.Owner, s.r.unix())
		switch {
		case err == nil:
			s.r.log.Warn("run handed back to the queue after a store fault", "run", s.run.UUID)
			s.r.Wake()
			return outcomeRequeued
		case errors.Is(err, ErrGuard), time.Since(started) > s.r.lease:
			return outcomeLeaseLost
		}
		select {
		case <-time.After(wait):
		case <-s.r.base.Done():
			return outcomeAborted
		}
		wait = min(2*wait, 15*time.Second)
	}
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
