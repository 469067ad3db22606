package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// TestCompletesWithTotals: a run without pauses completes, with iterations and token totals
// stored, and tool events that carry neither arguments nor results.
func TestCompletesWithTotals(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("lookup", `{"secret":"hunter2"}`)), {Content: "All done."}})
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.Iterations != 2 || r.TotalTokens == 0 || r.TotalTokens != r.PromptTokens+r.CompletionTokens || r.FinishedAt == 0 {
		t.Fatalf("totals = iterations %d tokens %d/%d/%d finished %d", r.Iterations, r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.FinishedAt)
	}
	if r.SuspendedState != "" || r.QueuedRequest != "" || r.ClaimedBy != "" {
		t.Fatalf("terminal run keeps payloads or claim: %+v", r)
	}
	for _, ev := range e.events(run.UUID) {
		if contains(string(ev.Payload), "hunter2") || contains(string(ev.Payload), "ok from") {
			t.Fatalf("event %s leaks arguments or results: %s", ev.Kind, ev.Payload)
		}
	}
	seqs := e.events(run.UUID)
	for i, ev := range seqs {
		if ev.Sequence != i {
			t.Fatalf("event %d has sequence %d", i, ev.Sequence)
		}
	}
}

// TestMaxIterations: the loop stops at the configuration's limit, truncated.
func TestMaxIterations(t *testing.T) {
	var script []model.Turn
	for range 5 {
		script = append(script, turn(call("lookup", `{}`)))
	}
	e := newEnv(t, script)
	e.cfg.MaxIterations = 3
	e.saveConfig()
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	if r.TerminationReason != runtime.ReasonMaxIterations || !r.Truncated || r.Iterations != 3 {
		t.Fatalf("reason %q truncated %v iterations %d", r.TerminationReason, r.Truncated, r.Iterations)
	}
}

// TestOnlyOfferedToolsRun: a call to a registered tool the configuration does not offer, and
// a call with malformed arguments, are answered with tool errors, never executed.
func TestOnlyOfferedToolsRun(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("tag_order", `{}`), model.ScriptedCall{Name: "lookup", Arguments: json.RawMessage(`"nope"`)})})
	e.cfg.Tools = []string{"lookup"}
	e.saveConfig()
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if len(e.rec.get("tag_order")) != 0 || len(e.rec.get("lookup")) != 0 {
		t.Fatalf("calls = %v", e.rec.calls)
	}
}

// TestSuspendFailed is rule 4.10: a pause that cannot be stored is never promised.
func TestSuspendFailed(t *testing.T) {
	fs := &faultStore{failSuspend: true}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, withStore(func(s runtime.Store) runtime.Store { fs.Store = s; return fs }))
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusFailed)
	if r.TerminationReason != runtime.ReasonSuspendFailed {
		t.Fatalf("reason %q, want %q", r.TerminationReason, runtime.ReasonSuspendFailed)
	}
}

// TestUnusableSchemaAtCapture is rule 4.3 at capture: a tool whose schema became unusable
// after registration makes the run fail instead of pausing with an accept-anything form.
func TestUnusableSchemaAtCapture(t *testing.T) {
	var calls int
	e := newEnv(t, []model.Turn{turn(call("shifty", `{}`))})
	shifty := inputTool{baseTool: baseTool{name: "shifty", rec: e.rec}, schema: func() json.RawMessage {
		calls++
		if calls == 1 {
			return json.RawMessage(citySchema)
		}
		return json.RawMessage(`{}`)
	}}
	e.cfg.Tools = []string{"shifty"}
	e.saveConfig()
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: []tool.Tool{shifty}, Now: e.clock.Now})
	t.Cleanup(e.rt.Close)
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusFailed)
	if r.ErrorClass != "UnusableInputSchema" {
		t.Fatalf("error class %q", r.ErrorClass)
	}
}

// TestCancelWaitingRun is rule 4.12: a waiting run is cancelled and leaves the inbox; a later
// decision is refused.
func TestCancelWaitingRun(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(reviewer)
	if _, err := e.rt.Cancel(e.ctx, support, run.UUID); !errors.Is(err, runtime.ErrRunAccessDenied) {
		t.Fatalf("support cancel err = %v", err)
	}
	if _, err := e.rt.Cancel(e.ctx, runtime.Actor{UserUID: 99, Role: runtime.RoleReviewer}, run.UUID); !errors.Is(err, runtime.ErrRunAccessDenied) {
		t.Fatalf("other reviewer cancel err = %v", err)
	}
	digest := e.view(run.UUID).Pause.Digest
	c, err := e.rt.Cancel(e.ctx, reviewer, run.UUID)
	if err != nil || c.Status != runtime.StatusCancelled || c.TerminationReason != runtime.ReasonCancelled {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	list, err := e.rt.Inbox(e.ctx, admin, runtime.WaitingQuery{Limit: 10}, nil)
	if err != nil || len(list) != 0 {
		t.Fatalf("inbox after cancel = %d runs, %v", len(list), err)
	}
	if _, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest}); !errors.Is(err, runtime.ErrRunNotAwaitingApproval) {
		t.Fatalf("approve after cancel err = %v", err)
	}
	if _, err := e.rt.Cancel(e.ctx, admin, run.UUID); !errors.Is(err, runtime.ErrRunNotCancellable) {
		t.Fatalf("second cancel err = %v", err)
	}
}

// TestCancelDuringExecution: a cancel while a segment runs stops it at its next guarded write;
// the late settle is discarded, the run stays cancelled, and the call answered before the
// cancel was noticed is recorded.
func TestCancelDuringExecution(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("canceller", `{}`)), turn(call("lookup", `{}`))})
	canceller := baseTool{name: "canceller", rec: e.rec, exec: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		_, err := e.rt.Cancel(ctx, admin, c.RunUUID)
		return tool.Result{Content: "cancelled"}, err
	}}
	e.cfg.Tools = []string{"canceller", "lookup"}
	e.saveConfig()
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: append(e.tools, canceller), Now: e.clock.Now})
	t.Cleanup(e.rt.Close)
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusCancelled)
	if len(e.rec.get("lookup")) != 0 {
		t.Fatalf("segment continued after cancel")
	}
	e.wantKinds(run.UUID, runtime.EventRequest, runtime.EventLLM, runtime.EventTool)
}

// TestInboxListsUnreadableRun: one corrupt waiting run is listed as unreadable, not hidden,
// and does not hide the others.
func TestInboxListsUnreadableRun(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	a := e.startAndRun(admin)
	b := e.startAndRun(admin)
	if _, err := e.sql.ExecContext(e.ctx, "UPDATE tx_nrllm_agentrun SET suspended_state='garbage' WHERE uuid=?", a.UUID); err != nil {
		t.Fatal(err)
	}
	list, err := e.rt.Inbox(e.ctx, support, runtime.WaitingQuery{Limit: 10}, nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("inbox = %d, %v", len(list), err)
	}
	if list[0].Run.UUID != a.UUID || list[0].Unreadable == "" || list[0].Pause != nil {
		t.Fatalf("first = %+v, want unreadable %s", list[0], a.UUID)
	}
	if list[1].Run.UUID != b.UUID || list[1].Pause == nil || list[1].Run.SuspendedState != "" {
		t.Fatalf("second = %+v", list[1])
	}
}

// TestServiceAccountStartsAndApprovesReadOnly: a service account with scopes may start runs
// and approve a turn without writes; the start and the decision name the account (its uid is
// 0), in the events and in the stored decision.
func TestServiceAccountStartsAndApprovesReadOnly(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(service)
	out, err := e.rt.Approve(e.ctx, service, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest, IdempotencyKey: "svc-1"})
	if err != nil {
		t.Fatal(err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if out.Decision.DecidedBy != 0 || out.Decision.DecidedByService != "ci" {
		t.Errorf("decision %+v, want decided by service account ci", out.Decision)
	}
	if stored, err := e.store.FindDecision(e.ctx, run.UID, "svc-1"); err != nil || stored.DecidedByService != "ci" {
		t.Errorf("stored decision %+v (%v), want decided by service account ci", stored, err)
	}
	for _, ev := range e.events(run.UUID) {
		switch ev.Kind {
		case runtime.EventApproval:
			jsonEqual(t, ev.Payload, `{"approved":true,"decidedBy":0,"decidedByService":"ci"}`)
		case runtime.EventRequest:
			var p struct {
				RequestedBy        *int64 `json:"requestedBy"`
				RequestedByService string `json:"requestedByService"`
			}
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.RequestedBy == nil || *p.RequestedBy != 0 || p.RequestedByService != "ci" {
				t.Errorf("request event %s, want requestedBy 0 and requestedByService ci", ev.Payload)
			}
		}
	}
	noScope := runtime.Actor{Role: runtime.RoleService, Scopes: []string{"read"}}
	if _, err := e.rt.Start(e.ctx, noScope, "test", "x"); !errors.Is(err, runtime.ErrRunAccessDenied) {
		t.Fatalf("start without scope err = %v", err)
	}
}

// boundTool is a read-only tool with its own bound on a call's arguments (max_arguments_bytes).
type boundTool struct {
	baseTool
	bound int
}

func (t boundTool) MaxArgumentsBytes() int { return t.bound }

// withBoundTool adds lookup_small, whose calls' arguments are bounded at 100 bytes.
func withBoundTool() envOption {
	return func(e *env, c *engine.Config) {
		c.Tools = append(c.Tools, boundTool{baseTool{name: "lookup_small", rec: e.rec}, 100})
		e.cfg.Tools = append(e.cfg.Tools, "lookup_small")
		e.saveConfig()
	}
}

// TestOversizedArgumentsAreAToolError: a model's call whose arguments are larger than the
// tool's bound (tool.MaxArgumentsBytes: its own max_arguments_bytes, else 64 KiB) is never
// executed; the model is told why. A call at the bound runs.
func TestOversizedArgumentsAreAToolError(t *testing.T) {
	arguments := func(n int) string { return `{"q":"` + strings.Repeat("x", n-8) + `"}` }
	cases := []struct {
		tool  string
		size  int
		bound int
	}{
		{"lookup", tool.DefaultMaxArgumentsBytes + 1, tool.DefaultMaxArgumentsBytes},
		{"lookup_small", 101, 100},
		{"lookup_small", 100, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.tool, c.size), func(t *testing.T) {
			m := newRecordingModel(t, toolCallWith(c.tool, arguments(c.size)), textAnswer("understood"))
			e := newEnv(t, nil, withBoundTool())
			e.useModel(m.url)
			run := e.startAndRun(admin)
			e.wantStatus(run.UUID, runtime.StatusCompleted)
			sent := m.request(1)
			got := sent[len(sent)-1]
			if c.bound == 0 {
				if n := len(e.rec.get(c.tool)); n != 1 || got.Content != "ok from "+c.tool {
					t.Fatalf("a call at the bound: ran %d times, the model was told %q", n, got.Content)
				}
				return
			}
			if n := len(e.rec.get(c.tool)); n != 0 {
				t.Fatalf("%s ran %d times", c.tool, n)
			}
			want := fmt.Sprintf(`Error: the arguments for tool %q were refused: larger than %d bytes.`, c.tool, c.bound)
			if got.Role != "tool" || got.Content != want {
				t.Fatalf("the model was told %q (%s), want %q", got.Content, got.Role, want)
			}
		})
	}
}
