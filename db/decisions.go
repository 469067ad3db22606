package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"runsdesk/runtime"
	"runsdesk/seal"
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

const sqlEditedDecisions = `SELECT ` + decisionColumns + `, arguments FROM tx_runsdesk_decision
	WHERE run = ? AND arguments <> '' ORDER BY uid`

// EditedDecisions returns the run's decisions that stored arguments (approvals with edits),
// oldest first.
func (s *Store) EditedDecisions(ctx context.Context, runUID int64) ([]runtime.Decision, error) {
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Decision, error) {
		var d runtime.Decision
		err := rows.Scan(&d.UID, &d.Run, &d.IdempotencyKey, &d.Kind, &d.Approved, &d.DecidedBy, &d.DecidedByService, &d.Crdate, &d.Arguments)
		return d, err
	}, sqlEditedDecisions, runUID)
	if err != nil {
		return nil, fmt.Errorf("db: edited decisions of run %d: %w", runUID, err)
	}
	for i, d := range out {
		if !strings.HasPrefix(d.Arguments, seal.Prefix) {
			continue
		}
		uuid, err := s.runUUID(ctx, s.db, runUID)
		if err != nil {
			return nil, fmt.Errorf("db: edited decisions of run %d: %w", runUID, err)
		}
		if plain, err := s.keys.Open(d.Arguments, decisionArgumentsPlace(uuid)); err == nil {
			out[i].Arguments = plain
		}
	}
	return out, nil
}
