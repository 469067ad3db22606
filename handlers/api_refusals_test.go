package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestEveryAPIRefusalThroughTheRouter sends each kind of refusal of /api/ paths through the real
// router, global middleware included, and checks the one JSON error shape: status, code, and
// Retry-After where it is due. A body over the limit is 413 body_too_large whether the global
// body limit (by Content-Length) or the API's own (while reading) catches it.
func TestEveryAPIRefusalThroughTheRouter(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, appOptions{configurations: []runtime.Configuration{inputConfiguration("details", "ask_details", modelArgs)}})
	c := a.newClient()
	token := func(scopes ...string) string {
		t.Helper()
		tok, err := a.tokens.CreateToken(t.Context(), "ci-"+strings.Join(scopes, "-"), scopes)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	reader, runner := token(runtime.ScopeRead), token(runtime.ScopeRun, runtime.ScopeRead)
	headers := func(tok string, kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	const unknownRun = "/api/v1/runs/00000000-0000-4000-8000-000000000000"
	huge := strings.Repeat("a", int(DefaultBodyLimit)+1)
	cases := []struct {
		what, method, path string
		body               io.Reader
		header             http.Header
		status             int
		code               string
		retryAfter         bool
	}{
		{"no token", http.MethodGet, unknownRun, nil, headers(""), 401, "unauthorized", false},
		{"a token that is not valid", http.MethodGet, unknownRun, nil, headers("rd_not-a-token"), 401, "invalid_token", false},
		{"a token without the scope", http.MethodPost, "/api/v1/runs", strings.NewReader(`{"configuration":"details","prompt":"hi"}`), headers(reader), 403, "insufficient_scope", false},
		{"a browser request from another site", http.MethodPost, "/api/v1/runs", strings.NewReader(`{}`), headers(runner, "Sec-Fetch-Site", "cross-site", "Origin", "https://elsewhere.example"), 403, "cross_origin", false},
		{"an unknown path", http.MethodGet, "/api/v1/nowhere", nil, headers(reader), 404, "not_found", false},
		{"an unknown run", http.MethodGet, unknownRun, nil, headers(reader), 404, string(runtime.CodeRunNotFound), false},
		{"an unknown configuration", http.MethodPost, "/api/v1/runs", strings.NewReader(`{"configuration":"nope","prompt":"hi"}`), headers(runner), 404, string(runtime.CodeConfigurationNotFound), false},
		{"another method", http.MethodDelete, unknownRun, nil, headers(reader), 405, "method_not_allowed", false},
		{"TRACE", http.MethodTrace, unknownRun, nil, headers(reader), 405, "method_not_allowed", false},
		{"a body over the global limit, by Content-Length", http.MethodPost, "/api/v1/runs", strings.NewReader(huge), headers(runner), 413, "body_too_large", false},
		{"a body over the API's limit, while reading", http.MethodPost, "/api/v1/runs", io.MultiReader(strings.NewReader(`{"configuration":"details","prompt":"`), strings.NewReader(strings.Repeat("a", 70<<10)), strings.NewReader(`"}`)), headers(runner), 413, "body_too_large", false},
		{"a body that is not JSON", http.MethodPost, "/api/v1/runs", strings.NewReader(`{"configuration":`), headers(runner), 400, "invalid_request", false},
		{"a body of another type", http.MethodPost, "/api/v1/runs", strings.NewReader(`configuration=details`), headers(runner, "Content-Type", "text/plain"), 415, "unsupported_media_type", false},
	}
	for _, tc := range cases {
		res := c.request(tc.method, tc.path, tc.body, tc.header)
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.NewDecoder(bytes.NewReader([]byte(res.body))).Decode(&body); err != nil {
			t.Errorf("%s: the body is not the API's JSON error: %v; %.200s", tc.what, err, res.body)
			continue
		}
		if res.status != tc.status || body.Error.Code != tc.code || body.Error.Message == "" {
			t.Errorf("%s: %d %q %q, want %d %q with a message", tc.what, res.status, body.Error.Code, body.Error.Message, tc.status, tc.code)
		}
	}

	var limited response
	for range 100 {
		if limited = c.request(http.MethodGet, unknownRun, nil, headers(reader)); limited.status == http.StatusTooManyRequests {
			break
		}
	}
	if limited.status != http.StatusTooManyRequests || !strings.Contains(limited.body, `"code":"rate_limited"`) {
		t.Fatalf("a token over its budget: %d %.200s, want 429 rate_limited", limited.status, limited.body)
	}
	if n, err := strconv.Atoi(limited.header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("429: Retry-After %q, want whole seconds", limited.header.Get("Retry-After"))
	}
}
