package api

import (
	"fmt"
	"testing"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
)

// TestAPIAnswersTheRefusalTable: every runtime code is answered with its row's status and
// message and the code itself, never the runtime's own message.
func TestAPIAnswersTheRefusalTable(t *testing.T) {
	for _, code := range refusal.Codes() {
		row, _ := refusal.Of(code)
		err := fmt.Errorf("wrapped: %w", &runtime.Error{Code: code, RunUUID: "r", Message: "names configuration secret-name"})
		p := fromRuntime(err)
		if p.Status != row.Status || p.Code != string(code) || p.Message != row.Message {
			t.Errorf("%s: answered %d %s %q, want %d %q", code, p.Status, p.Code, p.Message, row.Status, row.Message)
		}
	}
	if p := fromRuntime(fmt.Errorf("plain")); p.Status != 500 || p.Code != "internal_error" {
		t.Errorf("a non-runtime error: %+v", p)
	}
}
