// Package apply reads the YAML file of `runsdesk apply -f` (docs/configuration.md), validates
// all of it before anything is written, reports every problem at once with its path in the file, and then creates or updates configurations and tools through a
// Catalog. Applying the same file twice changes nothing; a dry run only reports what would
// change.
package apply

import (
	"encoding/json"
	"time"
)

// File is an apply file as written: what `Load` decodes before validation, and what Export
// writes with zero values left out. Absent keys leave zero values; pointer fields tell
// absent from zero where the difference matters.
type File struct {
	Configurations []ConfigurationSpec `yaml:"configurations,omitempty"`
	Tools          []ToolSpec          `yaml:"tools,omitempty"`
	MCPServers     []MCPServerSpec     `yaml:"mcp_servers,omitempty"`
	// StandingApprovals, when the key is present, is every standing approval in force after
	// the apply: a stored one it lacks is revoked. Absent, the stored ones are left alone.
	StandingApprovals *[]StandingApprovalSpec `yaml:"standing_approvals,omitempty"`
}

// ConfigurationSpec is one entry of `configurations:`.
type ConfigurationSpec struct {
	Identifier            string          `yaml:"identifier,omitempty"`
	Name                  string          `yaml:"name,omitempty"`
	Provider              *ProviderSpec   `yaml:"provider,omitempty"`
	SystemPrompt          string          `yaml:"system_prompt,omitempty"`
	MaxIterations         *int            `yaml:"max_iterations,omitempty"`
	RequireSecondApprover bool            `yaml:"require_second_approver,omitempty"`
	Tools                 []string        `yaml:"tools,omitempty"`
	Wait                  *WaitSpec       `yaml:"wait,omitempty"`
	Pricing               *PricingSpec    `yaml:"pricing,omitempty"`
	Budget                *BudgetSpec     `yaml:"budget,omitempty"`
	MaxContextTokens      *int            `yaml:"max_context_tokens,omitempty"`
	Guardrails            []GuardrailSpec `yaml:"guardrails,omitempty"`
	Notify                []NotifySpec    `yaml:"notify,omitempty"`
	// Subject is the template of the inbox subject of its pauses (runtime/subject).
	Subject string `yaml:"subject,omitempty"`
	// KeepOutput, false, keeps no output of its runs; absent is true.
	KeepOutput *bool `yaml:"keep_output,omitempty"`
	// Privacy is what its runs keep of their events' content: metadata (also none, the
	// default), redacted or full; SupportSees, redacted (default) or full, which of it support
	// staff read.
	Privacy     string `yaml:"privacy,omitempty"`
	SupportSees string `yaml:"support_sees,omitempty"`
	// Assignment is who may assign its runs and whether only the assignee decides.
	Assignment *AssignmentSpec `yaml:"assignment,omitempty"`
	// Retention is how long its runs' content is kept after they finish (runtime/retention).
	Retention *RetentionSpec `yaml:"retention,omitempty"`
	// ApprovalsRequired (1 to 5; absent: 1) is how many distinct people approve each turn;
	// AllowAutomaticVote lets one automatic approval be one of them (runtime/quorum).
	ApprovalsRequired  *int `yaml:"approvals_required,omitempty"`
	AllowAutomaticVote bool `yaml:"allow_automatic_vote,omitempty"`
	// Kind is external for a configuration whose runs are requests created by Callers
	// (service account names) elsewhere, without a provider; absent for an agent. AdHoc lets
	// those requests ask about tools it does not declare.
	Kind    string   `yaml:"kind,omitempty"`
	Callers []string `yaml:"callers,omitempty"`
	AdHoc   bool     `yaml:"ad_hoc,omitempty"`
	// CallbackHosts are the hosts a request's callback_url may name, CallbackSecretEnv the
	// variable holding the secret callbacks are signed with: both or neither, external only.
	CallbackHosts     []string `yaml:"callback_hosts,omitempty"`
	CallbackSecretEnv string   `yaml:"callback_secret_env,omitempty"`
}

// AssignmentSpec is a configuration's `assignment:`; absent keys are false.
type AssignmentSpec struct {
	ReviewersMayAssign bool `yaml:"reviewers_may_assign,omitempty"`
	Strict             bool `yaml:"strict,omitempty"`
	// Auto (round_robin, least_loaded) assigns each new pause to one of Pool (usernames).
	Auto string   `yaml:"auto,omitempty"`
	Pool []string `yaml:"pool,omitempty"`
}

// RetentionSpec is a configuration's `retention:`; an absent key keeps its default (outputs
// and transcripts 30 days, runs forever).
type RetentionSpec struct {
	Outputs     *Duration `yaml:"outputs,omitempty"`
	Transcripts *Duration `yaml:"transcripts,omitempty"`
	Runs        *Duration `yaml:"runs,omitempty"`
}

// ProviderSpec is a configuration's `provider:`. Kind openai uses BaseURL, Model, APIKeyEnv,
// Timeout and MaxRetries; kind scripted uses Script.
type ProviderSpec struct {
	Kind       string     `yaml:"kind,omitempty"`
	BaseURL    string     `yaml:"base_url,omitempty"`
	Model      string     `yaml:"model,omitempty"`
	APIKeyEnv  string     `yaml:"api_key_env,omitempty"`
	Timeout    *Duration  `yaml:"timeout,omitempty"`
	MaxRetries *int       `yaml:"max_retries,omitempty"`
	Script     []TurnSpec `yaml:"script,omitempty"`
}

// TurnSpec is one assistant turn of a scripted provider.
type TurnSpec struct {
	Content   string     `yaml:"content,omitempty"`
	ToolCalls []CallSpec `yaml:"tool_calls,omitempty"`
}

// CallSpec is one tool call of a scripted turn. Arguments is a mapping (sent as a JSON object)
// or a string (sent verbatim as the arguments text, so a script can produce malformed
// arguments).
type CallSpec struct {
	Name      string `yaml:"name,omitempty"`
	Arguments JSON   `yaml:"arguments,omitempty"`
}

// ToolSpec is one entry of `tools:`: a data-defined HTTP tool, a remote tool of an MCP
// server, or, with neither http nor mcp, a declared tool that only external configurations
// offer (nothing runs it).
type ToolSpec struct {
	Name             string `yaml:"name,omitempty"`
	Description      string `yaml:"description,omitempty"`
	Parameters       JSON   `yaml:"parameters,omitempty"`
	InputSchema      JSON   `yaml:"input_schema,omitempty"`
	Effect           string `yaml:"effect,omitempty"`
	AdminOnly        bool   `yaml:"admin_only,omitempty"`
	RequiresApproval bool   `yaml:"requires_approval,omitempty"`
	Editable         bool   `yaml:"editable,omitempty"`
	// MaxArgumentsBytes bounds the JSON arguments of one call (0: 64 KiB).
	MaxArgumentsBytes int `yaml:"max_arguments_bytes,omitempty"`
	// ApprovalsRequired and AllowAutomaticVote override the configuration's for a turn
	// that calls this tool (absent: the configuration's).
	ApprovalsRequired  *int      `yaml:"approvals_required,omitempty"`
	AllowAutomaticVote bool      `yaml:"allow_automatic_vote,omitempty"`
	HTTP               *HTTPSpec `yaml:"http,omitempty"`
	MCP                *MCPSpec  `yaml:"mcp,omitempty"`
	Wait               *WaitSpec `yaml:"wait,omitempty"`
}

// HTTPSpec is how a tool reaches its endpoint. Header values may reference environment
// variables as ${NAME}; the variables must be set when the file is applied.
type HTTPSpec struct {
	URL              string            `yaml:"url,omitempty"`
	Headers          map[string]string `yaml:"headers,omitempty"`
	Timeout          *Duration         `yaml:"timeout,omitempty"`
	MaxResponseBytes int64             `yaml:"max_response_bytes,omitempty"`
}

// JSON is a value written in YAML and kept as compact JSON text, object keys in the order
// they were written (a form lists fields in schema order). Empty means absent or null.
type JSON json.RawMessage

// Duration is a duration written as text: Go's units or days ("10s", "1m30s", "30d";
// ParseDuration).
type Duration time.Duration
