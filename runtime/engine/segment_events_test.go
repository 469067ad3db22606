package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// wantKinds checks that the run's events are dense (sequence 0..n-1) and of kinds, in order.
func (e *env) wantKinds(uuid string, kinds ...string) {
	e.t.Helper()
	evs := e.events(uuid)
	for i, ev := range evs {
		if ev.Sequence != i {
			e.t.Fatalf("event %d has sequence %d (not dense): %v", i, ev.Sequence, e.kinds(uuid))
		}
	}
	if got := e.kinds(uuid); !slices.Equal(got, kinds) {
		e.t.Fatalf("events = %v, want %v", got, kinds)
	}
}

// checkpointFault fails the n-th checkpoint (1 = the first), once: with ErrGuard when guard
// is set (a lease lost), else as a database that is away.
type checkpointFault struct {
	runtime.Store
	mu    sync.Mutex
	n     int
	guard bool
}

func (c *checkpointFault) Checkpoint(ctx context.Context, uid int64, lease runtime.Lease, state, req string, events ...runtime.NewEvent) error {
	c.mu.Lock()
	c.n--
	fire := c.n == 0
	c.mu.Unlock()
	switch {
	case fire && c.guard:
		return fmt.Errorf("checkpoint: %w", runtime.ErrGuard)
	case fire:
		return fmt.Errorf("dial unix mysqld.sock: connection refused")
	}
	return c.Store.Checkpoint(ctx, uid, lease, state, req, events...)
}

// TestToolEventCommitsWithCheckpoint: a call's tool event is stored with the checkpoint that
// records the call answered. When that checkpoint fails the segment's events are not
// written; the run goes back to its last checkpoint, the call is answered again, and its
// event is stored once.
func TestToolEventCommitsWithCheckpoint(t *testing.T) {
	fault := &checkpointFault{n: 2}
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), {Content: "done"}},
		withStore(func(s runtime.Store) runtime.Store { fault.Store = s; return fault }))
	run, err := e.rt.Start(e.ctx, admin, "test", "go")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	e.wantStatus(run.UUID, runtime.StatusQueued)
	e.wantKinds(run.UUID, runtime.EventRequest, runtime.EventLLM)
	if n := len(e.rec.get("lookup")); n != 1 {
		t.Fatalf("lookup ran %d times before the fault, want 1", n)
	}
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("second run once: %v %v", ok, err)
	}
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	e.wantKinds(run.UUID, runtime.EventRequest, runtime.EventLLM, runtime.EventTool, runtime.EventLLM)
	if r.Iterations != 2 {
		t.Fatalf("iterations %d, want 2", r.Iterations)
	}
}

// TestLostLeaseWritesNoEvents: a segment whose checkpoint guard misses (another owner took
// the run) writes none of its buffered events.
func TestLostLeaseWritesNoEvents(t *testing.T) {
	fault := &checkpointFault{n: 1, guard: true}
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), {Content: "done"}},
		withStore(func(s runtime.Store) runtime.Store { fault.Store = s; return fault }))
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusRunning)
	e.wantKinds(run.UUID, runtime.EventRequest)
}

// TestEventsOnceAfterKill: a continuation killed mid-tool or before settling and recovered by
// the reaper leaves every step's event exactly once, densely numbered.
func TestEventsOnceAfterKill(t *testing.T) {
	script := []model.Turn{turn(call("ask_city", `{}`), call("lookup", `{}`)), {Content: "done"}}
	cases := []struct {
		point string
		hit   int
	}{
		{runtime.HookMidTool, 1},
		{runtime.HookMidTool, 2},
		{runtime.HookBeforeSettle, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s#%d", c.point, c.hit), func(t *testing.T) {
			e := newEnv(t, script)
			run := e.startAndRun(admin)
			e.hooks.armAt(c.point, c.hit)
			submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
			e.rt.Wait()
			e.wantStatus(run.UUID, runtime.StatusRunning)
			e.clock.Advance(2 * time.Minute)
			if rep, err := e.rt.Reap(e.ctx, 50); err != nil || rep.Requeued != 1 {
				t.Fatalf("reap = %+v, %v", rep, err)
			}
			if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
				t.Fatalf("run once: %v %v", ok, err)
			}
			e.wantStatus(run.UUID, runtime.StatusCompleted)
			e.wantKinds(run.UUID, runtime.EventRequest, runtime.EventLLM, runtime.EventInput,
				runtime.EventTool, runtime.EventTool, runtime.EventLLM)
		})
	}
}

// renewCounter counts lease renewals, runs afterClaim once a worker's claim succeeded and
// afterLoad once, after the first run read that follows it (the worker loading what it
// claimed).
type renewCounter struct {
	runtime.Store
	mu         sync.Mutex
	renewals   int
	claimed    bool
	afterClaim func(uid int64)
	afterLoad  func(uid int64)
}

func (c *renewCounter) RenewLease(ctx context.Context, uid int64, lease runtime.Lease) error {
	c.mu.Lock()
	c.renewals++
	c.mu.Unlock()
	return c.Store.RenewLease(ctx, uid, lease)
}

func (c *renewCounter) ClaimQueued(ctx context.Context, uid int64, lease runtime.Lease) error {
	err := c.Store.ClaimQueued(ctx, uid, lease)
	if err == nil {
		c.mu.Lock()
		c.claimed = true
		c.mu.Unlock()
	}
	if err == nil && c.afterClaim != nil {
		c.afterClaim(uid)
	}
	return err
}

func (c *renewCounter) FindByUID(ctx context.Context, uid int64) (runtime.Run, error) {
	r, err := c.Store.FindByUID(ctx, uid)
	c.mu.Lock()
	fire := c.claimed && c.afterLoad != nil
	c.claimed = false
	c.mu.Unlock()
	if fire {
		c.afterLoad(uid)
	}
	return r, err
}

func (c *renewCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renewals
}

// TestBoundarySkipsRecentRenewal: a step boundary renews the lease only when the segment's
// last guarded write is a second old or more by the runtime's clock.
func TestBoundarySkipsRecentRenewal(t *testing.T) {
	for _, c := range []struct {
		name    string
		advance time.Duration
		want    int
	}{
		{"claim just now", 0, 0},
		{"claim two seconds ago", 2 * time.Second, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			counter := &renewCounter{}
			e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), turn(call("lookup", `{}`)), {Content: "done"}},
				withStore(func(s runtime.Store) runtime.Store { counter.Store = s; return counter }))
			counter.afterClaim = func(int64) { e.clock.Advance(c.advance) }
			run := e.startAndRun(admin)
			r := e.wantStatus(run.UUID, runtime.StatusCompleted)
			if got := counter.count(); got != c.want {
				t.Fatalf("%d lease renewals, want %d", got, c.want)
			}
			if len(e.rec.get("lookup")) != 2 || r.Iterations != 3 {
				t.Fatalf("lookup ran %d times, iterations %d", len(e.rec.get("lookup")), r.Iterations)
			}
		})
	}
}

// TestCancelInSkipWindow: a cancel right after the claim, inside the window where the
// boundary does not renew, is caught by the segment's next guarded write: the run stays
// cancelled, no tool runs, and the model step done meanwhile is recorded once.
func TestCancelInSkipWindow(t *testing.T) {
	counter := &renewCounter{}
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), {Content: "done"}},
		withStore(func(s runtime.Store) runtime.Store { counter.Store = s; return counter }))
	counter.afterLoad = func(uid int64) {
		r, err := e.store.FindByUID(e.ctx, uid)
		if err == nil {
			_, err = e.rt.Cancel(e.ctx, admin, r.UUID)
		}
		if err != nil {
			t.Errorf("cancel: %v", err)
		}
	}
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusCancelled)
	if n := len(e.rec.get("lookup")); n != 0 {
		t.Fatalf("lookup ran %d times after the cancel", n)
	}
	e.wantKinds(run.UUID, runtime.EventRequest, runtime.EventLLM)
}

// hookFunc adapts a function to engine.Hooks.
type hookFunc func(point string, runUID int64) error

func (f hookFunc) At(point string, runUID int64) error { return f(point, runUID) }

// TestStateChangedBeforeClaimIsStale: when the stored pause changes between the pre-claim read
// and the claim, the claim checks the digest of the state it locked, not the one read
// before: the submission is refused as stale and the run keeps waiting.
func TestStateChangedBeforeClaimIsStale(t *testing.T) {
	var e *env
	change := hookFunc(func(point string, uid int64) error {
		if point != runtime.HookAfterValidation {
			return nil
		}
		res, err := e.sql.ExecContext(e.ctx, `UPDATE tx_nrllm_agentrun
			SET suspended_state = REPLACE(suspended_state, '"arguments":{}', '"arguments":{"note":"changed"}')
			WHERE uid = ?`, uid)
		if n, _ := res.RowsAffected(); err != nil || n != 1 {
			t.Errorf("change the stored pause: %d rows, %v", n, err)
		}
		return nil
	})
	e = newEnv(t, []model.Turn{turn(call("ask_city", `{}`))}, func(_ *env, c *engine.Config) { c.Hooks = change })
	run := e.startAndRun(admin)
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{
		Data: map[string]any{"city": "Berlin"}, TurnDigest: e.view(run.UUID).Pause.Digest})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeStaleInputTurn {
		t.Fatalf("err = %v, want %s", err, runtime.CodeStaleInputTurn)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	if len(e.rec.get("ask_city")) != 0 {
		t.Fatalf("the input tool ran")
	}
}

// readCounter counts reads of runs by uid, of configurations by uid and of tool definitions.
type readCounter struct {
	runtime.Store
	runtime.Catalog
	mu    sync.Mutex
	reads int
}

func (c *readCounter) count() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
}

func (c *readCounter) FindByUID(ctx context.Context, uid int64) (runtime.Run, error) {
	c.count()
	return c.Store.FindByUID(ctx, uid)
}

func (c *readCounter) ConfigurationByUID(ctx context.Context, uid int64) (runtime.Configuration, error) {
	c.count()
	return c.Catalog.ConfigurationByUID(ctx, uid)
}

func (c *readCounter) ToolDefinitions(ctx context.Context) ([]tool.Definition, error) {
	c.count()
	return c.Catalog.ToolDefinitions(ctx)
}

// TestContinuationStartsFromTheClaim: the continuation of a decision starts from the row the
// claim transaction read and the configuration and tools the decision was checked against,
// without reading any of them again, and completes.
func TestContinuationStartsFromTheClaim(t *testing.T) {
	counter := &readCounter{}
	atClaim := -1
	snapshot := hookFunc(func(point string, _ int64) error {
		if point == runtime.HookAfterClaim {
			counter.mu.Lock()
			atClaim = counter.reads
			counter.mu.Unlock()
		}
		return nil
	})
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`)), {Content: "done"}}, func(_ *env, c *engine.Config) {
		counter.Store, counter.Catalog = c.Store, c.Catalog
		c.Store, c.Catalog, c.Hooks = counter, counter, snapshot
	})
	run := e.startAndRun(admin)
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	jsonEqual(t, e.rec.get("ask_city")[0], `{"city":"Berlin"}`)
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if atClaim < 0 || counter.reads != atClaim {
		t.Fatalf("%d reads of the run, its configuration or the tools after the claim, want 0", counter.reads-atClaim)
	}
}
