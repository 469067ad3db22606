package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/internal/testdb"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// clock is a settable test clock.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.t.Store(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Unix())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(c.t.Load(), 0) }
func (c *clock) Advance(d time.Duration) { c.t.Add(int64(d / time.Second)) }

// recorder keeps what each tool received.
type recorder struct {
	mu    sync.Mutex
	calls map[string][]json.RawMessage
}

func (r *recorder) add(name string, args json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string][]json.RawMessage{}
	}
	r.calls[name] = append(r.calls[name], append(json.RawMessage(nil), args...))
}

func (r *recorder) get(name string) []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]json.RawMessage(nil), r.calls[name]...)
}

// baseTool is a read-only in-process tool recording its calls.
type baseTool struct {
	name string
	rec  *recorder
	exec func(ctx context.Context, c tool.Call) (tool.Result, error)
}

func (t baseTool) Name() string                { return t.name }
func (t baseTool) Description() string         { return "test tool " + t.name }
func (t baseTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t baseTool) Execute(ctx context.Context, c tool.Call) (tool.Result, error) {
	t.rec.add(t.name, c.Arguments)
	if t.exec != nil {
		return t.exec(ctx, c)
	}
	return tool.Result{Content: "ok from " + t.name}, nil
}

type approvalTool struct{ baseTool }

func (approvalTool) RequiresApproval() bool { return true }

type writeTool struct {
	baseTool
	effect tool.Effect
	admin  bool
}

func (t writeTool) Effect() tool.Effect { return t.effect }
func (t writeTool) AdminOnly() bool     { return t.admin }

type inputTool struct {
	baseTool
	schema func() json.RawMessage
	admin  bool
}

func (t inputTool) InputSchema() json.RawMessage { return t.schema() }
func (t inputTool) AdminOnly() bool              { return t.admin }

type previewTool struct{ approvalTool }

func (previewTool) Preview(context.Context, tool.Call) ([]string, error) {
	return []string{"would do a thing"}, nil
}

const citySchema = `{"type":"object","required":["city"],"properties":{"city":{"type":"string","minLength":2},"zip":{"type":"string","pattern":"^[0-9]{5}$"}}}`

// env is one test's world: a fresh database, a store, a runtime with in-process tools, and
// a clock.
type env struct {
	t     *testing.T
	ctx   context.Context
	sql   *sql.DB
	dsn   string
	store *db.Store
	rt    *engine.Runtime
	clock *clock
	rec   *recorder
	hooks *hooks
	cfg   runtime.Configuration
	tools []tool.Tool
}

type envOption func(*env, *engine.Config)

func withStore(wrap func(runtime.Store) runtime.Store) envOption {
	return func(e *env, c *engine.Config) { c.Store = wrap(c.Store) }
}

func newEnv(t *testing.T, script []model.Turn, opts ...envOption) *env {
	t.Helper()
	ctx := context.Background()
	sqlDB, dsn := testdb.New(t)
	batches, err := db.OpenBatches(ctx, dsn)
	if err != nil {
		t.Fatalf("open batches: %v", err)
	}
	t.Cleanup(func() { batches.Close() })
	e := &env{t: t, ctx: ctx, sql: sqlDB, dsn: dsn, store: db.New(sqlDB, db.WithBatches(batches)), clock: newClock(), rec: &recorder{}, hooks: &hooks{}}
	e.tools = []tool.Tool{
		baseTool{name: "lookup", rec: e.rec},
		approvalTool{baseTool{name: "send_mail", rec: e.rec}},
		previewTool{approvalTool{baseTool{name: "notify", rec: e.rec}}},
		writeTool{baseTool: baseTool{name: "issue_refund", rec: e.rec}, effect: tool.EffectNonIdempotentWrite, admin: true},
		writeTool{baseTool: baseTool{name: "tag_order", rec: e.rec}, effect: tool.EffectIdempotentWrite},
		inputTool{baseTool: baseTool{name: "ask_city", rec: e.rec}, schema: func() json.RawMessage { return json.RawMessage(citySchema) }},
		inputTool{baseTool: baseTool{name: "ask_amount", rec: e.rec}, admin: true, schema: func() json.RawMessage {
			return json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":1}}}`)
		}},
	}
	e.cfg = runtime.Configuration{
		Identifier: "test", Name: "Test", Provider: model.Settings{Kind: "scripted", Script: script},
		MaxIterations: 10, Tools: []string{"lookup", "send_mail", "notify", "issue_refund", "tag_order", "ask_city", "ask_amount"},
	}
	e.saveConfig()
	cfg := engine.Config{Store: e.store, Catalog: e.store, Rules: e.store, Tools: e.tools, Now: e.clock.Now, Lease: time.Minute, Workers: 4, Hooks: e.hooks}
	for _, o := range opts {
		o(e, &cfg)
	}
	e.rt = engine.New(cfg)
	t.Cleanup(e.rt.Close)
	return e
}

func (e *env) saveConfig() {
	e.t.Helper()
	if _, err := e.store.UpsertConfiguration(e.ctx, e.cfg); err != nil {
		e.t.Fatalf("save configuration: %v", err)
	}
	got, err := e.store.ConfigurationByIdentifier(e.ctx, e.cfg.Identifier)
	if err != nil {
		e.t.Fatalf("reload configuration: %v", err)
	}
	e.cfg.UID = got.UID
}

var (
	admin    = runtime.Actor{UserUID: 1, Name: "ada", Role: runtime.RoleAdmin}
	admin2   = runtime.Actor{UserUID: 2, Name: "bob", Role: runtime.RoleAdmin}
	reviewer = runtime.Actor{UserUID: 3, Name: "rita", Role: runtime.RoleReviewer}
	support  = runtime.Actor{UserUID: 4, Name: "sam", Role: runtime.RoleSupport}
	service  = runtime.Actor{Name: "ci", Role: runtime.RoleService, Scopes: []string{"run", "read", "approve", "cancel"}}
)

// call builds a scripted tool call.
func call(name, args string) model.ScriptedCall {
	return model.ScriptedCall{Name: name, Arguments: json.RawMessage(args)}
}

// turn builds a scripted assistant turn with tool calls.
func turn(calls ...model.ScriptedCall) model.Turn { return model.Turn{ToolCalls: calls} }

// startAndRun starts a run as actor and executes its first segment synchronously.
func (e *env) startAndRun(actor runtime.Actor) runtime.Run {
	e.t.Helper()
	run, err := e.rt.Start(e.ctx, actor, e.cfg.Identifier, "help me")
	if err != nil {
		e.t.Fatalf("start: %v", err)
	}
	ok, err := e.rt.RunOnce(e.ctx)
	if err != nil || !ok {
		e.t.Fatalf("run once: ran=%v err=%v", ok, err)
	}
	return e.run(run.UUID)
}

// run reloads a run from the store.
func (e *env) run(uuid string) runtime.Run {
	e.t.Helper()
	r, err := e.store.FindByUUID(e.ctx, uuid)
	if err != nil {
		e.t.Fatalf("find %s: %v", uuid, err)
	}
	return r
}

func (e *env) view(uuid string) runtime.RunView {
	e.t.Helper()
	v, err := e.rt.Get(e.ctx, admin, uuid)
	if err != nil {
		e.t.Fatalf("get %s: %v", uuid, err)
	}
	return v
}

func (e *env) events(uuid string) []runtime.Event {
	e.t.Helper()
	evs, err := e.rt.Events(e.ctx, admin, uuid, -1)
	if err != nil {
		e.t.Fatalf("events %s: %v", uuid, err)
	}
	return evs
}

func (e *env) kinds(uuid string) []string {
	var out []string
	for _, ev := range e.events(uuid) {
		out = append(out, ev.Kind)
	}
	return out
}

func (e *env) wantStatus(uuid string, want runtime.Status) runtime.Run {
	e.t.Helper()
	r := e.run(uuid)
	if r.Status != want {
		e.t.Fatalf("run %s status = %s (reason %q, class %q), want %s", uuid, r.Status, r.TerminationReason, r.ErrorClass, want)
	}
	return r
}

// hooks aborts a segment at a named fault point when armed: at the n-th time the point is
// reached (1 = the first), once.
type hooks struct {
	mu    sync.Mutex
	armed map[string]int
}

func (h *hooks) arm(point string) { h.armAt(point, 1) }

func (h *hooks) armAt(point string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.armed == nil {
		h.armed = map[string]int{}
	}
	h.armed[point] = n
}

func (h *hooks) At(point string, _ int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, ok := h.armed[point]
	if !ok {
		return nil
	}
	if n > 1 {
		h.armed[point] = n - 1
		return nil
	}
	delete(h.armed, point)
	return errFault
}

var errFault = &faultError{}

type faultError struct{}

func (*faultError) Error() string { return "injected fault" }
