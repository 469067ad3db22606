package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/handlers/api"
	"runsdesk/handlers/api/apitest"
	"runsdesk/internal/syncbuf"
	"runsdesk/internal/testdb"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// plainTool is a read-only in-process tool.
type plainTool struct{ name string }

func (t plainTool) Name() string                { return t.name }
func (t plainTool) Description() string         { return "test tool " + t.name }
func (t plainTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t plainTool) Execute(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok from " + t.name}, nil
}

type markedTool struct{ plainTool }

func (markedTool) RequiresApproval() bool { return true }
func (markedTool) Preview(context.Context, tool.Call) ([]string, error) {
	return []string{"would send one mail"}, nil
}

type writeTool struct{ plainTool }

func (writeTool) Effect() tool.Effect { return tool.EffectNonIdempotentWrite }

type askTool struct{ plainTool }

func (askTool) InputSchema() json.RawMessage { return json.RawMessage(citySchema) }

const citySchema = `{"type":"object","required":["city"],"properties":{"city":{"type":"string","minLength":2}}}`

func call(name, args string) model.ScriptedCall {
	return model.ScriptedCall{Name: name, Arguments: json.RawMessage(args)}
}

// scripts are the configurations of the world: what the model does in each.
var scripts = map[string][]model.Turn{
	"plain":   {{Content: "hello"}},
	"approve": {{ToolCalls: []model.ScriptedCall{call("send_mail", `{"to":"ops@example.com"}`)}}},
	"write":   {{ToolCalls: []model.ScriptedCall{call("lookup", `{}`), call("issue_refund", `{"order":"A1","amount":5}`)}}},
	"input":   {{ToolCalls: []model.ScriptedCall{call("ask_city", `{"city":"ModelGuess"}`)}}},
}

// observer is the engine's Observer; it records ObserveDecision calls and ignores the rest.
type observer struct {
	mu  sync.Mutex
	got []string
}

func (o *observer) ObserveDecision(kind, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, kind+"/"+outcome)
}

func (o *observer) ObserveExpiry(string)                                  {}
func (o *observer) ObserveReminder()                                      {}
func (o *observer) ObserveEscalation()                                    {}
func (o *observer) ObserveTimeToDecision(string, string, string, float64) {}

func (o *observer) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.got...)
}

// syncBuffer collects what a test's logger or server writes while the test reads it.
type syncBuffer = syncbuf.Buffer

// world is one test's setting: a fresh database, a runtime without background workers, the
// API on a bare echo behind an httptest server, and one token per scope. Every call through
// do is checked against the OpenAPI document (apitest).
type world struct {
	t      *testing.T
	ctx    context.Context
	sql    *sql.DB
	store  *db.Store
	sa     *db.ServiceAccounts
	audit  *db.Audit
	rt     *engine.Runtime
	srv    *httptest.Server
	obs    *observer
	logs   *syncBuffer
	tokens map[string]string
}

var setupActor = runtime.Actor{Name: "setup", Role: runtime.RoleService,
	Scopes: []string{runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel}}

func newWorld(t *testing.T, opts ...func(*api.Config)) *world {
	t.Helper()
	ctx := context.Background()
	sqlDB, _ := testdb.New(t)
	w := &world{t: t, ctx: ctx, sql: sqlDB, store: db.New(sqlDB), sa: db.NewServiceAccounts(sqlDB, nil), audit: db.NewAudit(sqlDB, nil),
		obs: &observer{}, logs: &syncBuffer{}, tokens: map[string]string{}}
	for name, script := range scripts {
		cfg := runtime.Configuration{Identifier: name, Name: name, MaxIterations: 10,
			Provider: model.Settings{Kind: "scripted", Script: script},
			Tools:    []string{"lookup", "send_mail", "issue_refund", "ask_city"}}
		if _, err := w.store.UpsertConfiguration(ctx, cfg); err != nil {
			t.Fatalf("save configuration %s: %v", name, err)
		}
	}
	w.rt = engine.New(engine.Config{Store: w.store, Catalog: w.store, Lease: time.Minute, Workers: 2, Observer: w.obs,
		Tools: []tool.Tool{plainTool{"lookup"}, markedTool{plainTool{"send_mail"}}, writeTool{plainTool{"issue_refund"}}, askTool{plainTool{"ask_city"}}}})
	t.Cleanup(w.rt.Close)
	for _, scope := range []string{runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel} {
		w.tokens[scope] = w.createToken("ci-"+scope, scope)
	}
	w.tokens["all"] = w.createToken("ci-all", runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel)
	w.tokens["disabled"] = w.createToken("ci-disabled", runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel)
	if err := w.sa.DisableToken(ctx, "ci-disabled", nil); err != nil {
		t.Fatal(err)
	}
	w.tokens["none"] = w.scopelessToken()
	w.tokens["expired"] = w.createToken("ci-expired", runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel)
	if _, err := w.sql.ExecContext(ctx, `UPDATE tx_runsdesk_service_account SET expires_at = 1 WHERE name = 'ci-expired'`); err != nil {
		t.Fatal(err)
	}

	cfg := api.Config{Runtime: w.rt, Tokens: w.sa, Audit: w.audit, Rate: rate.Inf, Burst: 1,
		AuthFailureRate: rate.Inf,
		Logger:          slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, o := range opts {
		o(&cfg)
	}
	e := echo.New()
	api.New(cfg).Register(e.Group("/api/v1"))
	w.srv = httptest.NewServer(e)
	t.Cleanup(w.srv.Close)
	client := w.srv.Client()
	client.Transport = apitest.New().Transport(t, client.Transport)
	return w
}

func (w *world) createToken(name string, scopes ...string) string {
	w.t.Helper()
	tok, err := w.sa.CreateToken(w.ctx, name, scopes)
	if err != nil {
		w.t.Fatalf("create token %s: %v", name, err)
	}
	return tok
}

// scopelessToken stores a service account without scopes, which CreateToken refuses to make
// but a hand-edited row could hold.
func (w *world) scopelessToken() string {
	tok := db.TokenPrefix + "scopelessscopelessscopelessscopeless"
	sum := sha256.Sum256([]byte(tok))
	if _, err := w.sql.ExecContext(w.ctx, `INSERT INTO tx_runsdesk_service_account (name, token_hash, scopes) VALUES ('ci-none', ?, '')`,
		hex.EncodeToString(sum[:])); err != nil {
		w.t.Fatal(err)
	}
	return tok
}

// runIn starts a run of configuration and executes its first segment.
func (w *world) runIn(configuration string) string {
	w.t.Helper()
	run, err := w.rt.Start(w.ctx, setupActor, configuration, "help me")
	if err != nil {
		w.t.Fatalf("start: %v", err)
	}
	for w.run(run.UUID).Status == runtime.StatusQueued {
		if ok, err := w.rt.RunOnce(w.ctx); err != nil || !ok {
			w.t.Fatalf("run once: %v %v", ok, err)
		}
	}
	return run.UUID
}

func (w *world) run(uuid string) runtime.Run {
	w.t.Helper()
	r, err := w.store.FindByUUID(w.ctx, uuid)
	if err != nil {
		w.t.Fatalf("find %s: %v", uuid, err)
	}
	return r
}

// snapshot is everything a refused request must leave alone: the run row and its events.
type snapshot struct {
	Run    runtime.Run
	Events []runtime.Event
	Runs   int
}

func (w *world) snapshot(uuid string) snapshot {
	w.t.Helper()
	var s snapshot
	if err := w.sql.QueryRowContext(w.ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun`).Scan(&s.Runs); err != nil {
		w.t.Fatal(err)
	}
	if uuid == "" {
		return s
	}
	s.Run = w.run(uuid)
	evs, err := w.store.Events(w.ctx, s.Run.UID, -1)
	if err != nil {
		w.t.Fatal(err)
	}
	s.Events = evs
	return s
}

func (w *world) unchanged(before snapshot, uuid string) {
	w.t.Helper()
	if after := w.snapshot(uuid); !reflect.DeepEqual(before, after) {
		w.t.Fatalf("a refused request changed state:\nbefore %+v\nafter  %+v", before, after)
	}
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

// request is one API call; body "" sends none, contentType "" means application/json when
// there is a body; extra holds header name/value pairs.
type request struct {
	method, path, token, body, contentType string
	extra                                  []string
}

func (w *world) do(r request) response {
	w.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(w.ctx, r.method, w.srv.URL+r.path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	switch {
	case r.contentType == "-":
	case r.contentType != "":
		req.Header.Set("Content-Type", r.contentType)
	case r.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(r.extra); i += 2 {
		req.Header.Add(r.extra[i], r.extra[i+1])
	}
	res, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return response{code: res.StatusCode, header: res.Header, body: b}
}

// wantError checks status and that the body is exactly {"error":{"code","message"}} with a
// non-empty message.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.code != status {
		t.Fatalf("status %d, want %d; body %s", r.code, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error content type %q", ct)
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("error body %s is not the error shape: %v", r.body, err)
	}
	if body.Error.Code != code || body.Error.Message == "" {
		t.Fatalf("error %+v, want code %q with a message", body.Error, code)
	}
}

func decode[T any](t *testing.T, r response, status int) T {
	t.Helper()
	if r.code != status {
		t.Fatalf("status %d, want %d; body %s", r.code, status, r.body)
	}
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return v
}

// runBody is the API's run JSON as a client reads it.
type runBody struct {
	UUID              string `json:"uuid"`
	Status            string `json:"status"`
	Configuration     string `json:"configuration"`
	TerminationReason string `json:"termination_reason"`
	Iterations        int    `json:"iterations"`
	TotalTokens       int64  `json:"total_tokens"`
	Created           int64  `json:"created"`
	WaitingSince      *int64 `json:"waiting_since"`
	Finished          *int64 `json:"finished"`
	RetryAt           *int64 `json:"retry_at"`
	Pending           *struct {
		Kind       string `json:"kind"`
		TurnDigest string `json:"turn_digest"`
		Calls      []struct {
			ID        string          `json:"id"`
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
			Effect    string          `json:"effect"`
			Preview   []string        `json:"preview"`
		} `json:"calls"`
		InputTool   string          `json:"input_tool"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"pending"`
}

func (w *world) get(uuid string) runBody {
	w.t.Helper()
	return decode[runBody](w.t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + uuid, token: w.tokens["read"]}), http.StatusOK)
}

func (w *world) digest(uuid string) string {
	w.t.Helper()
	b := w.get(uuid)
	if b.Pending == nil || b.Pending.TurnDigest == "" {
		w.t.Fatalf("run %s has no pending turn: %+v", uuid, b)
	}
	return b.Pending.TurnDigest
}

func approval(approved bool, digest string) string {
	b, _ := json.Marshal(map[string]any{"approved": approved, "turn_digest": digest})
	return string(b)
}
