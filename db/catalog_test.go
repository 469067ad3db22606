package db

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/guardrail"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

func refundsConfiguration() runtime.Configuration {
	return runtime.Configuration{
		Identifier: "refunds",
		Name:       "Refund assistant",
		Provider: model.Settings{Kind: "scripted", BaseURL: "http://127.0.0.1:11434/v1",
			Model: "llama3.1", APIKeyEnv: "OPENAI_API_KEY", Timeout: 90 * time.Second, MaxRetries: new(2),
			Script: []model.Turn{{ToolCalls: []model.ScriptedCall{{Name: "issue_refund",
				Arguments: json.RawMessage(`{"order_id":"A1"}`)}}}, {Content: "done"}}},
		SystemPrompt:          "You help support staff process refunds.",
		MaxIterations:         10,
		RequireSecondApprover: true,
		Tools:                 []string{"lookup_order", "ask_refund_amount", "issue_refund"},
		Privacy:               runtime.PrivacyMetadata,
		SupportSees:           runtime.PrivacyRedacted,
	}
}

func TestUpsertConfiguration(t *testing.T) {
	s, _ := newStore(t)
	c := refundsConfiguration()
	steps := []struct {
		name        string
		edit        func(c *runtime.Configuration)
		wantChanged bool
	}{
		{"create", func(*runtime.Configuration) {}, true},
		{"same again", func(*runtime.Configuration) {}, false},
		{"tool order matters", func(c *runtime.Configuration) {
			c.Tools = []string{"issue_refund", "lookup_order", "ask_refund_amount"}
		}, true},
		{"timeout", func(c *runtime.Configuration) { c.Provider.Timeout = time.Minute }, true},
		{"same after edits", func(*runtime.Configuration) {}, false},
		{"no retries", func(c *runtime.Configuration) { c.Provider.MaxRetries = new(0) }, true},
		{"no retries again", func(*runtime.Configuration) {}, false},
		{"default retries", func(c *runtime.Configuration) { c.Provider.MaxRetries = nil }, true},
		{"second approver off", func(c *runtime.Configuration) { c.RequireSecondApprover = false }, true},
		{"pricing, budget, window", func(c *runtime.Configuration) {
			c.Pricing = runtime.Pricing{PromptPer1K: 0.0025, CompletionPer1K: 0.00000015}
			c.Budget = runtime.Budget{MaxTotalTokens: 50000, MaxCost: 0.5}
			c.MaxContextTokens = 16000
		}, true},
		{"limits again", func(*runtime.Configuration) {}, false},
		{"guardrails", func(c *runtime.Configuration) {
			c.Guardrails = []guardrail.Spec{{DenyPattern: "(?i)ignore", On: []string{"arguments", "output"}},
				{HTTP: &guardrail.HTTPSpec{URL: "http://127.0.0.1:9300/check", TimeoutMS: 5000}, On: []string{"arguments"}}}
		}, true},
		{"guardrails again", func(*runtime.Configuration) {}, false},
		{"no guardrails", func(c *runtime.Configuration) { c.Guardrails = nil }, true},
		{"privacy full", func(c *runtime.Configuration) { c.Privacy = runtime.PrivacyFull }, true},
		{"support sees full", func(c *runtime.Configuration) { c.SupportSees = runtime.PrivacyFull }, true},
		{"privacy again", func(*runtime.Configuration) {}, false},
		{"kind external", func(c *runtime.Configuration) {
			c.External = &runtime.ExternalPolicy{Callers: []string{"claude-code", "nightly-cron"}}
		}, true},
		{"external again", func(*runtime.Configuration) {}, false},
		{"ad hoc", func(c *runtime.Configuration) {
			c.External = &runtime.ExternalPolicy{Callers: []string{"claude-code", "nightly-cron"}, AdHoc: true}
		}, true},
		{"callers order matters", func(c *runtime.Configuration) {
			c.External = &runtime.ExternalPolicy{Callers: []string{"nightly-cron", "claude-code"}, AdHoc: true}
		}, true},
		{"agent again", func(c *runtime.Configuration) { c.External = nil }, true},
	}
	for _, step := range steps {
		step.edit(&c)
		changed, err := s.UpsertConfiguration(t.Context(), c)
		if err != nil || changed != step.wantChanged {
			t.Fatalf("%s: got changed=%v, %v, want %v, nil", step.name, changed, err, step.wantChanged)
		}
		got, err := s.ConfigurationByIdentifier(t.Context(), c.Identifier)
		if err != nil {
			t.Fatalf("%s: ConfigurationByIdentifier: %v", step.name, err)
		}
		want := c
		want.UID = got.UID
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: stored configuration:\ngot  %+v\nwant %+v", step.name, got, want)
		}
		byUID, err := s.ConfigurationByUID(t.Context(), got.UID)
		if err != nil || !reflect.DeepEqual(byUID, want) {
			t.Fatalf("%s: ConfigurationByUID: got %+v, %v", step.name, byUID, err)
		}
	}
	if _, err := s.UpsertConfiguration(t.Context(), runtime.Configuration{}); err == nil {
		t.Fatalf("empty identifier: got nil error, want a refusal")
	}
}

func TestCatalogHidesDeletedAndHidden(t *testing.T) {
	s, _ := newStore(t)
	for _, id := range []string{"live", "gone", "hidden"} {
		c := refundsConfiguration()
		c.Identifier = id
		if _, err := s.UpsertConfiguration(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.Exec(`UPDATE tx_nrllm_configuration SET deleted = 1 WHERE identifier = 'gone'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE tx_nrllm_configuration SET hidden = 1 WHERE identifier = 'hidden'`); err != nil {
		t.Fatal(err)
	}
	all, err := s.Configurations(t.Context())
	if err != nil || len(all) != 1 || all[0].Identifier != "live" {
		t.Fatalf("Configurations: got %+v, %v, want only live", all, err)
	}
	for _, id := range []string{"gone", "hidden", "never"} {
		if _, err := s.ConfigurationByIdentifier(t.Context(), id); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("ConfigurationByIdentifier(%q): got %v, want runtime.ErrNotFound", id, err)
		}
	}
	c := refundsConfiguration()
	c.Identifier = "gone"
	if changed, err := s.UpsertConfiguration(t.Context(), c); err != nil || !changed {
		t.Fatalf("re-applying a deleted configuration: got changed=%v, %v, want true, nil", changed, err)
	}
	if _, err := s.ConfigurationByIdentifier(t.Context(), "gone"); err != nil {
		t.Fatalf("revived configuration: got %v, want nil", err)
	}
}

func TestCatalogRefusesCorruptJSON(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.UpsertConfiguration(t.Context(), refundsConfiguration()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE tx_nrllm_configuration SET allowed_tools = '[oops'`); err != nil {
		t.Fatal(err)
	}
	_, err := s.ConfigurationByIdentifier(t.Context(), "refunds")
	if err == nil || errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("corrupt allowed_tools: got %v, want a decode error", err)
	}
	if _, err := s.Configurations(t.Context()); err == nil {
		t.Fatalf("Configurations with a corrupt row: got nil error, want one")
	}
	if _, err := s.db.Exec(`UPDATE tx_nrllm_configuration SET allowed_tools = '[]', guardrails = '{"on":'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConfigurationByIdentifier(t.Context(), "refunds"); err == nil || !strings.Contains(err.Error(), "guardrails") {
		t.Fatalf("corrupt guardrails: got %v, want a decode error naming them", err)
	}
}

func TestUpsertTool(t *testing.T) {
	s, _ := newStore(t)
	d := tool.Definition{
		Name:        "issue_refund",
		Description: "Issue the refund.",
		Parameters:  json.RawMessage(`{"type": "object", "required": ["order_id"]}`),
		Effect:      tool.EffectNonIdempotentWrite,
		AdminOnly:   true,
		HTTP: tool.HTTPConfig{URL: "http://127.0.0.1:9000/refund",
			Headers: map[string]string{"Authorization": "Bearer ${REFUND_TOKEN}", "X-A": "1"},
			Timeout: 10 * time.Second, MaxResponseBytes: 4096},
	}
	input := tool.Definition{Name: "ask_refund_amount", Description: "Ask.",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		InputSchema: json.RawMessage(`{"type":"object","required":["amount"]}`),
		HTTP:        tool.HTTPConfig{URL: "http://127.0.0.1:9000/amount"}}
	steps := []struct {
		name        string
		def         func() tool.Definition
		wantChanged bool
	}{
		{"create", func() tool.Definition { return d }, true},
		{"same again", func() tool.Definition { return d }, false},
		{"same JSON, other whitespace", func() tool.Definition {
			e := d
			e.Parameters = json.RawMessage(`{"type":"object","required":["order_id"]}`)
			return e
		}, false},
		{"approval flag", func() tool.Definition { e := d; e.RequiresApproval = true; return e }, true},
		{"editable flag", func() tool.Definition { e := d; e.RequiresApproval, e.Editable = true, true; return e }, true},
		{"arguments bound", func() tool.Definition {
			e := d
			e.RequiresApproval, e.Editable, e.MaxArgumentsBytes = true, true, 2048
			return e
		}, true},
		{"create input tool", func() tool.Definition { return input }, true},
	}
	for _, step := range steps {
		changed, err := s.UpsertTool(t.Context(), step.def())
		if err != nil || changed != step.wantChanged {
			t.Fatalf("%s: got changed=%v, %v, want %v, nil", step.name, changed, err, step.wantChanged)
		}
	}
	got, err := s.ToolDefinitions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantFirst := d
	wantFirst.RequiresApproval = true
	wantFirst.Editable = true
	wantFirst.MaxArgumentsBytes = 2048
	wantFirst.Parameters = json.RawMessage(`{"type":"object","required":["order_id"]}`)
	want := []tool.Definition{wantFirst, input}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ToolDefinitions:\ngot  %+v\nwant %+v", got, want)
	}
	for _, bad := range []tool.Definition{{}, {Name: "x", Parameters: json.RawMessage(`{`)}} {
		if _, err := s.UpsertTool(t.Context(), bad); err == nil {
			t.Fatalf("UpsertTool(%+v): got nil error, want a refusal", bad)
		}
	}
}

// TestUpsertCatalogIsOneTransaction: a database failure on the last item (a trigger refusing
// its update) rolls back the tools and configurations written before it in the same call.
func TestUpsertCatalogIsOneTransaction(t *testing.T) {
	s, sqlDB := newStore(t)
	ctx := t.Context()
	lookup := tool.Definition{Name: "lookup_order", Parameters: json.RawMessage(`{"type":"object"}`), HTTP: tool.HTTPConfig{URL: "http://x/"}}
	first, second := refundsConfiguration(), refundsConfiguration()
	second.Identifier = "refunds-later"
	if _, err := s.UpsertCatalog(ctx, nil, []runtime.Configuration{second}); err != nil {
		t.Fatal(err)
	}
	_, err := sqlDB.ExecContext(ctx, `CREATE TRIGGER refuse_update BEFORE UPDATE ON tx_nrllm_configuration
		FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'`)
	if err != nil {
		t.Fatal(err)
	}
	second.Name = "Changed"
	wrote, err := s.UpsertCatalog(ctx, []tool.Definition{lookup}, []runtime.Configuration{first, second})
	if err == nil || wrote != nil || !strings.Contains(err.Error(), `upsert configuration "refunds-later"`) {
		t.Fatalf("UpsertCatalog = %v, %v; want the failure naming the configuration", wrote, err)
	}
	tools, err := s.ToolDefinitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := s.Configurations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 0 || len(configs) != 1 || configs[0].Identifier != "refunds-later" || configs[0].Name != "Refund assistant" {
		t.Errorf("after the failed call: tools %+v, configurations %+v", tools, configs)
	}
}
