package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime/tool"
)

// recorder is an endpoint that remembers what it received and answers with answer.
type recorder struct {
	mu      sync.Mutex
	calls   int
	method  string
	body    string
	headers http.Header
	answer  func(w http.ResponseWriter, r *http.Request)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.calls++
	rec.method = r.Method
	rec.body = string(b)
	rec.headers = r.Header.Clone()
	rec.mu.Unlock()
	rec.answer(w, r)
}

func (rec *recorder) snapshot() (int, string, string, http.Header) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.calls, rec.method, rec.body, rec.headers
}

func serve(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*recorder, *httptest.Server) {
	t.Helper()
	rec := &recorder{answer: answer}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv
}

func answerText(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func lookupDef(url string) tool.Definition {
	return tool.Definition{
		Name:        "lookup_order",
		Description: "Look an order up.",
		Parameters:  []byte(objectParams),
		HTTP:        tool.HTTPConfig{URL: url},
	}
}

func newHTTP(t *testing.T, def tool.Definition, getenv func(string) string) tool.Tool {
	t.Helper()
	tl, err := tool.NewHTTP(def, nil, getenv)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	return tl
}

func call(args string) tool.Call {
	return tool.Call{RunUUID: "6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10", CallID: "call_0_0", Name: "lookup_order", Arguments: json.RawMessage(args)}
}

func execute(t *testing.T, tl tool.Tool, c tool.Call) tool.Result {
	t.Helper()
	res, err := tl.Execute(context.Background(), c)
	if err != nil {
		t.Fatalf("Execute returned an error: %v", err)
	}
	return res
}

func TestHTTPToolSendsTheProtocolBody(t *testing.T) {
	rec, srv := serve(t, answerText(200, `{"content":"order 42 shipped"}`))
	tl := newHTTP(t, lookupDef(srv.URL+"/lookup"), env(nil))
	res := execute(t, tl, call(`{ "order_id" : "42" }`))
	if res.IsError || res.Content != "order 42 shipped" {
		t.Errorf("result = %+v", res)
	}
	calls, method, body, headers := rec.snapshot()
	if calls != 1 || method != http.MethodPost {
		t.Errorf("endpoint saw %d calls, method %s", calls, method)
	}
	want := `{"run":"6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10","call_id":"call_0_0","tool":"lookup_order","arguments":{"order_id":"42"}}`
	if body != want {
		t.Errorf("body = %s\nwant   %s", body, want)
	}
	if ct := headers.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestHTTPToolEmptyArgumentsAreAnEmptyObject(t *testing.T) {
	rec, srv := serve(t, answerText(200, "ok"))
	execute(t, newHTTP(t, lookupDef(srv.URL), env(nil)), call(""))
	if _, _, body, _ := rec.snapshot(); !strings.HasSuffix(body, `"arguments":{}}`) {
		t.Errorf("body = %s", body)
	}
}

func TestHTTPToolRefusesNonObjectArguments(t *testing.T) {
	for _, args := range []string{`[1]`, `"x"`, `{"order_id":`, `null`} {
		rec, srv := serve(t, answerText(200, "ok"))
		res := execute(t, newHTTP(t, lookupDef(srv.URL), env(nil)), call(args))
		if !res.IsError || res.Content != "tool lookup_order: arguments are not a JSON object" {
			t.Errorf("arguments %s: result = %+v", args, res)
		}
		if calls, _, _, _ := rec.snapshot(); calls != 0 {
			t.Errorf("arguments %s: endpoint was called", args)
		}
	}
}

func TestHTTPToolContent(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string
	}{
		{"JSON content", `{"content":"line 1\nline 2","extra":true}`, "line 1\nline 2"},
		{"plain text", "refund issued", "refund issued"},
		{"JSON without content", `{"status":"ok"}`, `{"status":"ok"}`},
		{"JSON with non-string content", `{"content":{"a":1}}`, `{"content":{"a":1}}`},
		{"JSON with null content", `{"content":null}`, `{"content":null}`},
		{"JSON array", `["a"]`, `["a"]`},
		{"empty body", ``, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, srv := serve(t, answerText(200, c.body))
			res := execute(t, newHTTP(t, lookupDef(srv.URL), env(nil)), call(`{}`))
			if res.IsError || res.Content != c.want {
				t.Errorf("result = %+v, want content %q", res, c.want)
			}
		})
	}
}

func TestHTTPToolAccepts2xx(t *testing.T) {
	_, srv := serve(t, answerText(http.StatusCreated, `{"content":"created"}`))
	res := execute(t, newHTTP(t, lookupDef(srv.URL), env(nil)), call(`{}`))
	if res.IsError || res.Content != "created" {
		t.Errorf("result = %+v", res)
	}
}

func TestHTTPToolNon2xxIsAToolError(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusNotFound, http.StatusMultipleChoices} {
		_, srv := serve(t, answerText(status, `{"content":"secret body with Bearer s3cret"}`))
		def := lookupDef(srv.URL)
		def.HTTP.Headers = map[string]string{"Authorization": "Bearer ${TOKEN}"}
		res := execute(t, newHTTP(t, def, env(map[string]string{"TOKEN": "s3cret"})), call(`{}`))
		want := "tool lookup_order: endpoint answered HTTP " + strconv.Itoa(status)
		if !res.IsError || res.Content != want {
			t.Errorf("status %d: result = %+v, want %q", status, res, want)
		}
	}
}

func TestHTTPToolTimeout(t *testing.T) {
	release := make(chan struct{})
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	def := lookupDef(srv.URL)
	def.HTTP.Timeout = 50 * time.Millisecond
	start := time.Now()
	res := execute(t, newHTTP(t, def, env(nil)), call(`{}`))
	if !res.IsError || res.Content != "tool lookup_order: endpoint did not answer within 50ms" {
		t.Errorf("result = %+v", res)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Execute took %s", took)
	}
}

func TestHTTPToolCancelledContext(t *testing.T) {
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	res, err := newHTTP(t, lookupDef(srv.URL), env(nil)).Execute(ctx, call(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "cancelled") {
		t.Errorf("result = %+v, %v", res, err)
	}
}

func TestHTTPToolConnectionError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/path?token=query-secret"
	srv.Close()
	res := execute(t, newHTTP(t, lookupDef(url), env(nil)), call(`{}`))
	if !res.IsError || !strings.HasPrefix(res.Content, "tool lookup_order: endpoint could not be reached: ") {
		t.Errorf("result = %+v", res)
	}
	if strings.Contains(res.Content, "query-secret") {
		t.Errorf("result %q leaks the URL", res.Content)
	}
}

func TestHTTPToolResponseLimit(t *testing.T) {
	body := strings.Repeat("x", 10)
	_, srv := serve(t, answerText(200, body))
	def := lookupDef(srv.URL)
	def.HTTP.MaxResponseBytes = 10
	res := execute(t, newHTTP(t, def, env(nil)), call(`{}`))
	if res.IsError || res.Content != body {
		t.Errorf("a body at the limit: result = %+v", res)
	}
	_, srv = serve(t, answerText(200, body+"y"))
	def = lookupDef(srv.URL)
	def.HTTP.MaxResponseBytes = 10
	res = execute(t, newHTTP(t, def, env(nil)), call(`{}`))
	if !res.IsError || res.Content != "tool lookup_order: response larger than 10 bytes" {
		t.Errorf("a body over the limit: result = %+v", res)
	}
}

func TestHTTPToolDefaultResponseLimit(t *testing.T) {
	_, srv := serve(t, answerText(200, strings.Repeat("x", tool.DefaultMaxResponseBytes+1)))
	res := execute(t, newHTTP(t, lookupDef(srv.URL), env(nil)), call(`{}`))
	if !res.IsError || res.Content != "tool lookup_order: response larger than 1048576 bytes" {
		t.Errorf("result = %.100s", res.Content)
	}
}

func TestHTTPToolExpandsHeadersAtCallTime(t *testing.T) {
	rec, srv := serve(t, answerText(200, "ok"))
	def := lookupDef(srv.URL)
	def.HTTP.Headers = map[string]string{
		"Authorization": "Bearer ${REFUND_TOKEN}",
		"X-Pair":        "${A}-${B}",
		"X-Static":      "v$1",
	}
	vars := map[string]string{"REFUND_TOKEN": "first", "A": "left", "B": "right"}
	var mu sync.Mutex
	getenv := func(name string) string { mu.Lock(); defer mu.Unlock(); return vars[name] }
	tl := newHTTP(t, def, getenv)
	mu.Lock()
	vars["REFUND_TOKEN"] = "rotated"
	mu.Unlock()
	execute(t, tl, call(`{}`))
	_, _, _, h := rec.snapshot()
	if h.Get("Authorization") != "Bearer rotated" || h.Get("X-Pair") != "left-right" || h.Get("X-Static") != "v$1" {
		t.Errorf("headers = %v", h)
	}
}

func TestHTTPToolMissingEnvIsAToolError(t *testing.T) {
	rec, srv := serve(t, answerText(200, "ok"))
	def := lookupDef(srv.URL)
	def.HTTP.Headers = map[string]string{"Authorization": "Bearer ${REFUND_TOKEN}", "X-Other": "${PRESENT}"}
	res := execute(t, newHTTP(t, def, env(map[string]string{"PRESENT": "visible-value"})), call(`{}`))
	if !res.IsError || res.Content != "tool lookup_order: environment variable REFUND_TOKEN is not set" {
		t.Errorf("result = %+v", res)
	}
	if calls, _, _, _ := rec.snapshot(); calls != 0 {
		t.Error("the endpoint was called without its header")
	}
}

func TestHTTPToolRefusesControlCharactersFromEnv(t *testing.T) {
	rec, srv := serve(t, answerText(200, "ok"))
	def := lookupDef(srv.URL)
	def.HTTP.Headers = map[string]string{"Authorization": "Bearer ${T}"}
	res := execute(t, newHTTP(t, def, env(map[string]string{"T": "abc\r\nX-Evil: 1"})), call(`{}`))
	if !res.IsError || strings.Contains(res.Content, "abc") || !strings.Contains(res.Content, "control character") {
		t.Errorf("result = %+v", res)
	}
	if calls, _, _, _ := rec.snapshot(); calls != 0 {
		t.Error("the endpoint was called")
	}
}

func TestHTTPToolRefusesRedirectToOtherSchemes(t *testing.T) {
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	res := execute(t, newHTTP(t, lookupDef(srv.URL), env(nil)), call(`{}`))
	if !res.IsError || !strings.Contains(res.Content, `redirect to a "file" URL refused`) {
		t.Errorf("result = %+v", res)
	}
}

func TestHTTPToolFollowsRedirectsButDropsHeadersAcrossHosts(t *testing.T) {
	other, otherSrv := serve(t, answerText(200, `{"content":"moved"}`))
	_, srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherSrv.URL+"/new", http.StatusTemporaryRedirect)
	})
	def := lookupDef(srv.URL)
	def.HTTP.Headers = map[string]string{"X-Api-Key": "${KEY}"}
	res := execute(t, newHTTP(t, def, env(map[string]string{"KEY": "k"})), call(`{"order_id":"1"}`))
	if res.IsError || res.Content != "moved" {
		t.Fatalf("result = %+v", res)
	}
	_, _, body, h := other.snapshot()
	if h.Get("X-Api-Key") != "" {
		t.Error("the API key followed the redirect to another host")
	}
	if !strings.Contains(body, `"order_id":"1"`) {
		t.Errorf("307 body = %s", body)
	}
}

func TestHTTPToolKeepsHeadersOnSameHostRedirect(t *testing.T) {
	rec, srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	def := lookupDef(srv.URL + "/old")
	def.HTTP.Headers = map[string]string{"X-Api-Key": "${KEY}"}
	execute(t, newHTTP(t, def, env(map[string]string{"KEY": "k"})), call(`{}`))
	if _, _, _, h := rec.snapshot(); h.Get("X-Api-Key") != "k" {
		t.Errorf("headers after a same-host redirect = %v", h)
	}
}

func TestHTTPToolCapabilities(t *testing.T) {
	def := validDefinition()
	tl := newHTTP(t, def, nil)
	if tl.Name() != "issue_refund" || tl.Description() != "Issue the refund." || string(tl.Parameters()) != objectParams {
		t.Errorf("tool = %s %q %s", tl.Name(), tl.Description(), tl.Parameters())
	}
	if _, ok := tl.(tool.InputRequirer); ok {
		t.Error("a tool without input schema implements InputRequirer")
	}
	if tool.EffectOf(tl) != tool.EffectNonIdempotentWrite || !tool.NeedsApproval(tl) || !tool.IsAdminOnly(tl) {
		t.Errorf("effect %q, approval %v, admin %v", tool.EffectOf(tl), tool.NeedsApproval(tl), tool.IsAdminOnly(tl))
	}

	ask := newHTTP(t, tool.Definition{
		Name:        "ask_refund_amount",
		InputSchema: []byte(usableInput),
		HTTP:        tool.HTTPConfig{URL: "http://127.0.0.1:9000/amount"},
	}, nil)
	schema, ok := tool.InputSchemaOf(ask)
	if !ok || string(schema) != usableInput {
		t.Errorf("InputSchemaOf = %s, %v", schema, ok)
	}
	if tool.EffectOf(ask) != tool.EffectReadOnly || tool.NeedsApproval(ask) || tool.IsAdminOnly(ask) {
		t.Error("input tool has capabilities it did not declare")
	}
	if string(ask.Parameters()) != `{"type":"object","properties":{}}` {
		t.Errorf("Parameters without a schema = %s", ask.Parameters())
	}
	marked := newHTTP(t, tool.Definition{Name: "m", RequiresApproval: true, HTTP: tool.HTTPConfig{URL: "http://h/"}}, nil)
	if a, ok := marked.(tool.ApprovalRequirer); !ok || !a.RequiresApproval() {
		t.Error("requires_approval is not declared")
	}
	if _, err := tool.New(tl, ask, marked); err != nil {
		t.Errorf("HTTP tools do not register: %v", err)
	}
}

func TestNewHTTPRefusesInvalidDefinitions(t *testing.T) {
	def := validDefinition()
	def.HTTP.URL = "ftp://x"
	def.InputSchema = []byte(usableInput)
	tl, err := tool.NewHTTP(def, nil, nil)
	if err == nil || tl != nil {
		t.Fatalf("NewHTTP accepted it: %v", tl)
	}
	if !errors.Is(err, tool.ErrInvalidURL) || !errors.Is(err, tool.ErrApprovalAndInput) {
		t.Errorf("error %v does not report both problems", err)
	}
}

func TestNewHTTPKeepsTheCallersClient(t *testing.T) {
	rec, srv := serve(t, answerText(200, "ok"))
	seen := 0
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen++
		return http.DefaultTransport.RoundTrip(r)
	})}
	execute(t, func() tool.Tool {
		tl, err := tool.NewHTTP(lookupDef(srv.URL), client, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}(), call(`{}`))
	if calls, _, _, _ := rec.snapshot(); seen != 1 || calls != 1 {
		t.Errorf("transport used %d times, endpoint called %d times", seen, calls)
	}
	if client.CheckRedirect != nil {
		t.Error("NewHTTP changed the caller's client")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHTTPToolArgumentsBound: a definition's max_arguments_bytes is the built tool's bound on a
// call's arguments; 0 leaves the default.
func TestHTTPToolArgumentsBound(t *testing.T) {
	def := lookupDef("http://127.0.0.1:9/")
	if got := tool.MaxArgumentsBytes(newHTTP(t, def, env(nil))); got != tool.DefaultMaxArgumentsBytes {
		t.Errorf("no bound set: %d, want the default %d", got, tool.DefaultMaxArgumentsBytes)
	}
	def.MaxArgumentsBytes = 300
	if got := tool.MaxArgumentsBytes(newHTTP(t, def, env(nil))); got != 300 {
		t.Errorf("bound 300: got %d", got)
	}
}
