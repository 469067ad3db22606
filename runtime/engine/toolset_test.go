package engine_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// TestChangedToolDefinitionApplies: a data-defined tool changed between two runs is used in
// its new form by the second run (the registry is rebuilt when the definitions change).
func TestChangedToolDefinitionApplies(t *testing.T) {
	var first, second atomic.Int32
	endpoint := func(n *atomic.Int32) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			n.Add(1)
			_, _ = w.Write([]byte(`{"content":"ok"}`))
		}))
	}
	a, b := endpoint(&first), endpoint(&second)
	defer a.Close()
	defer b.Close()
	e := newEnv(t, []model.Turn{turn(call("remote", `{}`))})
	def := tool.Definition{Name: "remote", Description: "remote tool", Parameters: json.RawMessage(`{"type":"object"}`), HTTP: tool.HTTPConfig{URL: a.URL}}
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		t.Fatal(err)
	}
	e.cfg.Tools = []string{"remote"}
	e.saveConfig()
	e.wantStatus(e.startAndRun(admin).UUID, runtime.StatusCompleted)
	def.HTTP.URL = b.URL
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		t.Fatal(err)
	}
	e.wantStatus(e.startAndRun(admin).UUID, runtime.StatusCompleted)
	if first.Load() != 1 || second.Load() != 1 {
		t.Fatalf("calls: old endpoint %d, new endpoint %d; want 1 and 1", first.Load(), second.Load())
	}
}
