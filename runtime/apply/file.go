// Package apply reads the YAML file of `runsdesk apply -f` (docs/configuration.md), validates
// all of it before anything is written, reports every problem at once with its path in the file, and then creates or updates configurations and tools through a
// Catalog. Applying the same file twice changes nothing; a dry run only reports what would
// change.
package apply

import (
	"encoding/json"
	"time"
)

// File is an apply file as written: what `Load` decodes before validation. Absent keys leave
// zero values; pointer fields tell absent from zero where the difference matters.
type File struct {
	Configurations []ConfigurationSpec `yaml:"configurations"`
	Tools          []ToolSpec          `yaml:"tools"`
	// StandingApprovals, when the key is present, is every standing approval in force after
	// the apply: a stored one it lacks is revoked. Absent, the stored ones are left alone.
	StandingApprovals *[]StandingApprovalSpec `yaml:"standing_approvals"`
	MCPServers        []MCPServerSpec         `yaml:"mcp_servers"`
}

// ConfigurationSpec is one entry of `configurations:`.
type ConfigurationSpec struct {
	Identifier            string          `yaml:"identifier"`
	Name                  string          `yaml:"name"`
	Provider              *ProviderSpec   `yaml:"provider"`
	SystemPrompt          string          `yaml:"system_prompt"`
	MaxIterations         *int            `yaml:"max_iterations"`
	RequireSecondApprover bool            `yaml:"require_second_approver"`
	Tools                 []string        `yaml:"tools"`
	Wait                  *WaitSpec       `yaml:"wait"`
	Pricing               *PricingSpec    `yaml:"pricing"`
	Budget                *BudgetSpec     `yaml:"budget"`
	MaxContextTokens      *int            `yaml:"max_context_tokens"`
	Guardrails            []GuardrailSpec `yaml:"guardrails"`
	Notify                []NotifySpec    `yaml:"notify"`
	// Subject is the template of the inbox subject of its pauses (runtime/subject).
	Subject string `yaml:"subject"`
	// KeepOutput, false, keeps no output of its runs; absent is true.
	KeepOutput *bool `yaml:"keep_output"`
	// Privacy is what its runs keep of their events' content: metadata (also none, the
	// default), redacted or full; SupportSees, redacted (default) or full, which of it support
	// staff read.
	Privacy     string `yaml:"privacy"`
	SupportSees string `yaml:"support_sees"`
	// Assignment is who may assign its runs and whether only the assignee decides.
	Assignment *AssignmentSpec `yaml:"assignment"`
	// Retention is how long its runs' content is kept after they finish (runtime/retention).
	Retention *RetentionSpec `yaml:"retention"`
	// ApprovalsRequired (1 to 5; absent: 1) is how many distinct people approve each turn;
	// AllowAutomaticVote lets one automatic approval be one of them (runtime/quorum).
	ApprovalsRequired  *int `yaml:"approvals_required"`
	AllowAutomaticVote bool `yaml:"allow_automatic_vote"`
}

// AssignmentSpec is a configuration's `assignment:`; absent keys are false.
type AssignmentSpec struct {
	ReviewersMayAssign bool `yaml:"reviewers_may_assign"`
	Strict             bool `yaml:"strict"`
	// Auto (round_robin, least_loaded) assigns each new pause to one of Pool (usernames).
	Auto string   `yaml:"auto"`
	Pool []string `yaml:"pool"`
}

// RetentionSpec is a configuration's `retention:`; an absent key keeps its default (outputs
// and transcripts 30 days, runs forever).
type RetentionSpec struct {
	Outputs     *Duration `yaml:"outputs"`
	Transcripts *Duration `yaml:"transcripts"`
	Runs        *Duration `yaml:"runs"`
}

// ProviderSpec is a configuration's `provider:`. Kind openai uses BaseURL, Model, APIKeyEnv,
// Timeout and MaxRetries; kind scripted uses Script.
type ProviderSpec struct {
	Kind       string     `yaml:"kind"`
	BaseURL    string     `yaml:"base_url"`
	Model      string     `yaml:"model"`
	APIKeyEnv  string     `yaml:"api_key_env"`
	Timeout    *Duration  `yaml:"timeout"`
	MaxRetries *int       `yaml:"max_retries"`
	Script     []TurnSpec `yaml:"script"`
}

// TurnSpec is one assistant turn of a scripted provider.
type TurnSpec struct {
	Content   string     `yaml:"content"`
	ToolCalls []CallSpec `yaml:"tool_calls"`
}

// CallSpec is one tool call of a scripted turn. Arguments is a mapping (sent as a JSON object)
// or a string (sent verbatim as the arguments text, so a script can produce malformed
// arguments).
type CallSpec struct {
	Name      string `yaml:"name"`
	Arguments JSON   `yaml:"arguments"`
}

// ToolSpec is one entry of `tools:`, a data-defined HTTP tool.
type ToolSpec struct {
	Name             string `yaml:"name"`
	Description      string `yaml:"description"`
	Parameters       JSON   `yaml:"parameters"`
	InputSchema      JSON   `yaml:"input_schema"`
	Effect           string `yaml:"effect"`
	AdminOnly        bool   `yaml:"admin_only"`
	RequiresApproval bool   `yaml:"requires_approval"`
	Editable         bool   `yaml:"editable"`
	// MaxArgumentsBytes bounds the JSON arguments of one call (0: 64 KiB).
	MaxArgumentsBytes int `yaml:"max_arguments_bytes"`
	// ApprovalsRequired and AllowAutomaticVote override the configuration's for a turn
	// that calls this tool (absent: the configuration's).
	ApprovalsRequired  *int      `yaml:"approvals_required"`
	AllowAutomaticVote bool      `yaml:"allow_automatic_vote"`
	HTTP               *HTTPSpec `yaml:"http"`
	MCP                *MCPSpec  `yaml:"mcp"`
	Wait               *WaitSpec `yaml:"wait"`
}

// HTTPSpec is how a tool reaches its endpoint. Header values may reference environment
// variables as ${NAME}; the variables must be set when the file is applied.
type HTTPSpec struct {
	URL              string            `yaml:"url"`
	Headers          map[string]string `yaml:"headers"`
	Timeout          *Duration         `yaml:"timeout"`
	MaxResponseBytes int64             `yaml:"max_response_bytes"`
}

// JSON is a value written in YAML and kept as compact JSON text, object keys in the order
// they were written (a form lists fields in schema order). Empty means absent or null.
type JSON json.RawMessage

// Duration is a duration written as text: Go's units or days ("10s", "1m30s", "30d";
// ParseDuration).
type Duration time.Duration
