package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// modelTotals sums the iterations and tokens of the model calls a run's events record.
func (e *env) modelTotals(uuid string) (iterations int, prompt, completion int64) {
	e.t.Helper()
	for _, ev := range e.events(uuid) {
		if ev.Kind != runtime.EventLLM {
			continue
		}
		var p struct{ PromptTokens, CompletionTokens int64 }
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			e.t.Fatalf("llm event payload: %v", err)
		}
		iterations++
		prompt += p.PromptTokens
		completion += p.CompletionTokens
	}
	return iterations, prompt, completion
}

func (e *env) wantTotals(r runtime.Run, iterations int) {
	e.t.Helper()
	it, prompt, completion := e.modelTotals(r.UUID)
	if it != iterations {
		e.t.Fatalf("%d model calls recorded, want %d", it, iterations)
	}
	if r.Iterations != it || r.PromptTokens != prompt || r.CompletionTokens != completion || r.TotalTokens != prompt+completion {
		e.t.Fatalf("cancelled run totals = %d iterations, %d/%d/%d tokens; want %d, %d/%d/%d",
			r.Iterations, r.PromptTokens, r.CompletionTokens, r.TotalTokens, it, prompt, completion, prompt+completion)
	}
	if prompt == 0 {
		e.t.Fatal("the model calls recorded no tokens")
	}
}

// TestCancelRunningKeepsTotals: a run cancelled while it executes keeps the iterations and
// tokens of the model calls it made, those after its last stored progress included, whether
// the cancel is noticed at a guarded write after a tool call or by the heartbeat of a model
// call in flight.
func TestCancelRunningKeepsTotals(t *testing.T) {
	t.Run("noticed after a tool call", func(t *testing.T) {
		e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), turn(call("canceller", `{}`)), turn(call("lookup", `{}`))})
		canceller := baseTool{name: "canceller", rec: e.rec, exec: func(ctx context.Context, c tool.Call) (tool.Result, error) {
			_, err := e.rt.Cancel(ctx, admin, c.RunUUID)
			return tool.Result{Content: "cancelled"}, err
		}}
		e.cfg.Tools = []string{"canceller", "lookup"}
		e.saveConfig()
		e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: append(e.tools, canceller), Now: e.clock.Now})
		t.Cleanup(e.rt.Close)
		run := e.startAndRun(admin)
		e.wantTotals(e.wantStatus(run.UUID, runtime.StatusCancelled), 2)
	})
	t.Run("noticed during a model call", func(t *testing.T) {
		inFlight := make(chan struct{})
		m := newModelServer(t, toolCall("lookup"), func(w http.ResponseWriter, r *http.Request) {
			close(inFlight)
			<-r.Context().Done()
		})
		e := newHeartbeatEnv(t, nil, baseTool{name: "slow", rec: &recorder{}})
		e.useModel(m.url)
		run, err := e.rt.Start(e.ctx, admin, "test", "go")
		if err != nil {
			t.Fatal(err)
		}
		ran := make(chan bool, 1)
		go func() { ok, _ := e.rt.RunOnce(e.ctx); ran <- ok }()
		<-inFlight
		if _, err := e.rt.Cancel(e.ctx, admin, run.UUID); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ran:
		case <-time.After(4 * heartbeatLease):
			t.Fatal("the segment did not stop after the cancel")
		}
		e.wantTotals(e.wantStatus(run.UUID, runtime.StatusCancelled), 1)
	})
}

// toolCall answers with one call of the named tool.
func toolCall(name string) answer { return toolCallWith(name, "{}") }

// toolCallWith answers with one call of tool name with the arguments text args.
func toolCallWith(name, args string) answer {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":%q,"arguments":%q}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15}}`, name, args)
	}
}
