package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCallsHoldingTool: a tools/call of a holding tool, alone or in a batch, is long-lived;
// every other message is not; the body is put back whole for the SDK.
func TestCallsHoldingTool(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"request_approval","arguments":{}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"approve_tool_use"}}`, true},
		{`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"await_decision"}}]`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cancel_request"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"name":"request_approval"}}`, false},
		{`not json`, false},
	} {
		r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(c.body))
		if got := callsHoldingTool(r); got != c.want {
			t.Errorf("%s: held %v, want %v", c.body, got, c.want)
		}
		if rest, err := io.ReadAll(r.Body); err != nil || string(rest) != c.body {
			t.Errorf("%s: body after the peek %q, %v", c.body, rest, err)
		}
	}
	if callsHoldingTool(httptest.NewRequest(http.MethodGet, Path, nil)) {
		t.Error("a GET is held")
	}
}

// TestSpoken: durations in the words of a denial and the tools' descriptions.
func TestSpoken(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1 second", 50 * time.Second: "50 seconds", 10 * time.Minute: "10 minutes",
		time.Minute: "1 minute", 90 * time.Second: "1 minute 30 seconds", 10*time.Minute + 200*time.Millisecond: "10 minutes",
		300 * time.Millisecond: "300 milliseconds", 1499 * time.Millisecond: "1 second",
	} {
		if got := spoken(d); got != want {
			t.Errorf("spoken(%s) = %q, want %q", d, got, want)
		}
	}
}
