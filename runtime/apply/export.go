package apply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"runsdesk/runtime"
	"runsdesk/runtime/guardrail"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/retention"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// exportHeader opens every exported file.
const exportHeader = "# What `runsdesk apply -f` applied to this desk, as a file `apply -f` accepts unchanged.\n" +
	"# Header values are as they were applied: ${VAR} references are read from the environment.\n"

// Export writes desk as an apply file: the same keys and document shape as a file written by
// hand, which Load and Plan accept unchanged and which applied again changes nothing. The
// configurations and tools keep their stored order; each remote tool's server becomes one
// mcp_servers entry, with the tool's own quorum and max_response_bytes on the tool; the
// standing approvals in force are the whole standing_approvals list (left out when none
// is). Header values are written as they were applied, ${VAR} references included.
func Export(desk runtime.AppliedDesk) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(exportHeader)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(FileOf(desk)); err != nil {
		return nil, fmt.Errorf("apply: export: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("apply: export: %w", err)
	}
	return b.Bytes(), nil
}

// FileOf is desk as the apply file that stores it: what Export writes.
func FileOf(desk runtime.AppliedDesk) File {
	var f File
	for _, c := range desk.Configurations {
		f.Configurations = append(f.Configurations, configurationSpec(c))
	}
	servers := map[string]bool{}
	for _, d := range desk.Tools {
		f.Tools = append(f.Tools, toolSpec(d))
		if d.MCP != nil && !servers[d.MCP.Server] {
			servers[d.MCP.Server] = true
			f.MCPServers = append(f.MCPServers, serverSpec(d))
		}
	}
	var rules []StandingApprovalSpec
	for _, r := range desk.StandingApprovals {
		if r.Revoked == 0 {
			rules = append(rules, ruleSpec(r))
		}
	}
	if len(rules) > 0 {
		f.StandingApprovals = &rules
	}
	return f
}

// configurationSpec is the entry of `configurations:` that stores c.
func configurationSpec(c runtime.Configuration) ConfigurationSpec {
	s := ConfigurationSpec{
		Identifier: c.Identifier, Name: c.Name, Provider: providerSpec(c.Provider), SystemPrompt: c.SystemPrompt,
		MaxIterations: &c.MaxIterations, RequireSecondApprover: c.RequireSecondApprover, Tools: c.Tools,
		Wait: waitSpec(c.Wait), MaxContextTokens: positive(c.MaxContextTokens), Subject: c.Subject,
		Privacy: string(c.Privacy), SupportSees: string(c.SupportSees), Retention: retentionSpec(c),
	}
	s.ApprovalsRequired, s.AllowAutomaticVote = quorumKeys(c.Quorum)
	if c.Pricing != (runtime.Pricing{}) {
		s.Pricing = &PricingSpec{PromptPer1K: &c.Pricing.PromptPer1K, CompletionPer1K: &c.Pricing.CompletionPer1K}
	}
	if c.Budget != (runtime.Budget{}) {
		s.Budget = &BudgetSpec{MaxTotalTokens: positive(c.Budget.MaxTotalTokens), MaxCost: positive(c.Budget.MaxCost)}
	}
	for _, g := range c.Guardrails {
		s.Guardrails = append(s.Guardrails, guardrailSpec(g))
	}
	for _, r := range c.Notify {
		s.Notify = append(s.Notify, notifySpec(r))
	}
	if c.NoOutput {
		keep := false
		s.KeepOutput = &keep
	}
	if a := c.Assignment; !a.Default() {
		s.Assignment = &AssignmentSpec{ReviewersMayAssign: a.ReviewersMayAssign, Strict: a.Strict, Auto: a.Auto, Pool: a.Pool}
	}
	if e := c.External; e != nil {
		s.Kind, s.Callers, s.AdHoc = KindExternal, e.Callers, e.AdHoc
		s.CallbackHosts, s.CallbackSecretEnv = e.CallbackHosts, e.CallbackSecretEnv
		s.Provider, s.MaxIterations = nil, nil
	}
	return s
}

// providerSpec is the `provider:` that stores p.
func providerSpec(p model.Settings) *ProviderSpec {
	s := &ProviderSpec{Kind: p.Kind, BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv,
		Timeout: duration(p.Timeout), MaxRetries: p.MaxRetries}
	for _, t := range p.Script {
		turn := TurnSpec{Content: t.Content}
		for _, call := range t.ToolCalls {
			turn.ToolCalls = append(turn.ToolCalls, CallSpec{Name: call.Name, Arguments: JSON(call.Arguments)})
		}
		s.Script = append(s.Script, turn)
	}
	return s
}

// waitSpec is the `wait:` that stores p, nil for none.
func waitSpec(p wait.Policy) *WaitSpec {
	if p.IsZero() {
		return nil
	}
	return &WaitSpec{ExpiresAfter: duration(p.ExpiresAfter), OnExpiry: string(p.OnExpiry), RemindAfter: duration(p.RemindAfter),
		EscalateAfter: duration(p.EscalateAfter), AfterEscalation: string(p.AfterEscalation), Answer: JSON(p.Answer)}
}

// retentionSpec is the `retention:` of c, nil when it keeps every default.
func retentionSpec(c runtime.Configuration) *RetentionSpec {
	p := c.Retention
	if p == retention.Default() {
		return nil
	}
	return &RetentionSpec{Outputs: duration(p.Outputs), Transcripts: duration(p.Transcripts), Runs: duration(p.Runs)}
}

// guardrailSpec is the entry of `guardrails:` that stores g.
func guardrailSpec(g guardrail.Spec) GuardrailSpec {
	s := GuardrailSpec{On: g.On}
	if g.HTTP == nil {
		s.DenyPattern = &g.DenyPattern
		return s
	}
	s.HTTP = &GuardrailHTTPSpec{URL: g.HTTP.URL, Timeout: duration(time.Duration(g.HTTP.TimeoutMS) * time.Millisecond)}
	return s
}

// notifySpec is the entry of `notify:` that stores r.
func notifySpec(r runtime.NotifyRule) NotifySpec {
	s := NotifySpec{IncludeSubject: r.IncludeSubject, IncludeOutput: r.IncludeOutput}
	for _, e := range r.Events {
		s.On = append(s.On, string(e))
	}
	switch r.Channel {
	case runtime.ChannelWebhook:
		s.Webhook = &WebhookSpec{URL: r.URL, SecretEnv: r.SecretEnv}
	case runtime.ChannelEmail:
		s.Email = &EmailSpec{To: r.To, ToPeople: r.ToPeople}
	case runtime.ChannelSlack:
		s.Slack = &SlackSpec{WebhookURLEnv: r.WebhookURLEnv}
	}
	return s
}

// toolSpec is the entry of `tools:` that stores d: a remote tool names its server and keeps
// only what its server does not describe; a declared one has no http:.
func toolSpec(d tool.Definition) ToolSpec {
	s := ToolSpec{Name: d.Name, InputSchema: JSON(d.InputSchema), AdminOnly: d.AdminOnly, Editable: d.Editable,
		MaxArgumentsBytes: d.MaxArgumentsBytes, Wait: waitSpec(d.Wait)}
	s.ApprovalsRequired, s.AllowAutomaticVote = quorumKeys(d.Quorum)
	if d.MCP != nil {
		s.MCP = &MCPSpec{Server: d.MCP.Server, Tool: d.MCP.Tool, MaxResponseBytes: d.HTTP.MaxResponseBytes}
		return s
	}
	s.Description, s.Parameters, s.Effect, s.RequiresApproval = d.Description, JSON(d.Parameters), string(d.Effect), d.RequiresApproval
	if d.Declared() {
		return s
	}
	s.HTTP = &HTTPSpec{URL: d.HTTP.URL, Headers: d.HTTP.Headers, Timeout: duration(d.HTTP.Timeout), MaxResponseBytes: d.HTTP.MaxResponseBytes}
	return s
}

// serverSpec is the entry of `mcp_servers:` of remote tool d's server, as d stores its
// connection; its quorum keys and result bound are left to its tools.
func serverSpec(d tool.Definition) MCPServerSpec {
	approval := d.RequiresApproval
	return MCPServerSpec{Name: d.MCP.Server, URL: d.HTTP.URL, Headers: d.HTTP.Headers, RequiresApproval: &approval,
		Timeout: duration(d.HTTP.Timeout), ElicitationTimeout: duration(d.MCP.ElicitationTimeout)}
}

// ruleSpec is the entry of `standing_approvals:` that stores r.
func ruleSpec(r runtime.StandingApproval) StandingApprovalSpec {
	s := StandingApprovalSpec{Name: r.Name, Tool: r.Tool, Configuration: r.Configuration, When: JSON(r.When),
		MaxUses: positive(r.MaxUses), AllowWrites: r.AllowWrites}
	if r.Until > 0 {
		s.Until = time.Unix(r.Until, 0).UTC().Format(time.RFC3339)
	}
	return s
}

// quorumKeys are the approvals_required and allow_automatic_vote that store p.
func quorumKeys(p quorum.Policy) (*int, bool) {
	return positive(p.Required), p.AutomaticVote
}

// positive is &v, nil when v is not above zero (the key left out).
func positive[T int | int64 | float64](v T) *T {
	if v <= 0 {
		return nil
	}
	return &v
}

// duration is &d as a file's Duration, nil when d is not above zero (the key left out).
func duration(d time.Duration) *Duration {
	if d <= 0 {
		return nil
	}
	v := Duration(d)
	return &v
}

// MarshalYAML writes d as ParseDuration reads it: whole days with d, then Go's units without
// their zero parts ("30d", "1d12h", "1m30s", "500ms").
func (d Duration) MarshalYAML() (any, error) {
	return FormatDuration(time.Duration(d)), nil
}

// FormatDuration is d as a file writes it, which ParseDuration reads: in its units, largest
// first (days, then Go's), zero parts left out ("30d", "1d12h", "1m30s", "500ms").
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}, {"ns", 1}} {
		if n := d / u.unit; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10) + u.suffix)
			d -= n * u.unit
		}
	}
	return b.String()
}

// MarshalYAML writes j as the YAML it was read from: mappings with their keys in order,
// numbers as written, every string a string.
func (j JSON) MarshalYAML() (any, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	n, err := jsonNode(dec)
	if err != nil {
		return nil, fmt.Errorf("apply: stored JSON: %w", err)
	}
	return n, nil
}

// jsonNode reads the next JSON value of dec as a YAML node.
func jsonNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if v == '{' {
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key.(string)})
			}
			item, err := jsonNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, item)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(v.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}, nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
}
