package apply

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// toolsEqual reports whether a and b would be stored as the same row: JSON compared compact,
// empty header maps equal to none, durations in milliseconds.
func toolsEqual(a, b tool.Definition) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		compact(a.Parameters) == compact(b.Parameters) &&
		compact(a.InputSchema) == compact(b.InputSchema) &&
		a.Effect == b.Effect && a.AdminOnly == b.AdminOnly && a.RequiresApproval == b.RequiresApproval &&
		a.Editable == b.Editable &&
		a.HTTP.URL == b.HTTP.URL && maps.Equal(a.HTTP.Headers, b.HTTP.Headers) &&
		a.HTTP.Timeout.Milliseconds() == b.HTTP.Timeout.Milliseconds() &&
		a.HTTP.MaxResponseBytes == b.HTTP.MaxResponseBytes && mcpEqual(a.MCP, b.MCP) &&
		waitEqual(a.Wait, b.Wait)
}

// mcpEqual reports whether two remote-tool settings would be stored the same (nil: not remote).
func mcpEqual(a, b *tool.MCPConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Server == b.Server && a.Tool == b.Tool && a.Digest == b.Digest &&
		compact(a.Annotations) == compact(b.Annotations) &&
		a.ElicitationTimeout.Milliseconds() == b.ElicitationTimeout.Milliseconds()
}

// configurationsEqual reports whether a and b would be stored as the same row (the uid is
// not compared).
func configurationsEqual(a, b runtime.Configuration) bool {
	pa, pb := a.Provider, b.Provider
	return a.Identifier == b.Identifier && a.Name == b.Name && a.SystemPrompt == b.SystemPrompt &&
		a.MaxIterations == b.MaxIterations && a.RequireSecondApprover == b.RequireSecondApprover &&
		slices.Equal(a.Tools, b.Tools) &&
		pa.Kind == pb.Kind && pa.BaseURL == pb.BaseURL && pa.Model == pb.Model && pa.APIKeyEnv == pb.APIKeyEnv &&
		pa.Timeout.Milliseconds() == pb.Timeout.Milliseconds() && equalRetries(pa.MaxRetries, pb.MaxRetries) &&
		scriptJSON(pa.Script) == scriptJSON(pb.Script) &&
		a.Pricing == b.Pricing && a.Budget == b.Budget && a.MaxContextTokens == b.MaxContextTokens &&
		scriptJSON(a.Guardrails) == scriptJSON(b.Guardrails) && notifyEqual(a.Notify, b.Notify) && waitEqual(a.Wait, b.Wait) &&
		a.Subject == b.Subject
}

// equalRetries reports whether two max_retries settings are the same: both unset (the
// default), or both set to the same number (0 = no retry).
func equalRetries(a, b *int) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// compact is raw without insignificant white space ("" for none); text that is not JSON is
// returned as it is.
func compact(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// scriptJSON is a script as the store encodes it ("" for none).
func scriptJSON(script any) string {
	b, err := json.Marshal(script)
	if err != nil || string(b) == "null" || string(b) == "[]" {
		return ""
	}
	return string(b)
}
