package engine_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// heartbeatLease is the lease of the heartbeat tests: the calls below take two of them.
const heartbeatLease = 2 * time.Second

// newHeartbeatEnv is an env on the real clock with a short lease and the slow tool.
func newHeartbeatEnv(t *testing.T, script []model.Turn, slow tool.Tool) *env {
	e := newEnv(t, script)
	e.cfg.Tools = []string{"slow", "lookup"}
	e.saveConfig()
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: append(e.tools, slow), Lease: heartbeatLease})
	t.Cleanup(e.rt.Close)
	return e
}

// reapEvery runs the reaper every interval until the test ends.
func (e *env) reapEvery(interval time.Duration) {
	ctx, cancel := context.WithCancel(e.ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			if _, err := e.rt.Reap(ctx, 50); err != nil && ctx.Err() == nil {
				e.t.Errorf("reap: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-stopped })
}

// TestLeaseRenewedDuringSlowCalls: a model answer or a tool call that takes twice the lease
// does not let the lease lapse under a reaper that runs all the time: the run completes
// without being requeued, and each call is made once.
func TestLeaseRenewedDuringSlowCalls(t *testing.T) {
	slowCall := 2 * heartbeatLease
	cases := []struct {
		name       string
		slowModel  bool
		wantModel  int32
		wantTool   int
		script     []model.Turn
		iterations int
	}{
		{name: "slow model", slowModel: true, wantModel: 1, iterations: 1},
		{name: "slow tool", script: []model.Turn{turn(call("slow", `{}`)), {Content: "done"}}, wantTool: 1, iterations: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rec recorder
			slow := baseTool{name: "slow", rec: &rec, exec: func(ctx context.Context, _ tool.Call) (tool.Result, error) {
				select {
				case <-time.After(slowCall):
					return tool.Result{Content: "slow answer"}, nil
				case <-ctx.Done():
					return tool.Result{}, ctx.Err()
				}
			}}
			e := newHeartbeatEnv(t, c.script, slow)
			var m *modelServer
			if c.slowModel {
				m = newModelServer(t, done(slowCall))
				e.useModel(m.url)
			}
			e.reapEvery(100 * time.Millisecond)
			run, err := e.rt.Start(e.ctx, admin, "test", "go")
			if err != nil {
				t.Fatal(err)
			}
			if !e.runOnce() {
				t.Fatal("nothing claimed")
			}
			r := e.wantStatus(run.UUID, runtime.StatusCompleted)
			if r.RequeueCount != 0 || r.Iterations != c.iterations {
				t.Fatalf("requeues %d iterations %d, want 0 and %d", r.RequeueCount, r.Iterations, c.iterations)
			}
			if m != nil && m.requests.Load() != c.wantModel {
				t.Fatalf("model asked %d times, want %d", m.requests.Load(), c.wantModel)
			}
			if n := len(rec.get("slow")); n != c.wantTool {
				t.Fatalf("slow tool ran %d times, want %d", n, c.wantTool)
			}
		})
	}
}

// TestLeaseLostMidCall: when another owner takes the run while a model or tool call is in
// flight, the next heartbeat finds the lease gone and cancels the call; the segment records
// nothing of it, starts no later call, and leaves the row to the new owner.
func TestLeaseLostMidCall(t *testing.T) {
	const thief = "worker:thief"
	for _, slowModel := range []bool{true, false} {
		name := "tool call"
		if slowModel {
			name = "model call"
		}
		t.Run(name, func(t *testing.T) {
			started := make(chan struct{})
			abandoned := make(chan struct{})
			wait := func(ctx context.Context) {
				close(started)
				select {
				case <-ctx.Done():
					close(abandoned)
				case <-time.After(4 * heartbeatLease):
				}
			}
			var rec recorder
			slow := baseTool{name: "slow", rec: &rec, exec: func(ctx context.Context, _ tool.Call) (tool.Result, error) {
				wait(ctx)
				return tool.Result{Content: "slow answer"}, nil
			}}
			e := newHeartbeatEnv(t, []model.Turn{turn(call("slow", `{}`), call("lookup", `{}`)), {Content: "done"}}, slow)
			if slowModel {
				m := newModelServer(t, func(w http.ResponseWriter, r *http.Request) { wait(r.Context()) })
				e.useModel(m.url)
			}
			run, err := e.rt.Start(e.ctx, admin, "test", "go")
			if err != nil {
				t.Fatal(err)
			}
			ran := make(chan bool, 1)
			go func() { ok, _ := e.rt.RunOnce(e.ctx); ran <- ok }()
			<-started
			if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET claimed_by=? WHERE uuid=?", thief, run.UUID); err != nil {
				t.Fatal(err)
			}
			if !<-ran {
				t.Fatal("nothing claimed")
			}
			select {
			case <-abandoned: // the model endpoint may see the hang-up after the client returned
			case <-time.After(heartbeatLease):
				t.Fatal("the call in flight was not cancelled when the lease was lost")
			}
			r := e.wantStatus(run.UUID, runtime.StatusRunning)
			if r.ClaimedBy != thief {
				t.Fatalf("claimed_by %q, want the new owner's %q", r.ClaimedBy, thief)
			}
			if n := len(e.rec.get("lookup")); n != 0 {
				t.Fatalf("lookup ran %d times after the lease was lost", n)
			}
			want := []string{runtime.EventRequest, runtime.EventLLM}
			if slowModel {
				want = want[:1]
			}
			e.wantKinds(run.UUID, want...)
		})
	}
}
