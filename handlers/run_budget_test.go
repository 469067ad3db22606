package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/guardrail"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// apiRun reads a run through the JSON API with a read-scoped token.
func (a *testApp) apiRun(uuid string) map[string]any {
	a.t.Helper()
	token, err := a.tokens.CreateToken(a.t.Context(), "reader-"+uuid[:8], []string{runtime.ScopeRead})
	if err != nil {
		a.t.Fatal(err)
	}
	res := a.newClient().request(http.MethodGet, "/api/v1/runs/"+uuid, nil, http.Header{"Authorization": {"Bearer " + token}})
	if res.status != http.StatusOK {
		a.t.Fatalf("GET /api/v1/runs/%s: %d %s", uuid, res.status, res.body)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		a.t.Fatal(err)
	}
	return out
}

// TestRunCostShown: a run the engine executed under a priced configuration shows its
// estimated cost with four decimals on the run page and in the recent runs, and exactly in
// the API's run JSON.
func TestRunCostShown(t *testing.T) {
	t.Parallel()
	priced := deskConfiguration("priced", "Priced", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("lookup", `{}`)}})
	priced.Pricing = runtime.Pricing{PromptPer1K: 3, CompletionPer1K: 15}
	app := newTestApp(t, appOptions{tools: []tool.Tool{deskTool{"lookup"}}, configurations: []runtime.Configuration{priced}})
	uuid := app.pause(runtime.RoleAdmin, "priced")
	run := app.row(uuid)
	if run.Status != runtime.StatusCompleted || run.EstimatedCost <= 0 {
		t.Fatalf("run %s with cost %.6f, want completed with a cost", run.Status, run.EstimatedCost)
	}
	want := fmt.Sprintf("%.4f", run.EstimatedCost)
	admin := app.login(runtime.RoleAdmin)
	if got := strings.TrimSpace(admin.get("/runs/" + uuid).doc(t).Find(`[data-testid="summary-cost"]`).Text()); got != want {
		t.Errorf("run page cost %q, want %q", got, want)
	}
	if got := strings.TrimSpace(admin.get("/runs/recent").doc(t).Find(`[data-testid="recent-cost"]`).First().Text()); got != want {
		t.Errorf("recent runs cost %q, want %q", got, want)
	}
	if got := app.apiRun(uuid)["estimated_cost"]; got != run.EstimatedCost {
		t.Errorf("API estimated_cost %v, want %v", got, run.EstimatedCost)
	}
}

// TestGuardrailApprovalCard: a call a guardrail asked to have approved shows the guardrail's
// reason (escaped) on the approval card and in the API's pending call; approving it from the
// card runs the call and the run completes.
func TestGuardrailApprovalCard(t *testing.T) {
	t.Parallel()
	const reason = `Refund above the limit <b>check</b>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"decision":"require_approval","reason":%q}`, reason)
	}))
	t.Cleanup(srv.Close)
	cfg := deskConfiguration("guarded", "Guarded", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("lookup", `{"order":"A1"}`)}})
	cfg.Guardrails = []guardrail.Spec{{HTTP: &guardrail.HTTPSpec{URL: srv.URL}, On: []string{guardrail.OnArguments}}}
	app := newTestApp(t, appOptions{tools: []tool.Tool{deskTool{"lookup"}}, configurations: []runtime.Configuration{cfg}})
	uuid := app.pause(runtime.RoleAdmin, "guarded")
	if s := app.row(uuid).Status; s != runtime.StatusWaitingApproval {
		t.Fatalf("run %s, want waiting_for_approval", s)
	}
	rita := app.login(runtime.RoleReviewer)
	page := rita.get("/runs/" + uuid)
	if got := page.doc(t).Find(`[data-testid="call-guardrail-reason"]`).Text(); got != reason {
		t.Errorf("card shows guardrail reason %q, want %q", got, reason)
	}
	if strings.Contains(page.body, "<b>check</b>") {
		t.Error("the guardrail's reason is not escaped")
	}
	calls := app.apiRun(uuid)["pending"].(map[string]any)["calls"].([]any)
	if got := calls[0].(map[string]any)["guardrail_reason"]; got != reason {
		t.Errorf("API guardrail_reason %v, want %q", got, reason)
	}
	wantSeeOther(t, "approve", rita.postForm("/runs/"+uuid+"/approval", rita.approvalFormOf(uuid, "approve")), "/runs/"+uuid)
	if run := app.row(uuid); run.Status != runtime.StatusCompleted || run.TerminationReason != runtime.ReasonCompleted {
		t.Fatalf("run after approval: %s %s, want completed", run.Status, run.TerminationReason)
	}
	done := rita.get("/runs/" + uuid)
	timeline := done.doc(t).Find(`[data-testid="timeline"]`).Text()
	if !strings.Contains(timeline, "Approval required: a guardrail asked for a person's approval") || !strings.Contains(timeline, "guardrails[0] http 127.0.0.1:") {
		t.Errorf("timeline %q does not show the guardrail's row", timeline)
	}
	if strings.Contains(done.body, "Refund above the limit") {
		t.Error("the finished run's page still shows the guardrail's reason")
	}
	var ran bool
	for _, e := range app.storedEvents(uuid) {
		ran = ran || e.Kind == runtime.EventTool && strings.Contains(string(e.Payload), `"toolIsError":false`)
	}
	if !ran {
		t.Error("the approved call did not run")
	}
}

// TestTimelineDescribesDrops: a dropped event is shown with its counts and estimates.
func TestTimelineDescribesDrops(t *testing.T) {
	t.Parallel()
	e := stepEntry(runtime.Event{Kind: runtime.EventDropped, Payload: json.RawMessage(`{"droppedMessages":3,"droppedToolCalls":1,
		"droppedToolResults":1,"estimatedTokensBefore":53,"estimatedTokensAfter":28,"maxContextTokens":40}`)}, nameBook{})
	if e.Summary != "Older messages dropped to fit the context window" ||
		strings.Join(e.Details, " | ") != "3 messages (tool calls: 1, tool results: 1) | about 53 → 28 of 40 tokens" {
		t.Fatalf("entry %q %q", e.Summary, e.Details)
	}
}

// TestTimelineDescribesUntrustedUsage: a usage_untrusted row is worded as a model call counted at
// the estimate, with why; an llm event whose usage was estimated says so.
func TestTimelineDescribesUntrustedUsage(t *testing.T) {
	t.Parallel()
	llm := runtime.Event{Kind: runtime.EventLLM, Payload: []byte(`{"promptTokens":1200,"completionTokens":7,"usageEstimated":true}`)}
	if got := stepEntry(llm, nameBook{}).Details; !slices.Contains(got, "1200 prompt + 7 completion tokens (estimated)") {
		t.Errorf("llm details %q do not say the usage was estimated", got)
	}
	for reason, want := range map[string]string{
		runtime.ReasonUsageNegative: "The model's usage was not trusted: the provider reported a negative token count, so the call was counted at the estimate",
		runtime.ReasonUsageTooLarge: "The model's usage was not trusted: the provider reported more than 1,000,000 tokens for one call, so the call was counted at the estimate",
	} {
		g := runtime.GovernanceEvent{Decision: runtime.GovernanceUsageUntrusted, Reason: reason, Detail: "reportedPromptTokens=-1; reportedCompletionTokens=5"}
		if got := governanceEntry(g, 1, nameBook{}).Summary; got != want {
			t.Errorf("%s: summary %q, want %q", reason, got, want)
		}
	}
}
