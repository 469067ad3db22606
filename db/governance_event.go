package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"runsdesk/runtime"
)

// Column widths of tx_nrllm_governance_event (0005_governance_event.sql); longer values are
// cut to fit, so a long tool name the model made up never fails the write it rides on.
const (
	govCorrelationLen = 36
	govDecisionLen    = 32
	govReasonLen      = 255
	govProviderLen    = 100
	govModelLen       = 150
	govConfigLen      = 150
	govToolLen        = 150
	govGuardrailLen   = 255
	govDetailLen      = 2000
)

const governanceColumns = `crdate, correlation_id, decision, reason, provider, model,
	configuration_identifier, be_user, tool_name, agentrun_uid, guardrail, detail, sequence`

const sqlInsertGovernance = `INSERT INTO tx_nrllm_governance_event (` + governanceColumns + `) VALUES `

const sqlGovernanceRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// sqlGovernanceEvents reads a run's rows by either of its names, each on its own index.
const sqlGovernanceEvents = `SELECT uid, ` + governanceColumns + ` FROM tx_nrllm_governance_event WHERE agentrun_uid = ?
	UNION SELECT uid, ` + governanceColumns + ` FROM tx_nrllm_governance_event WHERE correlation_id = ?
	ORDER BY crdate, uid LIMIT ?`

// AppendGovernance stores g, a governance row of no step (g.Sequence is stored as given),
// on its own. Fields are cleaned and cut to their columns.
func (s *Store) AppendGovernance(ctx context.Context, g runtime.GovernanceEvent) error {
	if err := insertGovernance(ctx, s.db, []runtime.GovernanceEvent{g}); err != nil {
		return fmt.Errorf("db: governance row of run %d: %w", g.Run, err)
	}
	return nil
}

// insertGovernance inserts rows with one statement on q (the pool or a transaction).
func insertGovernance(ctx context.Context, q execer, rows []runtime.GovernanceEvent) error {
	if len(rows) == 0 {
		return nil
	}
	values, args := governanceRows(rows)
	if _, err := q.ExecContext(ctx, sqlInsertGovernance+strings.Join(values, ", "), args...); err != nil {
		return fmt.Errorf("insert governance rows: %w", err)
	}
	return nil
}

// governanceRows are the rows of sqlInsertGovernance for rows, fields cleaned and cut to their
// columns, and their arguments.
func governanceRows(rows []runtime.GovernanceEvent) ([]string, []any) {
	values := make([]string, len(rows))
	args := make([]any, 0, 13*len(rows))
	for i, g := range rows {
		values[i] = sqlGovernanceRow
		args = append(args, g.Crdate, auditField(g.CorrelationID, govCorrelationLen), auditField(g.Decision, govDecisionLen),
			auditField(g.Reason, govReasonLen), auditField(g.Provider, govProviderLen), auditField(g.Model, govModelLen),
			auditField(g.ConfigurationIdentifier, govConfigLen), max(g.BeUser, 0), auditField(g.ToolName, govToolLen),
			max(g.Run, 0), auditField(g.Guardrail, govGuardrailLen), auditField(g.Detail, govDetailLen), g.Sequence)
	}
	return values, args
}

// stepGovernance returns the governance rows events carry, each completed with its event's
// run, sequence (first + its index) and time.
func stepGovernance(run int64, first int, events []runtime.NewEvent) []runtime.GovernanceEvent {
	var out []runtime.GovernanceEvent
	for i, e := range events {
		for _, g := range e.Governance {
			g.Run, g.Sequence, g.Crdate = run, first+i, e.Now
			out = append(out, g)
		}
	}
	return out
}

// GovernanceEvents returns the run's governance rows, matched by agentrun_uid = runUID or
// correlation_id = uuid, ordered by crdate then uid, at most runtime.MaxGovernanceRows.
func (s *Store) GovernanceEvents(ctx context.Context, runUID int64, uuid string) ([]runtime.GovernanceEvent, error) {
	rows, err := queryAll(ctx, s.db, scanGovernance, sqlGovernanceEvents, runUID, uuid, runtime.MaxGovernanceRows)
	if err != nil {
		return nil, fmt.Errorf("db: governance rows of run %d: %w", runUID, err)
	}
	return rows, nil
}

func scanGovernance(rows *sql.Rows) (runtime.GovernanceEvent, error) {
	var g runtime.GovernanceEvent
	err := rows.Scan(&g.UID, &g.Crdate, &g.CorrelationID, &g.Decision, &g.Reason, &g.Provider, &g.Model,
		&g.ConfigurationIdentifier, &g.BeUser, &g.ToolName, &g.Run, &g.Guardrail, &g.Detail, &g.Sequence)
	return g, err
}
