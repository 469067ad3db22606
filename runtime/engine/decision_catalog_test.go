package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// definitionReads counts the decisions' reads of the tool definitions.
type definitionReads struct {
	runtime.Store
	n atomic.Int32
}

func (c *definitionReads) FindForDecision(ctx context.Context, uuid, known string) (runtime.Run, runtime.DecisionRead, error) {
	run, read, err := c.Store.FindForDecision(ctx, uuid, known)
	if read.Tools.Read {
		c.n.Add(1)
	}
	return run, read, err
}

// TestDecisionReadsChangedToolsOnly: a decision reads the tool definitions only when they
// changed since the last decision's, and a tool made admin-only after a decision is enforced
// on the very next one.
func TestDecisionReadsChangedToolsOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"content":"ok"}`))
	}))
	defer srv.Close()
	reads := &definitionReads{}
	e := newEnv(t, []model.Turn{turn(call("refund", `{}`)), {Content: "done"}},
		withStore(func(s runtime.Store) runtime.Store { reads.Store = s; return reads }))
	def := tool.Definition{Name: "refund", Description: "remote refund", Parameters: json.RawMessage(`{"type":"object"}`),
		Effect: tool.EffectNonIdempotentWrite, RequiresApproval: true, HTTP: tool.HTTPConfig{URL: srv.URL}}
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		t.Fatal(err)
	}
	e.cfg.Tools = []string{"refund"}
	e.saveConfig()
	runs := []runtime.Run{e.startAndRun(admin), e.startAndRun(admin), e.startAndRun(admin)}
	approve := func(i int) error {
		t.Helper()
		_, err := e.rt.Approve(e.ctx, reviewer, runs[i].UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(runs[i].UUID).Pause.Digest})
		return err
	}
	for i := range 2 {
		if err := approve(i); err != nil {
			t.Fatalf("approve run %d: %v", i, err)
		}
		if got := reads.n.Load(); got != 1 {
			t.Fatalf("after decision %d the definitions were read %d times, want once", i+1, got)
		}
	}
	def.AdminOnly = true
	if _, err := e.store.UpsertTool(e.ctx, def); err != nil {
		t.Fatal(err)
	}
	var re *runtime.Error
	if err := approve(2); !errors.As(err, &re) || re.Code != runtime.CodeApproverNotPermitted {
		t.Fatalf("a reviewer approving a tool made admin-only after the last decision: %v; want %s", err, runtime.CodeApproverNotPermitted)
	}
	if got := reads.n.Load(); got != 2 {
		t.Fatalf("the changed definitions were read %d times in all, want twice", got)
	}
	e.rt.Wait()
	e.wantStatus(runs[2].UUID, runtime.StatusWaitingApproval)
}
