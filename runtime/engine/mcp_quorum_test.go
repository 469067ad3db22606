package engine_test

import (
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
)

// TestRemoteToolQuorum: a remote tool whose mcp_servers entry sets approvals_required: 2,
// applied onto the store from a file, needs two distinct approvals: the first is a vote that
// leaves the run waiting without calling the MCP server, the same person again is
// already_voted, and a second person's approval calls the tool once and completes the run.
func TestRemoteToolQuorum(t *testing.T) {
	var calls atomic.Int32
	srv := countingServer(t, &calls, &mcp.ToolAnnotations{DestructiveHint: new(true)}, "Delete a customer.")
	e := newEnv(t, []model.Turn{turn(call("crm_delete", `{"id":"7"}`)), {Content: "done"}})
	file := "mcp_servers:\n  - name: crm\n    url: \"" + srv.URL + "\"\n    approvals_required: 2\n" +
		"tools:\n  - name: crm_delete\n    mcp: {server: crm, tool: delete_customer}\n"
	a := apply.New(apply.Config{Catalog: e.store, Builtin: e.tools, Getenv: func(string) string { return "" }})
	p, err := a.Plan(e.ctx, []byte(file))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(e.ctx, p); err != nil {
		t.Fatalf("apply: %v", err)
	}
	defs, err := e.store.ToolDefinitions(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.Name == "crm_delete" && (d.MCP == nil || d.Quorum != (quorum.Policy{Required: 2})) {
			t.Fatalf("stored crm_delete: mcp %+v, quorum %+v; want a remote tool needing 2", d.MCP, d.Quorum)
		}
	}
	e.cfg.Tools = append(e.cfg.Tools, "crm_delete")
	e.saveConfig()

	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	digest := e.view(run.UUID).Pause.Digest
	ppl := voters(2)
	out, err := castVote(e, ppl[0], run.UUID, digest, "")
	if err != nil || out.Resumed || out.Votes != 1 || out.Required != 2 {
		t.Fatalf("first vote: %+v, %v; want 1 of 2, not resumed", out, err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	if calls.Load() != 0 {
		t.Fatal("the remote tool ran after one of two approvals")
	}
	_, err = castVote(e, ppl[0], run.UUID, digest, "")
	wantCode(t, err, runtime.CodeAlreadyVoted)
	out, err = castVote(e, ppl[1], run.UUID, digest, "")
	if err != nil || !out.Resumed || out.Votes != 2 {
		t.Fatalf("second vote: %+v, %v; want 2 of 2, resumed", out, err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if calls.Load() != 1 {
		t.Fatalf("the remote tool ran %d times, want once", calls.Load())
	}
}
