package seed

import (
	"context"
	"database/sql"
	"fmt"
)

// sqlExtensionRunsHead writes the columns of tx_nrllm_agentrun as the nr-llm TYPO3 extension
// defines it (db/typo3site), which has none of runsdesk's own.
const sqlExtensionRunsHead = `INSERT INTO tx_nrllm_agentrun (uid, uuid, status, configuration_uid,
	configuration_identifier, be_user, iterations, total_prompt_tokens, total_completion_tokens,
	total_tokens, estimated_cost, termination_reason, error_class, suspended_state,
	queued_request, claimed_by, lease_expires, started_at, finished_at, tstamp, crdate) VALUES `

const extensionColumnsN = 21

// Extension inserts o.Runs runs of the nr-llm TYPO3 extension into a TYPO3 site's
// tx_nrllm_agentrun behind pool, which must not rename tables (db.Open without
// db.BesideTYPO3): Seed's mix of statuses and states in the extension's columns, with no
// events, decisions or assignments. uids continue after the largest one present.
func Extension(ctx context.Context, pool *sql.DB, o Options) (Report, error) {
	o.Assignees = nil
	return seed(ctx, pool, o, true, insertExtensionBatch)
}

func insertExtensionBatch(ctx context.Context, pool *sql.DB, b batch) error {
	args := make([]any, 0, len(b.runs)*extensionColumnsN)
	for _, r := range b.runs {
		args = append(args, r.uid, r.uuid, r.status, r.cfgUID, r.cfgIdent, r.beUser, r.iterations,
			r.prompt, r.completion, r.prompt+r.completion, r.cost, r.reason, r.errorClass,
			r.state, r.request, r.claimedBy, r.lease, r.started, r.finished, r.tstamp, r.crdate)
	}
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := insertRows(ctx, tx, sqlExtensionRunsHead, extensionColumnsN, len(b.runs), args); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("insert extension runs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
