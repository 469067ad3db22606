package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// always fails a store call every time it is made while the database is away.
const always = -1

// awayAfterWrite is a store whose database goes away once the write tool has run: each call
// named in fail then returns a connection error (fail[name] times, or always), until heal.
// calls counts the calls made while it is away, hits those that failed.
type awayAfterWrite struct {
	runtime.Store
	mu    sync.Mutex
	away  bool
	fail  map[string]int
	calls map[string]int
	hits  map[string]int
}

func (a *awayAfterWrite) wrote() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.away = true
}

func (a *awayAfterWrite) heal() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.away = false
}

func (a *awayAfterWrite) fault(op string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.away {
		return nil
	}
	a.calls[op]++
	n := a.fail[op]
	if n == 0 {
		return nil
	}
	if n > 0 {
		a.fail[op] = n - 1
	}
	a.hits[op]++
	return fmt.Errorf("%s: dial tcp 127.0.0.1:3306: connect: connection refused", op)
}

func (a *awayAfterWrite) Checkpoint(ctx context.Context, uid int64, lease runtime.Lease, state, req string, events ...runtime.NewEvent) error {
	if err := a.fault("checkpoint"); err != nil {
		return err
	}
	return a.Store.Checkpoint(ctx, uid, lease, state, req, events...)
}

func (a *awayAfterWrite) AppendEvent(ctx context.Context, e runtime.NewEvent) (runtime.Event, error) {
	if err := a.fault("append event"); err != nil {
		return runtime.Event{}, err
	}
	return a.Store.AppendEvent(ctx, e)
}

func (a *awayAfterWrite) Finish(ctx context.Context, uid int64, owner string, st runtime.Settlement, now int64, events ...runtime.NewEvent) error {
	if err := a.fault("settle"); err != nil {
		return err
	}
	return a.Store.Finish(ctx, uid, owner, st, now, events...)
}

func (a *awayAfterWrite) Requeue(ctx context.Context, uid int64, owner string, now, retryAt int64) error {
	if err := a.fault("requeue"); err != nil {
		return err
	}
	return a.Store.Requeue(ctx, uid, owner, now, retryAt)
}

// TestWriteNeverRunsTwice: whatever store call fails after a non-idempotent write ran
// (checkpoint, event append, settle, requeue; once, or until the segment gives up), the write
// is executed exactly once across the whole recovery (the worker, the reaper, the next
// worker). Its fence is cleared only by the checkpoint that records its outcome; a write whose
// outcome cannot be recorded dead-letters the run not_retryable, by the segment itself or,
// when even that is not stored, by the reaper.
func TestWriteNeverRunsTwice(t *testing.T) {
	const fence = string(tool.EffectNonIdempotentWrite)
	cases := []struct {
		name string
		fail map[string]int
		// during is what happens to the run while the write executes: "shutdown" stops the
		// worker, "cancel" cancels the run.
		during     string
		wantStatus runtime.Status
		wantReason string
		wantClass  string
		wantFence  string
	}{
		{name: "checkpoint fails once", fail: map[string]int{"checkpoint": 1},
			wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted},
		{name: "checkpoint stays down", fail: map[string]int{"checkpoint": always},
			wantStatus: runtime.StatusFailed, wantReason: runtime.ReasonNotRetryable, wantClass: "WriteOutcomeNotRecorded", wantFence: fence},
		{name: "checkpoint and settle stay down", fail: map[string]int{"checkpoint": always, "settle": always},
			wantStatus: runtime.StatusFailed, wantReason: runtime.ReasonNotRetryable, wantFence: fence},
		{name: "checkpoint, settle and requeue stay down", fail: map[string]int{"checkpoint": always, "settle": always, "requeue": always},
			wantStatus: runtime.StatusFailed, wantReason: runtime.ReasonNotRetryable, wantFence: fence},
		{name: "shutdown, checkpoint fails once", fail: map[string]int{"checkpoint": 1}, during: "shutdown",
			wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted},
		{name: "shutdown, checkpoint and requeue stay down", fail: map[string]int{"checkpoint": always, "requeue": always}, during: "shutdown",
			wantStatus: runtime.StatusFailed, wantReason: runtime.ReasonNotRetryable, wantClass: "WriteOutcomeNotRecorded", wantFence: fence},
		{name: "shutdown, outcome recorded, requeue fails", fail: map[string]int{"requeue": always}, during: "shutdown",
			wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted},
		{name: "cancelled, event append stays down", fail: map[string]int{"append event": always}, during: "cancel",
			wantStatus: runtime.StatusCancelled, wantReason: runtime.ReasonCancelled, wantFence: fence},
		{name: "outcome recorded, settle fails", fail: map[string]int{"settle": 1},
			wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := &awayAfterWrite{fail: c.fail, calls: map[string]int{}, hits: map[string]int{}}
			ctx, shutdown := context.WithCancel(context.Background())
			defer shutdown()
			e := newEnv(t, []model.Turn{turn(call("issue_refund", `{"order":"A-1"}`)), {Content: "done"}},
				withStore(func(s runtime.Store) runtime.Store { store.Store = s; return store }),
				func(e *env, cfg *engine.Config) {
					cfg.Lease = time.Second
					for i, tl := range cfg.Tools {
						if tl.Name() != "issue_refund" {
							continue
						}
						w := tl.(writeTool)
						w.exec = func(_ context.Context, call tool.Call) (tool.Result, error) {
							switch c.during {
							case "shutdown":
								shutdown()
							case "cancel":
								if err := e.store.Cancel(e.ctx, e.run(call.RunUUID).UID, e.clock.Now().Unix()); err != nil {
									t.Errorf("cancel during the write: %v", err)
								}
							}
							store.wrote()
							return tool.Result{Content: "refunded"}, nil
						}
						cfg.Tools[i] = w
					}
				})
			run := e.startAndRun(admin)
			e.hooks.arm(runtime.HookAfterClaim)
			approve(t, e, admin2, run.UUID, true)
			e.clock.Advance(time.Minute)
			if rep, err := e.rt.Reap(e.ctx, 50); err != nil || rep.Requeued != 1 {
				t.Fatalf("reap the claimed approval = %+v, %v", rep, err)
			}
			if ok, err := e.rt.RunOnce(ctx); !ok || err != nil {
				t.Fatalf("the worker did not take the approved run: %v %v", ok, err)
			}
			store.heal()
			for range 4 {
				if e.run(run.UUID).Status.Terminal() {
					break
				}
				e.clock.Advance(time.Minute)
				if _, err := e.rt.Reap(e.ctx, 50); err != nil {
					t.Fatal(err)
				}
				if _, err := e.rt.RunOnce(e.ctx); err != nil {
					t.Fatal(err)
				}
			}
			r := e.wantStatus(run.UUID, c.wantStatus)
			if n := len(e.rec.get("issue_refund")); n != 1 {
				t.Fatalf("the write ran %d times, want once", n)
			}
			if r.TerminationReason != c.wantReason || r.ErrorClass != c.wantClass || r.PendingEffect != c.wantFence {
				t.Fatalf("reason %q class %q fence %q, want %q %q %q", r.TerminationReason, r.ErrorClass, r.PendingEffect,
					c.wantReason, c.wantClass, c.wantFence)
			}
			for op := range c.fail {
				if op == "requeue" && c.wantFence != "" {
					if store.calls[op] > 0 {
						t.Fatalf("a run whose write is not recorded was handed back %d time(s)", store.calls[op])
					}
					continue
				}
				if store.hits[op] == 0 {
					t.Fatalf("%s never failed: the case tests nothing (failed: %v)", op, store.hits)
				}
			}
		})
	}
}
