package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

var testPricing = runtime.Pricing{PromptPer1K: 2, CompletionPer1K: 10}

// wantCost checks that the run's estimated cost is the price of the model calls its events
// record.
func (e *env) wantCost(r runtime.Run, p runtime.Pricing) {
	e.t.Helper()
	_, prompt, completion := e.modelTotals(r.UUID)
	want := p.Cost(prompt, completion)
	if want == 0 || math.Abs(r.EstimatedCost-want) > 1e-6 {
		e.t.Fatalf("estimated cost = %.6f, want %.6f (%d prompt, %d completion tokens)", r.EstimatedCost, want, prompt, completion)
	}
}

// TestCostSurvivesPause: the estimated cost is the configuration's price of every model call;
// a waiting run shows the cost so far, and the resumed run adds the calls after the pause to
// it.
func TestCostSurvivesPause(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{"to":"x"}`))})
	e.cfg.Pricing = testPricing
	e.saveConfig()
	run := e.startAndRun(admin)
	e.wantCost(e.wantStatus(run.UUID, runtime.StatusWaitingApproval), testPricing)
	approve(t, e, admin, run.UUID, true)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.Iterations != 2 {
		t.Fatalf("iterations %d, want 2", r.Iterations)
	}
	e.wantCost(r, testPricing)
}

// TestCostSurvivesCheckpointRecovery: a run recovered from its checkpoint by the reaper keeps
// the cost counted before it.
func TestCostSurvivesCheckpointRecovery(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), turn(call("lookup", `{}`))})
	e.cfg.Pricing = testPricing
	e.saveConfig()
	e.hooks.armAt(runtime.HookMidTool, 2)
	run, err := e.rt.Start(e.ctx, admin, e.cfg.Identifier, "help me")
	if err != nil {
		t.Fatal(err)
	}
	e.runOnce()
	e.clock.Advance(2 * time.Minute)
	if _, err := e.rt.Reap(e.ctx, 10); err != nil {
		t.Fatal(err)
	}
	e.runOnce()
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.RequeueCount != 1 {
		t.Fatalf("requeue count %d: the run was not recovered from its checkpoint", r.RequeueCount)
	}
	e.wantCost(r, testPricing)
}

// TestCancelledRunKeepsCost: a run cancelled while it executes keeps the cost of the model
// calls it made (RecordCancelledTotals).
func TestCancelledRunKeepsCost(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{}`)), turn(call("canceller", `{}`)), turn(call("lookup", `{}`))})
	canceller := baseTool{name: "canceller", rec: e.rec, exec: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		_, err := e.rt.Cancel(ctx, admin, c.RunUUID)
		return tool.Result{Content: "cancelled"}, err
	}}
	e.cfg.Tools, e.cfg.Pricing = []string{"canceller", "lookup"}, testPricing
	e.saveConfig()
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: append(e.tools, canceller), Now: e.clock.Now})
	t.Cleanup(e.rt.Close)
	run := e.startAndRun(admin)
	e.wantCost(e.wantStatus(run.UUID, runtime.StatusCancelled), testPricing)
}

// TestBudgetExhausted: a run whose next model call would take it past its budget (the tokens
// so far plus the call's estimated prompt, or their price) completes budget_exhausted with
// truncated set, after the calls that fitted; the tools of those calls ran.
func TestBudgetExhausted(t *testing.T) {
	script := []model.Turn{turn(call("lookup", `{}`)), turn(call("lookup", `{}`)), turn(call("lookup", `{}`))}
	for name, set := range map[string]func(*runtime.Configuration){
		"by tokens": func(c *runtime.Configuration) { c.Budget.MaxTotalTokens = 20 },
		"by cost": func(c *runtime.Configuration) {
			c.Pricing = runtime.Pricing{PromptPer1K: 1, CompletionPer1K: 1}
			c.Budget.MaxCost = 0.02
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, script)
			set(&e.cfg)
			e.saveConfig()
			run := e.startAndRun(admin)
			r := e.wantStatus(run.UUID, runtime.StatusCompleted)
			if r.TerminationReason != runtime.ReasonBudgetExhausted || !r.Truncated || r.Iterations != 1 {
				t.Fatalf("reason %q truncated %v iterations %d; want budget_exhausted, truncated, 1", r.TerminationReason, r.Truncated, r.Iterations)
			}
			if n := len(e.rec.get("lookup")); n != 1 {
				t.Fatalf("lookup ran %d times, want 1", n)
			}
			if b := e.cfg.Budget; b.MaxTotalTokens > 0 && r.TotalTokens > b.MaxTotalTokens || b.MaxCost > 0 && r.EstimatedCost > b.MaxCost {
				t.Fatalf("totals %d tokens, cost %.6f exceed the budget %+v", r.TotalTokens, r.EstimatedCost, b)
			}
		})
	}
}

// recordingModel is an OpenAI-compatible endpoint that answers its n-th request with
// answers[n] (the last repeating) and keeps the messages of every request.
type recordingModel struct {
	url  string
	mu   sync.Mutex
	sent [][]model.Message
}

func newRecordingModel(t *testing.T, answers ...answer) *recordingModel {
	t.Helper()
	m := &recordingModel{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Messages []model.Message }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("model request: %v", err)
		}
		m.mu.Lock()
		m.sent = append(m.sent, body.Messages)
		n := len(m.sent) - 1
		m.mu.Unlock()
		answers[min(n, len(answers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	m.url = srv.URL + "/v1"
	return m
}

func (m *recordingModel) request(i int) []model.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent[i]
}

func textAnswer(content string) answer {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15}}`, content)
	}
}

func roles(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

// droppedPayloads returns the payloads of the run's dropped events.
func (e *env) droppedPayloads(uuid string) []map[string]int64 {
	var out []map[string]int64
	for _, ev := range e.events(uuid) {
		if ev.Kind != runtime.EventDropped {
			continue
		}
		var p map[string]int64
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			e.t.Fatalf("dropped payload %s: %v", ev.Payload, err)
		}
		out = append(out, p)
	}
	return out
}

// TestContextWindowDropsOldest: before a model call whose estimated transcript exceeds
// max_context_tokens, the oldest non-system messages are dropped, an assistant turn together
// with its tool results, and a dropped event counts them; the system prompt stays. The
// estimates: system 10, user 7, each tool-call turn 9 and its result 9 tokens.
func TestContextWindowDropsOldest(t *testing.T) {
	m := newRecordingModel(t, toolCall("lookup"), toolCall("lookup"), toolCall("lookup"), textAnswer("all done"))
	e := newEnv(t, nil)
	e.cfg.SystemPrompt, e.cfg.MaxContextTokens = "You are a test.", 40
	e.useModel(m.url)
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.TerminationReason != runtime.ReasonCompleted || r.Truncated {
		t.Fatalf("reason %q truncated %v", r.TerminationReason, r.Truncated)
	}
	for i, want := range [][]string{{"system", "user"}, {"system", "user", "assistant", "tool"}, {"system", "assistant", "tool"}, {"system", "assistant", "tool"}} {
		sent := m.request(i)
		if got := roles(sent); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("request %d sent %v, want %v", i, got, want)
		}
		if n := len(sent); n > 2 && (len(sent[n-2].ToolCalls) != 1 || sent[n-1].ToolCallID != sent[n-2].ToolCalls[0].ID) {
			t.Fatalf("request %d split a tool call from its result: %+v", i, sent)
		}
	}
	if got := m.request(2)[0].Content; got != "You are a test." {
		t.Fatalf("system prompt sent as %q", got)
	}
	drops := e.droppedPayloads(run.UUID)
	want := []map[string]int64{
		{"droppedMessages": 3, "droppedToolCalls": 1, "droppedToolResults": 1, "estimatedTokensBefore": 53, "estimatedTokensAfter": 28, "maxContextTokens": 40},
		{"droppedMessages": 2, "droppedToolCalls": 1, "droppedToolResults": 1, "estimatedTokensBefore": 46, "estimatedTokensAfter": 28, "maxContextTokens": 40},
	}
	if fmt.Sprint(drops) != fmt.Sprint(want) {
		t.Fatalf("dropped events %v, want %v", drops, want)
	}
}

// TestContextTruncated: a transcript that cannot fit the window even with every older message
// dropped (the system prompt and the last turn alone exceed it) ends the run completed with
// context_truncated and truncated set, without the model call.
func TestContextTruncated(t *testing.T) {
	m := newRecordingModel(t, toolCall("lookup"), textAnswer("never asked"))
	e := newEnv(t, nil)
	e.cfg.SystemPrompt, e.cfg.MaxContextTokens = "You are a test.", 25
	e.useModel(m.url)
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.TerminationReason != runtime.ReasonContextTruncated || !r.Truncated || r.Iterations != 1 {
		t.Fatalf("reason %q truncated %v iterations %d; want context_truncated, truncated, 1", r.TerminationReason, r.Truncated, r.Iterations)
	}
	if len(m.sent) != 1 || len(e.droppedPayloads(run.UUID)) != 0 {
		t.Fatalf("%d model requests, dropped events %v; want 1 request, none dropped", len(m.sent), e.droppedPayloads(run.UUID))
	}
}

// usageAnswer is a model turn calling lookup whose usage member is usage (none when "").
func usageAnswer(usage string) answer {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body := `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},"finish_reason":"tool_calls"}]`
		if usage != "" {
			body += `,"usage":` + usage
		}
		fmt.Fprint(w, body+"}")
	}
}

// TestUntrustedUsageIsEstimated: a provider reporting negative usage, more than a million tokens
// for one call, or no usage at all is counted at the estimate, so a 1,000-token budget stops
// the run before its 20 iterations; the run is saved with totals that are the sum of its llm
// events, each marked usageEstimated, and every untrusted report is a usage_untrusted
// governance row with its reason and the reported numbers.
func TestUntrustedUsageIsEstimated(t *testing.T) {
	for name, c := range map[string]struct{ usage, reason string }{
		"negative":   {`{"prompt_tokens":-1000000,"completion_tokens":5}`, runtime.ReasonUsageNegative},
		"huge":       {`{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}`, runtime.ReasonUsageTooLarge},
		"over limit": {`{"prompt_tokens":999999,"completion_tokens":2}`, runtime.ReasonUsageTooLarge},
		"missing":    {"", ""},
		"zeros":      {`{"prompt_tokens":0,"completion_tokens":0}`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			m := newModelServer(t, usageAnswer(c.usage))
			e := newEnv(t, nil)
			e.cfg.MaxIterations, e.cfg.Budget.MaxTotalTokens = 20, 1000
			e.useModel(m.url)
			run := e.startAndRun(admin)
			r := e.wantStatus(run.UUID, runtime.StatusCompleted)
			if r.TerminationReason != runtime.ReasonBudgetExhausted || r.Iterations >= 20 {
				t.Fatalf("reason %q after %d iterations; want budget_exhausted before 20", r.TerminationReason, r.Iterations)
			}
			iterations, prompt, completion := e.modelTotals(run.UUID)
			if iterations != r.Iterations || r.PromptTokens != prompt || r.CompletionTokens != completion || r.TotalTokens > 1000 || prompt <= 0 || completion <= 0 {
				t.Fatalf("run totals %d/%d/%d after %d iterations; events count %d/%d after %d",
					r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.Iterations, prompt, completion, iterations)
			}
			for _, ev := range e.events(run.UUID) {
				if ev.Kind == runtime.EventLLM && !strings.Contains(string(ev.Payload), `"usageEstimated":true`) {
					t.Fatalf("llm event %s not marked usageEstimated", ev.Payload)
				}
			}
			rows, err := e.rt.Governance(e.ctx, admin, run.UUID)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if c.reason != "" {
				want = r.Iterations
			}
			if len(rows) != want {
				t.Fatalf("%d governance rows, want %d: %+v", len(rows), want, rows)
			}
			for _, g := range rows {
				if g.Decision != runtime.GovernanceUsageUntrusted || g.Reason != c.reason || !strings.HasPrefix(g.Detail, "reportedPromptTokens=") {
					t.Fatalf("governance row %+v, want usage_untrusted %s", g, c.reason)
				}
			}
		})
	}
}
