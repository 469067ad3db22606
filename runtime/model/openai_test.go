package model

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// endpoint is a fake chat-completions server. Each request is answered by the next of answers;
// the last one repeats.
type endpoint struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
	answers  []func(w http.ResponseWriter, r *http.Request)
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	n := len(e.requests)
	e.requests = append(e.requests, r)
	e.bodies = append(e.bodies, string(b))
	answer := e.answers[min(n, len(e.answers)-1)]
	e.mu.Unlock()
	answer(w, r)
}

func (e *endpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.requests)
}

func (e *endpoint) request(i int) (*http.Request, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests[i], e.bodies[i]
}

func startEndpoint(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) (*endpoint, *httptest.Server) {
	t.Helper()
	e := &endpoint{answers: answers}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, srv
}

func reply(status int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const helloBody = `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`

// sleeps records the waits between retries instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func settings(url string) Settings {
	return Settings{Kind: KindOpenAI, BaseURL: url + "/v1", Model: "llama3.1", APIKeyEnv: "OPENAI_API_KEY"}
}

func withKey(name string) string {
	if name == "OPENAI_API_KEY" {
		return "sk-test-secret"
	}
	return ""
}

func newTestOpenAI(t *testing.T, s Settings) (*openAI, *sleeps) {
	t.Helper()
	p, err := newOpenAI(s, nil, withKey)
	if err != nil {
		t.Fatalf("newOpenAI: %v", err)
	}
	rec := &sleeps{}
	p.sleep = rec.sleep
	return p, rec
}

func userRequest() Request {
	return Request{Messages: []Message{{Role: "user", Content: "hi"}}}
}

func TestOpenAIPlainAnswer(t *testing.T) {
	_, srv := startEndpoint(t, reply(200, helloBody))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	resp, err := p.Complete(context.Background(), userRequest())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := Response{
		Message:      Message{Role: "assistant", Content: "Hello there."},
		FinishReason: "stop",
		Usage:        Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15},
	}
	if resp.Message.Role != want.Message.Role || resp.Message.Content != want.Message.Content ||
		len(resp.Message.ToolCalls) != 0 || resp.FinishReason != want.FinishReason || resp.Usage != want.Usage {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
}

// TestOpenAIUsageOutOfRangeIsReported: counts beyond int64 or with a fraction do not refuse the
// completion; they are reported saturated (truncated), for the engine to judge.
func TestOpenAIUsageOutOfRangeIsReported(t *testing.T) {
	_, srv := startEndpoint(t, reply(200, `{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1e30,"completion_tokens":-1e30,"total_tokens":12.5}}`))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	resp, err := p.Complete(context.Background(), userRequest())
	if err != nil || resp.Usage != (Usage{PromptTokens: math.MaxInt64, CompletionTokens: math.MinInt64, TotalTokens: 12}) {
		t.Errorf("usage = %+v, %v", resp.Usage, err)
	}
}

func TestOpenAIUsageTotalDefaultsToTheSum(t *testing.T) {
	_, srv := startEndpoint(t, reply(200, `{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2}}`))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	resp, err := p.Complete(context.Background(), userRequest())
	if err != nil || resp.Usage != (Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}) {
		t.Errorf("usage = %+v, %v", resp.Usage, err)
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	e, srv := startEndpoint(t, reply(200, helloBody))
	s := settings(srv.URL)
	s.BaseURL += "/"
	p, _ := newTestOpenAI(t, s)
	req := Request{
		Messages: []Message{
			{Role: "system", Content: "You help."},
			{Role: "user", Content: "Refund order 42."},
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_a", Function: FunctionCall{Name: "lookup_order", Arguments: `{"order_id":"42"}`}}}},
			{Role: "tool", ToolCallID: "call_a", Content: "order 42: 10 EUR"},
		},
		Tools: []ToolSpec{
			{Name: "lookup_order", Description: "Look an order up.", Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)},
			{Name: "ping"},
		},
	}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	r, body := e.request(0)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		t.Errorf("%s %s", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test-secret" {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	want := `{
	  "model": "llama3.1",
	  "messages": [
	    {"role": "system", "content": "You help."},
	    {"role": "user", "content": "Refund order 42."},
	    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"order_id\":\"42\"}"}}]},
	    {"role": "tool", "content": "order 42: 10 EUR", "tool_call_id": "call_a"}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "lookup_order", "description": "Look an order up.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}},
	    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
	  ]
	}`
	assertSameJSON(t, body, want)
}

func TestOpenAIOmitsToolsAndAuthorizationWhenAbsent(t *testing.T) {
	e, srv := startEndpoint(t, reply(200, helloBody))
	s := settings(srv.URL)
	s.APIKeyEnv = ""
	p, _ := newTestOpenAI(t, s)
	if _, err := p.Complete(context.Background(), userRequest()); err != nil {
		t.Fatal(err)
	}
	r, body := e.request(0)
	if _, ok := r.Header["Authorization"]; ok {
		t.Error("an Authorization header was sent without api_key_env")
	}
	assertSameJSON(t, body, `{"model":"llama3.1","messages":[{"role":"user","content":"hi"}]}`)
}

func assertSameJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("body = %s\nwant   %s", gb, wb)
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	body := `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
	  {"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\": \"42\"}"}},
	  {"id":"call_2","type":"function","function":{"name":"issue_refund","arguments":"{\"amount\": 10"}},
	  {"id":"call_x","type":"function","function":{"name":"ask","arguments":{"city": "Berlin", "n": [1, 2]}}},
	  {"type":"function","function":{"name":"ping"}},
	  {"id":"call_1","function":{"name":"dup","arguments":null}}
	]},"finish_reason":"tool_calls"}]}`
	_, srv := startEndpoint(t, reply(200, body))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	resp, err := p.Complete(context.Background(), userRequest())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Content != "" || resp.FinishReason != "tool_calls" || resp.Usage != (Usage{}) {
		t.Errorf("response = %+v", resp)
	}
	want := []ToolCall{
		{ID: "call_1", Type: "function", Function: FunctionCall{Name: "lookup_order", Arguments: `{"order_id": "42"}`}},
		{ID: "call_2", Type: "function", Function: FunctionCall{Name: "issue_refund", Arguments: `{"amount": 10`}},
		{ID: "call_x", Type: "function", Function: FunctionCall{Name: "ask", Arguments: `{"city":"Berlin","n":[1,2]}`}},
		{ID: "call_3", Type: "function", Function: FunctionCall{Name: "ping", Arguments: `{}`}},
		{ID: "call_4", Type: "function", Function: FunctionCall{Name: "dup", Arguments: `{}`}},
	}
	if len(resp.Message.ToolCalls) != len(want) {
		t.Fatalf("tool calls = %+v", resp.Message.ToolCalls)
	}
	for i, c := range resp.Message.ToolCalls {
		if c != want[i] {
			t.Errorf("call %d = %+v, want %+v", i, c, want[i])
		}
	}
}

func TestOpenAIContentParts(t *testing.T) {
	_, srv := startEndpoint(t, reply(200, `{"choices":[{"message":{"content":[{"type":"text","text":"Hello, "},{"type":"image_url"},{"type":"text","text":"world"}]},"finish_reason":"stop"}]}`))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	resp, err := p.Complete(context.Background(), userRequest())
	if err != nil || resp.Message.Content != "Hello, world" {
		t.Errorf("content = %q, %v", resp.Message.Content, err)
	}
}

func TestOpenAIMalformedResponses(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":       `<html>gateway</html>`,
		"no choices":     `{"choices":[]}`,
		"error in a 200": `{"error":{"message":"model not loaded"}}`,
		"odd content":    `{"choices":[{"message":{"content":42}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			e, srv := startEndpoint(t, reply(200, body))
			p, _ := newTestOpenAI(t, settings(srv.URL))
			_, err := p.Complete(context.Background(), userRequest())
			if !errors.Is(err, ErrMalformedResponse) || IsRetryable(err) {
				t.Errorf("error = %v", err)
			}
			if e.count() != 1 {
				t.Errorf("%d attempts", e.count())
			}
		})
	}
	_, srv := startEndpoint(t, reply(200, `{"error":{"message":"model not loaded"}}`))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	if _, err := p.Complete(context.Background(), userRequest()); err == nil || !strings.Contains(err.Error(), "model not loaded") {
		t.Errorf("error %v does not carry the endpoint's message", err)
	}
}

func TestOpenAIRetriesTooManyRequestsHonouringRetryAfter(t *testing.T) {
	e, srv := startEndpoint(t,
		reply(429, `{"error":{"message":"slow down"}}`, "Retry-After", "2"),
		reply(200, helloBody))
	p, rec := newTestOpenAI(t, settings(srv.URL))
	resp, err := p.Complete(context.Background(), userRequest())
	if err != nil || resp.Message.Content != "Hello there." {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
	if e.count() != 2 {
		t.Errorf("%d attempts, want 2", e.count())
	}
	if got := rec.all(); len(got) != 1 || got[0] != 2*time.Second {
		t.Errorf("waits = %v, want [2s]", got)
	}
}

func TestOpenAICapsRetryAfter(t *testing.T) {
	_, srv := startEndpoint(t, reply(503, `busy`, "Retry-After", "3600"), reply(200, helloBody))
	p, rec := newTestOpenAI(t, settings(srv.URL))
	if _, err := p.Complete(context.Background(), userRequest()); err != nil {
		t.Fatal(err)
	}
	if got := rec.all(); len(got) != 1 || got[0] != retryAfterMax {
		t.Errorf("waits = %v, want [%s]", got, retryAfterMax)
	}
}

func TestOpenAIGivesUpAfterMaxRetries(t *testing.T) {
	e, srv := startEndpoint(t, reply(500, `{"error":{"message":"upstream exploded"}}`))
	s := settings(srv.URL)
	s.MaxRetries = new(2)
	p, rec := newTestOpenAI(t, s)
	_, err := p.Complete(context.Background(), userRequest())
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 500 || se.Message != "upstream exploded" {
		t.Fatalf("error = %v", err)
	}
	if !IsRetryable(err) || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("error = %v", err)
	}
	if e.count() != 3 {
		t.Errorf("%d attempts, want 3", e.count())
	}
	waits := rec.all()
	if len(waits) != 2 {
		t.Fatalf("waits = %v", waits)
	}
	for i, d := range waits {
		ceil := backoffBase << i
		if d < ceil/2 || d > ceil {
			t.Errorf("wait %d = %s, want within [%s, %s]", i, d, ceil/2, ceil)
		}
	}
}

func TestOpenAIDefaultsToThreeRetries(t *testing.T) {
	e, srv := startEndpoint(t, reply(502, `bad gateway`))
	p, _ := newTestOpenAI(t, settings(srv.URL))
	if _, err := p.Complete(context.Background(), userRequest()); err == nil {
		t.Fatal("no error")
	}
	if e.count() != 1+DefaultMaxRetries {
		t.Errorf("%d attempts, want %d", e.count(), 1+DefaultMaxRetries)
	}
}

func TestOpenAIClientErrorIsNotRetried(t *testing.T) {
	long := strings.Repeat("x", 500)
	e, srv := startEndpoint(t, reply(400, `{"error":{"message":"Invalid key sk-test-secret\n\tfor model\u0007 `+long+`"}}`))
	p, rec := newTestOpenAI(t, settings(srv.URL))
	_, err := p.Complete(context.Background(), userRequest())
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 400 {
		t.Fatalf("error = %v", err)
	}
	if e.count() != 1 || len(rec.all()) != 0 || IsRetryable(err) {
		t.Errorf("%d attempts, waits %v, retryable %v", e.count(), rec.all(), IsRetryable(err))
	}
	if strings.Contains(err.Error(), "sk-test-secret") || strings.ContainsAny(se.Message, "\n\t\a") {
		t.Errorf("message not sanitized: %q", se.Message)
	}
	if !strings.HasPrefix(se.Message, "Invalid key [redacted] for model x") || len([]rune(se.Message)) > maxExcerpt+1 {
		t.Errorf("message = %q", se.Message)
	}
}

func TestOpenAIDoesNotFollowRedirects(t *testing.T) {
	other, otherSrv := startEndpoint(t, reply(200, helloBody))
	e, srv := startEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherSrv.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	p, _ := newTestOpenAI(t, settings(srv.URL))
	_, err := p.Complete(context.Background(), userRequest())
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusTemporaryRedirect {
		t.Errorf("error = %v", err)
	}
	if other.count() != 0 || e.count() != 1 {
		t.Errorf("redirect target called %d times, endpoint %d times", other.count(), e.count())
	}
}

func TestOpenAITimeoutIsRetriedThenReported(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	e, srv := startEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	s := settings(srv.URL)
	s.Timeout = 50 * time.Millisecond
	s.MaxRetries = new(1)
	p, _ := newTestOpenAI(t, s)
	start := time.Now()
	_, err := p.Complete(context.Background(), userRequest())
	var te *TransportError
	if !errors.As(err, &te) || !IsRetryable(err) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("error = %v", err)
	}
	if e.count() != 2 {
		t.Errorf("%d attempts, want 2", e.count())
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s", took)
	}
}

func TestOpenAITransportErrorIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, rec := newTestOpenAI(t, Settings{Kind: KindOpenAI, BaseURL: url + "/v1?token=query-secret", Model: "m", MaxRetries: new(1)})
	_, err := p.Complete(context.Background(), userRequest())
	var te *TransportError
	if !errors.As(err, &te) || !IsRetryable(err) {
		t.Errorf("error = %v", err)
	}
	if len(rec.all()) != 1 {
		t.Errorf("waits = %v, want one retry", rec.all())
	}
	if strings.Contains(err.Error(), "query-secret") {
		t.Errorf("error %q leaks the URL", err)
	}
}

func TestOpenAICancelDuringBackoff(t *testing.T) {
	e, srv := startEndpoint(t, reply(503, `busy`))
	p, err := newOpenAI(settings(srv.URL), nil, withKey)
	if err != nil {
		t.Fatal(err)
	}
	p.backoffBase = time.Minute
	p.backoffMax = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for e.count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err = p.Complete(ctx, userRequest())
	if !errors.Is(err, context.Canceled) || IsRetryable(err) {
		t.Errorf("error = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s: the wait ignored cancellation", took)
	}
	if e.count() != 1 {
		t.Errorf("%d attempts", e.count())
	}
}

func TestOpenAIMissingAPIKey(t *testing.T) {
	_, err := newOpenAI(Settings{Kind: KindOpenAI, BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "MY_KEY"}, nil, func(string) string { return "" })
	if !errors.Is(err, ErrMissingEnv) || !strings.Contains(err.Error(), "MY_KEY") {
		t.Errorf("error = %v", err)
	}

	e, srv := startEndpoint(t, reply(200, helloBody))
	key := "present"
	var mu sync.Mutex
	getenv := func(name string) string {
		mu.Lock()
		defer mu.Unlock()
		if name == "MY_KEY" {
			return key
		}
		return ""
	}
	p, err := newOpenAI(Settings{Kind: KindOpenAI, BaseURL: srv.URL, Model: "m", APIKeyEnv: "MY_KEY"}, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	key = ""
	mu.Unlock()
	_, err = p.Complete(context.Background(), userRequest())
	if !errors.Is(err, ErrMissingEnv) || !strings.Contains(err.Error(), "MY_KEY") {
		t.Errorf("error = %v", err)
	}
	if e.count() != 0 {
		t.Error("the endpoint was called without the key")
	}
}

func TestOpenAIReadsTheKeyAtEachRequest(t *testing.T) {
	e, srv := startEndpoint(t, reply(200, helloBody))
	key := "first"
	var mu sync.Mutex
	getenv := func(string) string { mu.Lock(); defer mu.Unlock(); return key }
	p, err := newOpenAI(Settings{Kind: KindOpenAI, BaseURL: srv.URL, Model: "m", APIKeyEnv: "K"}, nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	key = "rotated"
	mu.Unlock()
	if _, err := p.Complete(context.Background(), userRequest()); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.request(0); r.Header.Get("Authorization") != "Bearer rotated" {
		t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
	}
}

func TestOpenAIResponseTooLarge(t *testing.T) {
	_, srv := startEndpoint(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"choices":[{"message":{"content":"`)
		_, _ = io.WriteString(w, strings.Repeat("x", MaxResponseBytes))
		_, _ = io.WriteString(w, `"}}]}`)
	})
	p, _ := newTestOpenAI(t, settings(srv.URL))
	_, err := p.Complete(context.Background(), userRequest())
	if !errors.Is(err, ErrResponseTooLarge) || IsRetryable(err) {
		t.Errorf("error = %v", err)
	}
}

func TestOpenAIRefusesInvalidSettings(t *testing.T) {
	ok := Settings{Kind: KindOpenAI, BaseURL: "http://127.0.0.1:11434/v1", Model: "m"}
	cases := map[string]func(*Settings){
		"empty base URL":       func(s *Settings) { s.BaseURL = "" },
		"relative base URL":    func(s *Settings) { s.BaseURL = "/v1" },
		"ftp base URL":         func(s *Settings) { s.BaseURL = "ftp://h/v1" },
		"credentials in URL":   func(s *Settings) { s.BaseURL = "http://u:p@h/v1" },
		"no model":             func(s *Settings) { s.Model = " " },
		"negative timeout":     func(s *Settings) { s.Timeout = -time.Second },
		"negative retries":     func(s *Settings) { s.MaxRetries = new(-1) },
		"retries over the cap": func(s *Settings) { s.MaxRetries = new(MaxMaxRetries + 1) },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			s := ok
			change(&s)
			if _, err := NewOpenAI(s, nil, nil); !errors.Is(err, ErrInvalidSettings) {
				t.Errorf("error = %v", err)
			}
		})
	}
	if _, err := NewOpenAI(ok, nil, nil); err != nil {
		t.Errorf("valid settings refused: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		" 3 ":                           3 * time.Second,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"Thu, 02 Jan 2025 03:04:35 GMT": 30 * time.Second,
		"Thu, 02 Jan 2025 03:00:00 GMT": 0,
		"99999999999":                   24 * time.Hour,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestOpenAICancelDuringRequestIsNotRetried(t *testing.T) {
	e, srv := startEndpoint(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	p, rec := newTestOpenAI(t, settings(srv.URL))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for e.count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := p.Complete(ctx, userRequest())
	if !errors.Is(err, context.Canceled) || IsRetryable(err) {
		t.Errorf("error = %v", err)
	}
	if waits := rec.all(); len(waits) != 0 || e.count() != 1 {
		t.Errorf("after cancellation: waits %v, %d attempts", waits, e.count())
	}
}

func TestOpenAIBackoffHasJitter(t *testing.T) {
	p, _ := newTestOpenAI(t, settings("http://127.0.0.1:1"))
	seen := map[time.Duration]bool{}
	ceil := backoffBase << 2
	for range 50 {
		d := p.delay(2, &TransportError{Err: errors.New("x")})
		if d < ceil/2 || d > ceil {
			t.Fatalf("delay %s outside [%s, %s]", d, ceil/2, ceil)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("50 delays took %d distinct values", len(seen))
	}
	if d := p.delay(40, &TransportError{Err: errors.New("x")}); d < backoffMax/2 || d > backoffMax {
		t.Errorf("delay after many attempts = %s, want at most %s", d, backoffMax)
	}
}

func TestOpenAIZeroRetriesMeansNone(t *testing.T) {
	e, srv := startEndpoint(t, reply(503, `busy`))
	s := settings(srv.URL)
	s.MaxRetries = new(0)
	p, rec := newTestOpenAI(t, s)
	_, err := p.Complete(context.Background(), userRequest())
	if !IsRetryable(err) {
		t.Fatalf("error = %v, want the retryable 503", err)
	}
	if e.count() != 1 || len(rec.all()) != 0 {
		t.Errorf("%d attempts and waits %v, want 1 attempt and no wait", e.count(), rec.all())
	}
}
