package engine_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// modelServer is an OpenAI-compatible endpoint: its n-th request (from 0) is answered by
// answers[n], the last answer repeating.
type modelServer struct {
	url      string
	requests atomic.Int32
}

type answer func(w http.ResponseWriter, r *http.Request)

func newModelServer(t *testing.T, answers ...answer) *modelServer {
	t.Helper()
	m := &modelServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(m.requests.Add(1)) - 1
		_, _ = io.Copy(io.Discard, r.Body) // read to the end, so a client hanging up cancels r.Context()
		answers[min(n, len(answers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	m.url = srv.URL + "/v1"
	return m
}

func status(code int) answer {
	return func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"try again"}}`, code)
	}
}

// hangUp closes the connection without an answer (a transport error).
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// done answers "done" without tool calls after delay (or when the request is abandoned).
func done(delay time.Duration) answer {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`)
	}
}

// useModel points the test configuration at an OpenAI-compatible endpoint that the client
// does not retry on its own (max_retries 0).
func (e *env) useModel(url string) {
	e.t.Helper()
	e.cfg.Provider = model.Settings{Kind: model.KindOpenAI, BaseURL: url, Model: "m", MaxRetries: new(0)}
	e.saveConfig()
}

func (e *env) setRequeues(uuid string, n int) {
	e.t.Helper()
	if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET requeue_count=? WHERE uuid=?", n, uuid); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) runOnce() bool {
	e.t.Helper()
	ok, err := e.rt.RunOnce(e.ctx)
	if err != nil {
		e.t.Fatalf("run once: %v", err)
	}
	return ok
}

// TestRetryableProviderFailureRequeues: a 429, a 5xx or a transport failure (after the
// client's own retries, none here) hands the run back to the queue with the backoff
// 30 s·2ⁿ of its requeues so far; no worker claims it before then, and the API view shows
// the retry time. Past the shared requeue budget the run is dead-lettered retries_exhausted.
// A client error fails the run at once.
func TestRetryableProviderFailureRequeues(t *testing.T) {
	cases := []struct {
		name       string
		answers    []answer
		wantWaits  []time.Duration
		wantStatus runtime.Status
		wantReason string
		wantClass  string
	}{
		{name: "503 then an answer", answers: []answer{status(503), done(0)},
			wantWaits: []time.Duration{30 * time.Second}, wantStatus: runtime.StatusCompleted, wantReason: runtime.ReasonCompleted},
		{name: "429, hang-up, 500, then an answer", answers: []answer{status(429), hangUp, status(500), done(0)},
			wantWaits: []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second}, wantStatus: runtime.StatusCompleted,
			wantReason: runtime.ReasonCompleted},
		{name: "always 502: budget spent", answers: []answer{status(502)},
			wantWaits: []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second}, wantStatus: runtime.StatusFailed,
			wantReason: runtime.ReasonRetriesExhausted, wantClass: "ProviderHTTPError"},
		{name: "400 is not retried", answers: []answer{status(400)},
			wantStatus: runtime.StatusFailed, wantReason: runtime.ReasonProviderFailed, wantClass: "ProviderHTTPError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			m := newModelServer(t, c.answers...)
			e.useModel(m.url)
			run, err := e.rt.Start(e.ctx, admin, "test", "go")
			if err != nil {
				t.Fatal(err)
			}
			for i, wait := range c.wantWaits {
				if !e.runOnce() {
					t.Fatalf("attempt %d: nothing claimed", i+1)
				}
				r := e.wantStatus(run.UUID, runtime.StatusQueued)
				want := e.clock.Now().Add(wait).Unix()
				if r.RequeueCount != i+1 || r.RetryAt != want {
					t.Fatalf("attempt %d: requeues %d retry_at %d, want %d and %d", i+1, r.RequeueCount, r.RetryAt, i+1, want)
				}
				if v := e.view(run.UUID); v.Run.RetryAt != want {
					t.Fatalf("view retry_at = %d, want %d", v.Run.RetryAt, want)
				}
				e.clock.Advance(wait - time.Second)
				if e.runOnce() {
					t.Fatalf("attempt %d: claimed a second before its retry time", i+1)
				}
				e.clock.Advance(time.Second)
			}
			if !e.runOnce() {
				t.Fatal("last attempt: nothing claimed")
			}
			r := e.wantStatus(run.UUID, c.wantStatus)
			if r.TerminationReason != c.wantReason || r.ErrorClass != c.wantClass {
				t.Fatalf("reason %q class %q, want %q and %q", r.TerminationReason, r.ErrorClass, c.wantReason, c.wantClass)
			}
			if got, want := int(m.requests.Load()), len(c.wantWaits)+1; got != want {
				t.Fatalf("model asked %d times, want %d", got, want)
			}
		})
	}
}

// TestEveryRequeueCountsAgainstBudget: a hand-back after a store fault and a shutdown's
// requeue use the same requeue budget as the reaper: they count, and a run that has spent it
// is dead-lettered retries_exhausted instead of queued again.
func TestEveryRequeueCountsAgainstBudget(t *testing.T) {
	cases := []struct {
		name      string
		interrupt func(t *testing.T, requeues int) (*env, string)
		requeues  int
		want      runtime.Status
	}{
		{"store fault, budget left", handBackAfterFault, engine.MaxRequeues - 1, runtime.StatusQueued},
		{"store fault, budget spent", handBackAfterFault, engine.MaxRequeues, runtime.StatusFailed},
		{"shutdown, budget left", shutDownMidTool, engine.MaxRequeues - 1, runtime.StatusQueued},
		{"shutdown, budget spent", shutDownMidTool, engine.MaxRequeues, runtime.StatusFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, uuid := c.interrupt(t, c.requeues)
			r := e.wantStatus(uuid, c.want)
			if c.want == runtime.StatusQueued && r.RequeueCount != c.requeues+1 {
				t.Fatalf("requeue_count %d, want %d", r.RequeueCount, c.requeues+1)
			}
			if c.want == runtime.StatusFailed && (r.TerminationReason != runtime.ReasonRetriesExhausted || r.RequeueCount != c.requeues) {
				t.Fatalf("reason %q requeues %d, want %q and %d", r.TerminationReason, r.RequeueCount, runtime.ReasonRetriesExhausted, c.requeues)
			}
		})
	}
}

// handBackAfterFault runs a run that has been requeued requeues times; its first checkpoint
// fails with a connection error.
func handBackAfterFault(t *testing.T, requeues int) (*env, string) {
	out := &outageStore{}
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`))}, withStore(func(s runtime.Store) runtime.Store { out.Store = s; return out }))
	run, err := e.rt.Start(e.ctx, admin, "test", "go")
	if err != nil {
		t.Fatal(err)
	}
	e.setRequeues(run.UUID, requeues)
	if !e.runOnce() {
		t.Fatal("nothing claimed")
	}
	return e, run.UUID
}

// shutDownMidTool runs a run that has been requeued requeues times on the worker pool and
// shuts the pool down while a tool executes.
func shutDownMidTool(t *testing.T, requeues int) (*env, string) {
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
	run, err := e.rt.Start(e.ctx, admin, "test", "go")
	if err != nil {
		t.Fatal(err)
	}
	e.setRequeues(run.UUID, requeues)
	ctx, cancel := context.WithCancel(e.ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- e.rt.Run(ctx) }()
	<-started
	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	return e, run.UUID
}
