package handlers

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// recordingTool is an in-process tool that needs typed input and records the arguments of
// every call it executes.
type recordingTool struct {
	name      string
	schema    string
	adminOnly bool
	mu        sync.Mutex
	calls     []json.RawMessage
}

func (t *recordingTool) Name() string                 { return t.name }
func (t *recordingTool) Description() string          { return "asks a person: " + t.name }
func (t *recordingTool) Parameters() json.RawMessage  { return json.RawMessage(`{"type":"object"}`) }
func (t *recordingTool) InputSchema() json.RawMessage { return json.RawMessage(t.schema) }
func (t *recordingTool) AdminOnly() bool              { return t.adminOnly }

func (t *recordingTool) Execute(_ context.Context, call tool.Call) (tool.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, append(json.RawMessage(nil), call.Arguments...))
	return tool.Result{Content: "thanks"}, nil
}

// received returns the arguments of every call so far, oldest first.
func (t *recordingTool) received() []json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]json.RawMessage(nil), t.calls...)
}

// inputConfiguration is a scripted configuration whose model calls toolName once with args,
// then finishes.
func inputConfiguration(identifier, toolName, args string) runtime.Configuration {
	return runtime.Configuration{Identifier: identifier, Name: identifier, MaxIterations: 5, Tools: []string{toolName},
		Provider: model.Settings{Kind: "scripted", Script: []model.Turn{
			{ToolCalls: []model.ScriptedCall{{Name: toolName, Arguments: json.RawMessage(args)}}},
			{Content: "All done."},
		}}}
}

// actorOf is the runtime actor of a test user.
func (a *testApp) actorOf(role runtime.Role) runtime.Actor {
	return runtime.Actor{UserUID: a.uids[role], Name: testUsers[role], Role: role}
}

// startRun starts a run of configuration as role and executes segments until it waits or
// ends; it returns the run's view as an admin sees it.
func (a *testApp) startRun(role runtime.Role, configuration string) runtime.RunView {
	a.t.Helper()
	ctx := context.Background()
	run, err := a.rt.Start(ctx, a.actorOf(role), configuration, "please help")
	if err != nil {
		a.t.Fatalf("start %s: %v", configuration, err)
	}
	for i := 0; ; i++ {
		v := a.view(run.UUID)
		if v.Run.Status != runtime.StatusQueued && v.Run.Status != runtime.StatusRunning {
			return v
		}
		if i > 20 {
			a.t.Fatalf("run %s stays %s", run.UUID, v.Run.Status)
		}
		if _, err := a.rt.RunOnce(ctx); err != nil {
			a.t.Fatalf("run once: %v", err)
		}
	}
}

// view returns the run as the admin sees it, after every dispatched segment has ended.
func (a *testApp) view(uuid string) runtime.RunView {
	a.t.Helper()
	a.rt.Wait()
	v, err := a.rt.Get(context.Background(), a.actorOf(runtime.RoleAdmin), uuid)
	if err != nil {
		a.t.Fatalf("get %s: %v", uuid, err)
	}
	return v
}

// events returns the kinds of the run's events, in order.
func (a *testApp) eventKinds(uuid string) []string {
	a.t.Helper()
	evs, err := a.rt.Events(context.Background(), a.actorOf(runtime.RoleAdmin), uuid, -1)
	if err != nil {
		a.t.Fatalf("events %s: %v", uuid, err)
	}
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// mustJSONEqual fails unless got and want are the same JSON value.
func mustJSONEqual(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %s is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want %s is not JSON: %v", what, want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}
