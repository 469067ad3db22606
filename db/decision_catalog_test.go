package db

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// TestConfigurationForDecisionVersionsTheTools: the tools' version read with the
// configuration changes with every change of a live tool definition (a column, one added,
// one deleted) and with nothing else (the same definitions have the same version); a known version reads no definitions, an unknown one
// returns the definitions ToolDefinitions returns; a missing configuration is ErrNotFound.
func TestConfigurationForDecisionVersionsTheTools(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	if _, err := s.UpsertConfiguration(ctx, refundsConfiguration()); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.ConfigurationByIdentifier(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	read := func(step, known string) runtime.ToolsRead {
		t.Helper()
		got, tools, err := s.ConfigurationForDecision(ctx, cfg.UID, known)
		if err != nil || got.Identifier != "refunds" || !reflect.DeepEqual(got.Tools, cfg.Tools) {
			t.Fatalf("%s: configuration %+v, %v", step, got, err)
		}
		if tools.Read != (tools.Version != known) {
			t.Fatalf("%s: read=%v with version %q, known %q", step, tools.Read, tools.Version, known)
		}
		if tools.Read {
			want, err := s.ToolDefinitions(ctx)
			if err != nil || !reflect.DeepEqual(tools.Definitions, want) {
				t.Fatalf("%s: definitions %+v, want %+v (%v)", step, tools.Definitions, want, err)
			}
		}
		return tools
	}
	changed := func(step string, last runtime.ToolsRead) runtime.ToolsRead {
		t.Helper()
		now := read(step, last.Version)
		if !now.Read {
			t.Fatalf("%s: version %q unchanged", step, now.Version)
		}
		if again := read(step+", known", now.Version); again.Read || again.Version != now.Version {
			t.Fatalf("%s: read again as %+v", step, again)
		}
		return now
	}
	v := changed("no tools", runtime.ToolsRead{Version: "unknown"})
	if v.Version != toolsVersionNone || len(v.Definitions) != 0 {
		t.Fatalf("no tools: %+v", v)
	}
	def := tool.Definition{Name: "lookup_order", Description: "Look up.", Parameters: json.RawMessage(`{"type":"object"}`),
		Effect: tool.EffectReadOnly, HTTP: tool.HTTPConfig{URL: "http://127.0.0.1:9000/lookup"}}
	upsert := func(d tool.Definition) {
		t.Helper()
		if _, err := s.UpsertTool(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	upsert(def)
	v = changed("one tool", v)
	def.AdminOnly = true
	upsert(def)
	v = changed("made admin-only", v)
	def.HTTP.URL = "http://127.0.0.1:9000/lookup2"
	upsert(def)
	v = changed("new url", v)
	oneTool := v.Version
	upsert(tool.Definition{Name: "issue_refund", Description: "Refund.", Parameters: json.RawMessage(`{"type":"object"}`),
		Effect: tool.EffectNonIdempotentWrite, HTTP: tool.HTTPConfig{URL: "http://127.0.0.1:9000/refund"}})
	v = changed("second tool", v)
	if _, err := pool.ExecContext(ctx, `UPDATE tx_runsdesk_tool SET tstamp = tstamp + 5`); err != nil {
		t.Fatal(err)
	}
	if now := read("tstamp only", v.Version); now.Read {
		t.Fatalf("a write that changes no definition changed the version: %q → %q", v.Version, now.Version)
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_runsdesk_tool SET deleted = 1 WHERE name = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	if v = changed("second tool deleted", v); v.Version != oneTool {
		t.Fatalf("the same definitions again: version %q, want %q as before the second tool", v.Version, oneTool)
	}
	if _, _, err := s.ConfigurationForDecision(ctx, cfg.UID+1000, v.Version); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("missing configuration: %v, want ErrNotFound", err)
	}
}
