package engine_test

import (
	"context"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// TestWriteIsFenced is rule 4.9's fence: while a write executes, the run row carries its
// effect (so a reaper can tell) and a live lease; afterwards the fence is cleared.
func TestWriteIsFenced(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("fenced", `{}`))})
	var during runtime.Run
	fenced := writeTool{baseTool: baseTool{name: "fenced", rec: e.rec, exec: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		during = e.run(c.RunUUID)
		return tool.Result{Content: "written"}, nil
	}}, effect: tool.EffectNonIdempotentWrite}
	e.cfg.Tools = []string{"fenced"}
	e.saveConfig()
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: []tool.Tool{fenced}, Now: e.clock.Now, Lease: time.Minute})
	t.Cleanup(e.rt.Close)
	run := e.startAndRun(admin)
	approve(t, e, admin2, run.UUID, true)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if during.PendingEffect != string(tool.EffectNonIdempotentWrite) || during.LeaseExpires <= e.clock.Now().Unix() || during.ClaimedBy == "" {
		t.Fatalf("during the write: effect %q lease %d claimed %q", during.PendingEffect, during.LeaseExpires, during.ClaimedBy)
	}
	if r.PendingEffect != "" {
		t.Fatalf("fence left after settle: %q", r.PendingEffect)
	}
}

// TestPoolRunsQueuedRuns: the worker pool claims and executes every queued run, and a
// continuation handed over by a decision runs on it too.
func TestPoolRunsQueuedRuns(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), {Content: "done"}})
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: e.tools, Now: e.clock.Now, Workers: 3, PollInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- e.rt.Run(ctx) }()
	var uuids []string
	for range 8 {
		r, err := e.rt.Start(e.ctx, reviewer, "test", "go")
		if err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, r.UUID)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, u := range uuids {
		for e.run(u).Status != runtime.StatusCompleted {
			if time.Now().After(deadline) {
				t.Fatalf("run %s still %s", u, e.run(u).Status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(e.rec.get("lookup")); n != 8 {
		t.Fatalf("lookup ran %d times, want 8", n)
	}
}

// TestShutdownHandsRunBack: a segment interrupted by shutdown at a step boundary goes back
// to the queue at once instead of waiting for its lease to lapse.
func TestShutdownHandsRunBack(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("slow", `{}`)), {Content: "done"}})
	started := make(chan struct{})
	slow := baseTool{name: "slow", rec: e.rec, exec: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		close(started)
		<-ctx.Done()
		return tool.Result{Content: "interrupted", IsError: true}, nil
	}}
	e.cfg.Tools = []string{"slow"}
	e.saveConfig()
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: []tool.Tool{slow}, Now: e.clock.Now, PollInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- e.rt.Run(ctx) }()
	run, err := e.rt.Start(e.ctx, admin, "test", "go")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	<-done
	r := e.wantStatus(run.UUID, runtime.StatusQueued)
	if r.RequeueCount != 1 || r.ClaimedBy != "" || r.QueuedRequest == "" {
		t.Fatalf("requeued run = %+v", r)
	}
}
