package apply

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// field is one field of a stored item as the file names it, and whether two versions agree
// on it.
type field struct {
	name  string
	equal bool
}

// differing are the names of fields that do not agree, in order (nil when all do).
func differing(fields ...field) []string {
	var out []string
	for _, f := range fields {
		if !f.equal {
			out = append(out, f.name)
		}
	}
	return out
}

// toolDiff names the fields in which a and b would be stored differently (nil: the same
// row): JSON compared compact, empty header maps equal to none, durations in milliseconds.
func toolDiff(a, b tool.Definition) []string {
	return differing(
		field{"description", a.Description == b.Description},
		field{"parameters", compact(a.Parameters) == compact(b.Parameters)},
		field{"input_schema", compact(a.InputSchema) == compact(b.InputSchema)},
		field{"effect", a.Effect == b.Effect},
		field{"admin_only", a.AdminOnly == b.AdminOnly},
		field{"requires_approval", a.RequiresApproval == b.RequiresApproval},
		field{"editable", a.Editable == b.Editable},
		field{"max_arguments_bytes", a.MaxArgumentsBytes == b.MaxArgumentsBytes},
		field{"approvals_required", a.Quorum.Required == b.Quorum.Required},
		field{"allow_automatic_vote", a.Quorum.AutomaticVote == b.Quorum.AutomaticVote},
		field{"http.url", a.HTTP.URL == b.HTTP.URL},
		field{"http.headers", maps.Equal(a.HTTP.Headers, b.HTTP.Headers)},
		field{"http.timeout", a.HTTP.Timeout.Milliseconds() == b.HTTP.Timeout.Milliseconds()},
		field{"http.max_response_bytes", a.HTTP.MaxResponseBytes == b.HTTP.MaxResponseBytes},
		field{"mcp", mcpEqual(a.MCP, b.MCP)},
		field{"wait", waitEqual(a.Wait, b.Wait)},
	)
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

// configurationDiff names the fields in which a and b would be stored differently (nil: the
// same row; the uid is not compared).
func configurationDiff(a, b runtime.Configuration) []string {
	pa, pb := a.Provider, b.Provider
	return differing(
		field{"name", a.Name == b.Name},
		field{"system_prompt", a.SystemPrompt == b.SystemPrompt},
		field{"max_iterations", a.MaxIterations == b.MaxIterations},
		field{"require_second_approver", a.RequireSecondApprover == b.RequireSecondApprover},
		field{"approvals_required", a.Quorum.Required == b.Quorum.Required},
		field{"allow_automatic_vote", a.Quorum.AutomaticVote == b.Quorum.AutomaticVote},
		field{"tools", slices.Equal(a.Tools, b.Tools)},
		field{"provider.kind", pa.Kind == pb.Kind},
		field{"provider.base_url", pa.BaseURL == pb.BaseURL},
		field{"provider.model", pa.Model == pb.Model},
		field{"provider.api_key_env", pa.APIKeyEnv == pb.APIKeyEnv},
		field{"provider.timeout", pa.Timeout.Milliseconds() == pb.Timeout.Milliseconds()},
		field{"provider.max_retries", equalRetries(pa.MaxRetries, pb.MaxRetries)},
		field{"provider.script", scriptJSON(pa.Script) == scriptJSON(pb.Script)},
		field{"pricing", a.Pricing == b.Pricing},
		field{"budget", a.Budget == b.Budget},
		field{"max_context_tokens", a.MaxContextTokens == b.MaxContextTokens},
		field{"guardrails", scriptJSON(a.Guardrails) == scriptJSON(b.Guardrails)},
		field{"notify", notifyEqual(a.Notify, b.Notify)},
		field{"wait", waitEqual(a.Wait, b.Wait)},
		field{"subject", a.Subject == b.Subject},
		field{"keep_output", a.NoOutput == b.NoOutput},
		field{"privacy", a.Privacy.OrMetadata() == b.Privacy.OrMetadata()},
		field{"support_sees", a.SupportSeesFull() == b.SupportSeesFull()},
		field{"assignment", a.Assignment.Equal(b.Assignment)},
		field{"retention", a.Retention == b.Retention},
		field{"kind", a.IsExternal() == b.IsExternal()},
		field{"callers", slices.Equal(externalOf(a).Callers, externalOf(b).Callers)},
		field{"ad_hoc", externalOf(a).AdHoc == externalOf(b).AdHoc},
		field{"callback_hosts", slices.Equal(externalOf(a).CallbackHosts, externalOf(b).CallbackHosts)},
		field{"callback_secret_env", externalOf(a).CallbackSecretEnv == externalOf(b).CallbackSecretEnv},
	)
}

// externalOf is c's external policy, the zero policy for an agent configuration.
func externalOf(c runtime.Configuration) runtime.ExternalPolicy {
	if c.External == nil {
		return runtime.ExternalPolicy{}
	}
	return *c.External
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
