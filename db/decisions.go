package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/runtime"
)

// decidedByServiceLen is the width of tx_runsdesk_decision.decided_by_service
// (0016_governance_sequence_decision_service.sql); a longer name is cut to fit.
const decidedByServiceLen = 100

const decisionColumns = `uid, run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate`

const sqlFindDecision = `SELECT ` + decisionColumns + ` FROM tx_runsdesk_decision
	WHERE run = ? AND idempotency_key = ?`

const sqlLatestDecision = `SELECT ` + decisionColumns + ` FROM tx_runsdesk_decision
	WHERE run = ? ORDER BY uid DESC LIMIT 1`

func scanDecision(sc scanner) (runtime.Decision, error) {
	var d runtime.Decision
	err := sc.Scan(&d.UID, &d.Run, &d.IdempotencyKey, &d.Kind, &d.Approved, &d.DecidedBy, &d.DecidedByService, &d.Crdate)
	return d, err
}

// FindDecision returns the decision stored for (runUID, key), or runtime.ErrNotFound.
func (s *Store) FindDecision(ctx context.Context, runUID int64, key string) (runtime.Decision, error) {
	d, err := scanDecision(s.db.QueryRowContext(ctx, sqlFindDecision, runUID, key))
	if err != nil {
		return runtime.Decision{}, fmt.Errorf("db: find decision of run %d: %w", runUID, notFound(err))
	}
	return d, nil
}

// LatestDecision returns the run's most recently stored decision, or runtime.ErrNotFound.
func (s *Store) LatestDecision(ctx context.Context, runUID int64) (runtime.Decision, error) {
	d, err := scanDecision(s.db.QueryRowContext(ctx, sqlLatestDecision, runUID))
	if err != nil {
		return runtime.Decision{}, fmt.Errorf("db: latest decision of run %d: %w", runUID, notFound(err))
	}
	return d, nil
}

const sqlDecisionArguments = `SELECT arguments FROM tx_runsdesk_decision
	WHERE run = ? AND arguments IS NOT NULL ORDER BY uid`

// DecisionArguments returns the arguments records of the run's decisions (approvals with
// edits), oldest first.
func (s *Store) DecisionArguments(ctx context.Context, runUID int64) ([]string, error) {
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (string, error) {
		var a string
		err := rows.Scan(&a)
		return a, err
	}, sqlDecisionArguments, runUID)
	if err != nil {
		return nil, fmt.Errorf("db: decision arguments of run %d: %w", runUID, err)
	}
	return out, nil
}
