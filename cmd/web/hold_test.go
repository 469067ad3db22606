package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/tool/mcptest"
)

// TestHolderKilledWithSIGKILL: a worker holds a call whose server (a real go-sdk server on
// the in-session protocol) asked for input during the call; the worker is killed with
// kill -9 while the run waits. Another worker notices the holder's heartbeat lapse and ends
// the request: the read-only call's run continues with the honest tool error, the write's is
// dead-lettered (not_retryable, WriteOutcomeUnknown), and the server never hears an answer.
func TestHolderKilledWithSIGKILL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		hints  *mcp.ToolAnnotations
		status runtime.Status
		class  string
	}{
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, runtime.StatusCompleted, ""},
		{"write", nil, runtime.StatusFailed, "WriteOutcomeUnknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answered := make(chan mcptest.Answer, 1)
			srv := mcptest.NewInSession(t, mcptest.Tool{
				Tool: mcp.Tool{Name: "refund", Description: "Refund what the operator says.", InputSchema: mcptest.ObjectSchema(nil), Annotations: tc.hints},
				Handler: mcptest.AskingInSession(t, "How much?", map[string]any{"type": "object", "properties": map[string]any{"amount": map[string]any{"type": "number"}}},
					func(a mcptest.Answer) { answered <- a }),
			})
			env := newDatabase(t)
			file := `mcp_servers:
  - name: crm
    url: "` + srv.URL + `"
    requires_approval: false
tools:
  - name: crm_refund
    mcp: {server: crm, tool: refund}
configurations:
  - identifier: c
    name: C
    tools: [crm_refund]
    provider: {kind: scripted, script: [{tool_calls: [{name: crm_refund, arguments: {}}]}, {content: done}]}
`
			path := filepath.Join(t.TempDir(), "desk.yaml")
			if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
			if r := cliRun(t, env, nil, "apply", "-f", path); r.code != exitOK {
				t.Fatalf("apply: %+v", r)
			}
			id := newRun(t, env, false)
			env[execMainEnv] = "1"
			worker := func() *process {
				p := startProcess(t, exec.Command(os.Args[0], "worker", "--no-migrate", "--lease", "3s", "--reap-interval", "500ms", "--poll-interval", "100ms"), env)
				p.waitForOutput(t, regexp.MustCompile(`worker\(s\) running`), time.Minute)
				return p
			}
			holder := worker()
			held := waitForRun(t, env, id, func(r runtime.Run) bool { return r.Status == runtime.StatusWaitingInput }, holder)
			if held.HoldHeartbeat == 0 || held.ClaimedBy != "" {
				t.Fatalf("waiting run: hold heartbeat %d, claimed by %q", held.HoldHeartbeat, held.ClaimedBy)
			}
			holder.signalGroup(t, syscall.SIGKILL)
			other := worker()
			done := waitForRun(t, env, id, func(r runtime.Run) bool { return r.Status.Terminal() }, other)
			if done.Status != tc.status || done.ErrorClass != tc.class {
				t.Fatalf("run ended %s (%s, class %q), want %s class %q:\n%s", done.Status, done.TerminationReason, done.ErrorClass, tc.status, tc.class, other.output)
			}
			select {
			case a := <-answered:
				t.Fatalf("the server heard an answer: %v", a)
			default:
			}
		})
	}
}

// waitForRun waits up to a minute for run id to satisfy ok, failing with p's output.
func waitForRun(t *testing.T, env environ, id string, ok func(runtime.Run) bool, p *process) runtime.Run {
	t.Helper()
	s := db.New(store(t, env).pool)
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := s.FindByUUID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is still %s:\n%s", id, r.Status, p.output)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
