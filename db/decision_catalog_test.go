package db

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
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
	cfg := storedRefunds(t, s)
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

// TestFindForDecisionIsFindAndCatalogInOne: FindForDecision returns what FindByUUID and
// ConfigurationForDecision return apart (the definitions only for an unknown version), and
// reports a missing run and a configuration gone (deleted or hidden) as each does.
func TestFindForDecisionIsFindAndCatalogInOne(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	cfg := storedRefunds(t, s)
	run := runOf(t, s, cfg.UID)
	if err := s.Suspend(ctx, run.UID, "w:1", runtime.Suspension{Status: runtime.StatusWaitingInput,
		State: `{"messages":[]}`, Tools: []string{"ask"}}, t0+5); err != nil {
		t.Fatal(err)
	}
	check := func(step, known string) runtime.DecisionRead {
		t.Helper()
		got, read, err := s.FindForDecision(ctx, run.UUID, known)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want, err := s.FindByUUID(ctx, run.UUID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: run %+v, want %+v (%v)", step, got, want, err)
		}
		wantCfg, wantTools, err := s.ConfigurationForDecision(ctx, cfg.UID, known)
		if read.Err != nil || err != nil || !reflect.DeepEqual(read.Configuration, wantCfg) || !reflect.DeepEqual(read.Tools, wantTools) {
			t.Fatalf("%s: read %+v, want %+v %+v (%v)", step, read, wantCfg, wantTools, err)
		}
		return read
	}
	first := check("unknown version", "unknown")
	if !first.Tools.Read {
		t.Fatal("an unknown version did not read the definitions")
	}
	if again := check("known version", first.Tools.Version); again.Tools.Read {
		t.Fatal("a known version read the definitions again")
	}
	if _, _, err := s.FindForDecision(ctx, "00000000-0000-4000-8000-000000000000", ""); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("a missing run: %v, want ErrNotFound", err)
	}
	for _, gone := range []string{"hidden", "deleted"} {
		if _, err := pool.ExecContext(ctx, "UPDATE tx_nrllm_configuration SET "+gone+" = 1 WHERE uid = ?", cfg.UID); err != nil {
			t.Fatal(err)
		}
		got, read, err := s.FindForDecision(ctx, run.UUID, "")
		if err != nil || got.UID != run.UID || !errors.Is(read.Err, runtime.ErrNotFound) {
			t.Fatalf("configuration %s: run %d, read error %v, error %v; want the run and ErrNotFound", gone, got.UID, read.Err, err)
		}
		if _, err := pool.ExecContext(ctx, "UPDATE tx_nrllm_configuration SET "+gone+" = 0 WHERE uid = ?", cfg.UID); err != nil {
			t.Fatal(err)
		}
	}
}

// storedRefunds stores refundsConfiguration and returns it as read back.
func storedRefunds(t *testing.T, s *Store) runtime.Configuration {
	t.Helper()
	if _, err := s.UpsertConfiguration(t.Context(), refundsConfiguration()); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.ConfigurationByIdentifier(t.Context(), "refunds")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestToolDefinitionDigestCoversTheColumns: the server's digest of a tool row
// (definition_digest, which the tools' version is made of) is over exactly the columns a
// definition is read from (toolColumns), each quoted, in their order; a column added to
// toolColumns without a migration that adds it to the digest fails here.
func TestToolDefinitionDigestCoversTheColumns(t *testing.T) {
	_, pool := newStore(t)
	var expr string
	if err := pool.QueryRowContext(t.Context(), `SELECT GENERATION_EXPRESSION FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tx_runsdesk_tool' AND COLUMN_NAME = 'definition_digest'`).Scan(&expr); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile("quote\\(`?([a-z0-9_]+)`?\\)").FindAllStringSubmatch(strings.ToLower(expr), -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, c := range strings.Split(toolColumns, ",") {
		want = append(want, strings.TrimSpace(c))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("definition_digest quotes %v, want toolColumns %v (expression %s)", got, want, expr)
	}
}
