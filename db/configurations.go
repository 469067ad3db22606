package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/retention"
	"runsdesk/runtime/wait"
)

// configurationColumns ends with external (migration 0051): a `kind: external`
// configuration's runtime.ExternalPolicy as JSON, empty for an agent configuration.
const configurationColumns = `uid, identifier, name, provider_kind, provider_base_url,
	provider_model, provider_api_key_env, provider_options, system_prompt, max_iterations,
	require_second_approver, allowed_tools, wait_policy, ` + configurationLimitColumns + `, notify, subject_template, keep_output, privacy, support_sees, assignment, ` + retentionColumns + `, ` + quorumColumns + `, external`

// retentionColumns are a configuration's retention periods in seconds, 0 the default
// (migration 0039), in retention.Class order.
const retentionColumns = `retention_outputs, retention_transcripts, retention_runs`

// quorumColumns are a configuration's approvals_required (0: not set, so 1) and
// allow_automatic_vote (migration 0043).
const quorumColumns = `approvals_required, allow_automatic_vote`

// configurationLimitColumns are a configuration's pricing, budget, context window and
// guardrails (migration 0023), in configurationRow order.
const configurationLimitColumns = `prompt_price_per_1k, completion_price_per_1k, max_total_tokens,
	max_cost, max_context_tokens, guardrails`

const sqlConfigurationByUID = `SELECT ` + configurationColumns + ` FROM tx_nrllm_configuration
	WHERE uid = ? AND deleted = 0 AND hidden = 0`

const sqlConfigurationByIdentifier = `SELECT ` + configurationColumns + `
	FROM tx_nrllm_configuration WHERE identifier = ? AND deleted = 0 AND hidden = 0`

const sqlConfigurations = `SELECT ` + configurationColumns + ` FROM tx_nrllm_configuration
	WHERE deleted = 0 AND hidden = 0 ORDER BY uid`

const sqlConfigurationForUpsert = `SELECT uid, deleted, name, provider_kind,
	provider_base_url, provider_model, provider_api_key_env, provider_options, system_prompt,
	max_iterations, require_second_approver, allowed_tools, wait_policy, ` + configurationLimitColumns + `, notify,
	subject_template, keep_output, privacy, support_sees, assignment, ` + retentionColumns + `, ` + quorumColumns + `, external FROM tx_nrllm_configuration WHERE identifier = ? FOR UPDATE`

const sqlInsertConfiguration = `INSERT INTO tx_nrllm_configuration
	(identifier, name, provider_kind, provider_base_url, provider_model, provider_api_key_env,
	 provider_options, system_prompt, max_iterations, require_second_approver, allowed_tools,
	 wait_policy, ` + configurationLimitColumns + `, notify, subject_template, keep_output, privacy, support_sees, assignment, ` + retentionColumns + `, ` + quorumColumns + `, external, tstamp, crdate)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const sqlUpdateConfiguration = `UPDATE tx_nrllm_configuration
	SET name = ?, provider_kind = ?, provider_base_url = ?, provider_model = ?,
	    provider_api_key_env = ?, provider_options = ?, system_prompt = ?, max_iterations = ?,
	    require_second_approver = ?, allowed_tools = ?, wait_policy = ?, prompt_price_per_1k = ?,
	    completion_price_per_1k = ?, max_total_tokens = ?, max_cost = ?, max_context_tokens = ?,
	    guardrails = ?, notify = ?, subject_template = ?, keep_output = ?, privacy = ?, support_sees = ?, assignment = ?,
	    retention_outputs = ?,
	    retention_transcripts = ?, retention_runs = ?, approvals_required = ?, allow_automatic_vote = ?, external = ?, deleted = 0, tstamp = ?
	WHERE uid = ?`

// providerOptions is the JSON stored in tx_nrllm_configuration.provider_options. An absent
// max_retries is the provider's default; 0 is stored as 0 and means no retry.
type providerOptions struct {
	TimeoutMS  int64        `json:"timeout_ms,omitempty"`
	MaxRetries *int         `json:"max_retries,omitempty"`
	Script     []model.Turn `json:"script,omitempty"`
}

// configurationRow is a configuration in column form, as compared and written by
// UpsertConfiguration.
type configurationRow struct {
	name, kind, baseURL, model, apiKeyEnv, options, systemPrompt string
	maxIterations                                                int
	secondApprover                                               bool
	tools, wait                                                  string
	limits                                                       limitColumns
	notify, subject                                              string
	keepOutput                                                   bool
	privacy, supportSees, assignment                             string
	retention                                                    retentionRow
	quorum                                                       quorum.Policy
	external                                                     string
}

// retentionRow is a retention.Policy in column form: whole seconds, 0 the default.
type retentionRow struct{ outputs, transcripts, runs int64 }

func retentionToRow(p retention.Policy) retentionRow {
	return retentionRow{int64(p.Outputs / time.Second), int64(p.Transcripts / time.Second), int64(p.Runs / time.Second)}
}

func (r retentionRow) policy() retention.Policy {
	return retention.Policy{Outputs: time.Duration(r.outputs) * time.Second,
		Transcripts: time.Duration(r.transcripts) * time.Second, Runs: time.Duration(r.runs) * time.Second}
}

// limitColumns are configurationLimitColumns in column form; guardrails is JSON ("" for none).
type limitColumns struct {
	promptPrice, completionPrice float64
	maxTokens                    int64
	maxCost                      float64
	maxContext                   int
	guardrails                   string
}

func (r configurationRow) columns() []any {
	return []any{r.name, r.kind, r.baseURL, r.model, r.apiKeyEnv, r.options, r.systemPrompt,
		r.maxIterations, r.secondApprover, r.tools, r.wait, r.limits.promptPrice, r.limits.completionPrice,
		r.limits.maxTokens, r.limits.maxCost, r.limits.maxContext, r.limits.guardrails, r.notify, r.subject, r.keepOutput, r.privacy, r.supportSees, r.assignment,
		r.retention.outputs, r.retention.transcripts, r.retention.runs, r.quorum.Required, r.quorum.AutomaticVote, r.external}
}

func (r *configurationRow) dest() []any {
	return []any{&r.name, &r.kind, &r.baseURL, &r.model, &r.apiKeyEnv, &r.options, &r.systemPrompt,
		&r.maxIterations, &r.secondApprover, &r.tools, &r.wait, &r.limits.promptPrice, &r.limits.completionPrice,
		&r.limits.maxTokens, &r.limits.maxCost, &r.limits.maxContext, &r.limits.guardrails, &r.notify, &r.subject, &r.keepOutput, &r.privacy, &r.supportSees, &r.assignment,
		&r.retention.outputs, &r.retention.transcripts, &r.retention.runs, &r.quorum.Required, &r.quorum.AutomaticVote, &r.external}
}

func configurationToRow(c runtime.Configuration) (configurationRow, error) {
	opts, err := json.Marshal(providerOptions{
		TimeoutMS:  c.Provider.Timeout.Milliseconds(),
		MaxRetries: c.Provider.MaxRetries,
		Script:     c.Provider.Script,
	})
	if err != nil {
		return configurationRow{}, fmt.Errorf("provider options: %w", err)
	}
	tools := c.Tools
	if tools == nil {
		tools = []string{}
	}
	toolsJSON, err := json.Marshal(tools)
	if err != nil {
		return configurationRow{}, fmt.Errorf("allowed tools: %w", err)
	}
	limits, err := limitsToColumns(c)
	if err != nil {
		return configurationRow{}, err
	}
	notify, err := encodeNotifyRules(c.Notify)
	if err != nil {
		return configurationRow{}, fmt.Errorf("notify: %w", err)
	}
	waitPolicy, err := c.Wait.Encode()
	if err != nil {
		return configurationRow{}, err
	}
	assignment, err := encodeAssignment(c.Assignment)
	if err != nil {
		return configurationRow{}, err
	}
	external, err := encodeExternal(c.External)
	if err != nil {
		return configurationRow{}, err
	}
	return configurationRow{
		external: external,
		limits:   limits,
		name:     c.Name, kind: c.Provider.Kind, baseURL: c.Provider.BaseURL, model: c.Provider.Model,
		apiKeyEnv: c.Provider.APIKeyEnv, options: string(opts), systemPrompt: c.SystemPrompt,
		maxIterations: c.MaxIterations, secondApprover: c.RequireSecondApprover,
		tools: string(toolsJSON), notify: notify, wait: waitPolicy, subject: c.Subject, keepOutput: !c.NoOutput,
		privacy: string(c.Privacy.OrMetadata()), supportSees: string(supportSeesColumn(c)), assignment: assignment,
		retention: retentionToRow(c.Retention), quorum: c.Quorum,
	}, nil
}

func scanConfiguration(sc scanner) (runtime.Configuration, error) {
	var c runtime.Configuration
	var options, tools, notify, waitPolicy string
	var limits limitColumns
	keepOutput := true
	var privacy, supportSees, assignment, external string
	var kept retentionRow
	err := sc.Scan(&c.UID, &c.Identifier, &c.Name, &c.Provider.Kind, &c.Provider.BaseURL,
		&c.Provider.Model, &c.Provider.APIKeyEnv, &options, &c.SystemPrompt, &c.MaxIterations,
		&c.RequireSecondApprover, &tools, &waitPolicy, &limits.promptPrice, &limits.completionPrice,
		&limits.maxTokens, &limits.maxCost, &limits.maxContext, &limits.guardrails, &notify, &c.Subject, &keepOutput, &privacy, &supportSees, &assignment,
		&kept.outputs, &kept.transcripts, &kept.runs, &c.Quorum.Required, &c.Quorum.AutomaticVote, &external)
	if err != nil {
		return runtime.Configuration{}, err
	}
	c.Retention = kept.policy()
	c.NoOutput = !keepOutput
	var ok bool
	if c.Privacy, ok = runtime.ParsePrivacy(privacy); !ok {
		return runtime.Configuration{}, fmt.Errorf("configuration %d: privacy %q is not a privacy mode", c.UID, privacy)
	}
	if c.SupportSees = runtime.Privacy(supportSees); c.SupportSees != runtime.PrivacyRedacted && c.SupportSees != runtime.PrivacyFull {
		return runtime.Configuration{}, fmt.Errorf("configuration %d: support_sees %q is not redacted or full", c.UID, supportSees)
	}
	if err := limits.apply(&c); err != nil {
		return runtime.Configuration{}, fmt.Errorf("configuration %d: %w", c.UID, err)
	}
	if options != "" {
		var o providerOptions
		if err := json.Unmarshal([]byte(options), &o); err != nil {
			return runtime.Configuration{}, fmt.Errorf("configuration %d: provider_options: %w", c.UID, err)
		}
		c.Provider.Timeout = time.Duration(o.TimeoutMS) * time.Millisecond
		c.Provider.MaxRetries = o.MaxRetries
		c.Provider.Script = o.Script
	}
	if tools != "" {
		if err := json.Unmarshal([]byte(tools), &c.Tools); err != nil {
			return runtime.Configuration{}, fmt.Errorf("configuration %d: allowed_tools: %w", c.UID, err)
		}
	}
	if assignment != "" {
		if err := json.Unmarshal([]byte(assignment), &c.Assignment); err != nil {
			return runtime.Configuration{}, fmt.Errorf("configuration %d: assignment: %w", c.UID, err)
		}
	}
	if external != "" {
		if err := json.Unmarshal([]byte(external), &c.External); err != nil {
			return runtime.Configuration{}, fmt.Errorf("configuration %d: external: %w", c.UID, err)
		}
	}
	if c.Notify, err = decodeNotifyRules(notify); err != nil {
		return runtime.Configuration{}, fmt.Errorf("configuration %d: notify: %w", c.UID, err)
	}
	if c.Wait, err = wait.Decode(waitPolicy); err != nil {
		return runtime.Configuration{}, fmt.Errorf("configuration %d: wait_policy: %w", c.UID, err)
	}
	return c, nil
}

// ConfigurationByUID returns the live (not deleted, not hidden) configuration uid, or
// runtime.ErrNotFound. A stored JSON column that does not decode is an error.
func (s *Store) ConfigurationByUID(ctx context.Context, uid int64) (runtime.Configuration, error) {
	c, err := scanConfiguration(s.prep.on(nil).QueryRowContext(ctx, sqlConfigurationByUID, uid))
	if err != nil {
		return runtime.Configuration{}, fmt.Errorf("db: configuration %d: %w", uid, notFound(err))
	}
	return c, nil
}

// ConfigurationByIdentifier returns the live configuration with identifier, or
// runtime.ErrNotFound.
func (s *Store) ConfigurationByIdentifier(ctx context.Context, identifier string) (runtime.Configuration, error) {
	c, err := scanConfiguration(s.db.QueryRowContext(ctx, sqlConfigurationByIdentifier, identifier))
	if err != nil {
		return runtime.Configuration{}, fmt.Errorf("db: configuration %q: %w", identifier, notFound(err))
	}
	return c, nil
}

// Configurations returns every live configuration, by uid. One undecodable row fails the
// whole call with an error naming it.
func (s *Store) Configurations(ctx context.Context) ([]runtime.Configuration, error) {
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Configuration, error) { return scanConfiguration(rows) }, sqlConfigurations)
	if err != nil {
		return nil, fmt.Errorf("db: configurations: %w", err)
	}
	return out, nil
}

// limitsToColumns is c's pricing, budget, context window and guardrails in column form.
func limitsToColumns(c runtime.Configuration) (limitColumns, error) {
	l := limitColumns{
		promptPrice: c.Pricing.PromptPer1K, completionPrice: c.Pricing.CompletionPer1K,
		maxTokens: c.Budget.MaxTotalTokens, maxCost: c.Budget.MaxCost, maxContext: c.MaxContextTokens,
	}
	if len(c.Guardrails) > 0 {
		b, err := json.Marshal(c.Guardrails)
		if err != nil {
			return limitColumns{}, fmt.Errorf("guardrails: %w", err)
		}
		l.guardrails = string(b)
	}
	return l, nil
}

// apply sets the limits on c; stored guardrails that do not decode are an error.
func (l limitColumns) apply(c *runtime.Configuration) error {
	c.Pricing = runtime.Pricing{PromptPer1K: l.promptPrice, CompletionPer1K: l.completionPrice}
	c.Budget = runtime.Budget{MaxTotalTokens: l.maxTokens, MaxCost: l.maxCost}
	c.MaxContextTokens = l.maxContext
	if l.guardrails == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(l.guardrails), &c.Guardrails); err != nil {
		return fmt.Errorf("guardrails: %w", err)
	}
	return nil
}

// supportSeesColumn is c's support_sees as stored: full or redacted.
func supportSeesColumn(c runtime.Configuration) runtime.Privacy {
	if c.SupportSeesFull() {
		return runtime.PrivacyFull
	}
	return runtime.PrivacyRedacted
}

// encodeAssignment is p as tx_nrllm_configuration.assignment stores it: "" for the defaults.
func encodeAssignment(p runtime.AssignmentPolicy) (string, error) {
	if p.Default() {
		return "", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("assignment: %w", err)
	}
	return string(b), nil
}

// encodeExternal is p as tx_nrllm_configuration.external stores it: "" for an agent
// configuration (nil).
func encodeExternal(p *runtime.ExternalPolicy) (string, error) {
	if p == nil {
		return "", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("external: %w", err)
	}
	return string(b), nil
}
