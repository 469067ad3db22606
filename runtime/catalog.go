package runtime

import (
	"context"

	"runsdesk/runtime/model"
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
	// Wait is the waiting policy of every pause of this configuration (zero: none).
	Wait wait.Policy
}

// Catalog reads configurations and data-defined tools. Lookups that match nothing return
// ErrNotFound; store failures are returned as errors.
type Catalog interface {
	ConfigurationByUID(ctx context.Context, uid int64) (Configuration, error)
	ConfigurationByIdentifier(ctx context.Context, identifier string) (Configuration, error)
	Configurations(ctx context.Context) ([]Configuration, error)
	ToolDefinitions(ctx context.Context) ([]tool.Definition, error)
}
