package runtime

import (
	"context"
	"runsdesk/runtime/quorum"

	"runsdesk/runtime/guardrail"
	"runsdesk/runtime/model"
	"runsdesk/runtime/retention"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// DefaultMaxIterations is a configuration's bound on model turns when it sets none (or more).
const DefaultMaxIterations = 20

// Configuration is one row of tx_nrllm_configuration: what a run of this kind uses.
type Configuration struct {
	UID                   int64
	Identifier            string
	Name                  string
	Provider              model.Settings
	SystemPrompt          string
	MaxIterations         int
	RequireSecondApprover bool
	Tools                 []string // allowed tool names, in order
	// Pricing prices the model calls; Budget bounds a run's spending; MaxContextTokens (0 =
	// none) bounds the estimated transcript a model call sends; Guardrails check calls and
	// the final text, in order.
	Pricing          Pricing
	Budget           Budget
	MaxContextTokens int
	Guardrails       []guardrail.Spec
	// Notify are the `notify:` rules: who is told of its runs' waits, and how.
	Notify []NotifyRule
	// Wait is the waiting policy of every pause of this configuration (zero: none).
	Wait wait.Policy
	// Subject is the `subject:` template of its pauses' inbox subjects (runtime/subject);
	// "": the first pending call's arguments (see PauseSubject).
	Subject string
	// NoOutput is `keep_output: false`: its runs keep no output (RunOutput) and the API says
	// theirs is withheld for privacy.
	NoOutput bool
	// Privacy is `privacy:`, what its runs keep of their events' content ("" as
	// PrivacyMetadata); SupportSees is `support_sees:`, PrivacyFull when support staff read
	// content kept in full, else (PrivacyRedacted, "") only content kept redacted.
	Privacy     Privacy
	SupportSees Privacy
	// Assignment is `assignment:`, who may assign its runs and whether only the assignee
	// decides.
	Assignment AssignmentPolicy
	// Quorum is `approvals_required` and `allow_automatic_vote`: how many distinct people
	// approve its turns (a tool's own keys override them).
	Quorum quorum.Policy
	// Retention is how long its runs' content is kept after they finish.
	Retention retention.Policy
	// External, set, makes it `kind: external`: its runs are requests created by callers
	// elsewhere, and it has no provider; nil is an agent configuration.
	External *ExternalPolicy
}

// SupportSeesFull reports whether support staff read the content its runs kept in full
// (`support_sees: full`).
func (c Configuration) SupportSeesFull() bool { return c.SupportSees == PrivacyFull }

// Catalog reads configurations and data-defined tools. Lookups that match nothing return
// ErrNotFound; store failures are returned as errors.
type Catalog interface {
	ConfigurationByUID(ctx context.Context, uid int64) (Configuration, error)
	ConfigurationByIdentifier(ctx context.Context, identifier string) (Configuration, error)
	Configurations(ctx context.Context) ([]Configuration, error)
	ToolDefinitions(ctx context.Context) ([]tool.Definition, error)
	// ConfigurationForDecision returns ConfigurationByUID's configuration and, read with it,
	// the version of the tool definitions; the definitions themselves (Read) only when that
	// version is not known.
	ConfigurationForDecision(ctx context.Context, uid int64, known string) (Configuration, ToolsRead, error)
}

// ToolsRead is the tool definitions' version and, when Read, the definitions of that version
// (or a newer one, whose version it then is).
type ToolsRead struct {
	Version     string
	Definitions []tool.Definition
	Read        bool
}
