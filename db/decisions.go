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

// sealedDecisionColumn is a column of tx_runsdesk_decision holding a value sealed per run:
// its name, where it is sealed, and the Decision field it is read into.
type sealedDecisionColumn struct {
	column SealedColumn
	field  func(*runtime.Decision) *string
}

var (
	decisionArguments = sealedDecisionColumn{sealedDecisionArgs, func(d *runtime.Decision) *string { return &d.Arguments }}
	decisionReason    = sealedDecisionColumn{sealedDecisionReason, func(d *runtime.Decision) *string { return &d.Reason }}
)

// EditedDecisions returns the run's decisions that stored arguments (approvals with edits),
// oldest first.
func (s *Store) EditedDecisions(ctx context.Context, runUID int64) ([]runtime.Decision, error) {
	out, err := s.decisionsWith(ctx, runUID, decisionArguments)
	if err != nil {
		return nil, fmt.Errorf("db: edited decisions of run %d: %w", runUID, err)
	}
	return out, nil
}

// ReasonedDecisions returns the run's decisions whose decider gave a reason, oldest first.
func (s *Store) ReasonedDecisions(ctx context.Context, runUID int64) ([]runtime.Decision, error) {
	out, err := s.decisionsWith(ctx, runUID, decisionReason)
	if err != nil {
		return nil, fmt.Errorf("db: reasoned decisions of run %d: %w", runUID, err)
	}
	return out, nil
}

// decisionsWith returns run runUID's decisions whose col is not empty, oldest first, with
// col read into its field and opened (a value that does not open is left as stored, and its
// reader refuses it).
func (s *Store) decisionsWith(ctx context.Context, runUID int64, col sealedDecisionColumn) ([]runtime.Decision, error) {
	query := `SELECT ` + decisionColumns + `, ` + col.column.Column + ` FROM tx_runsdesk_decision
	WHERE run = ? AND ` + col.column.Column + ` <> '' ORDER BY uid`
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Decision, error) {
		var d runtime.Decision
		err := rows.Scan(&d.UID, &d.Run, &d.IdempotencyKey, &d.Kind, &d.Approved, &d.DecidedBy, &d.DecidedByService, &d.Crdate, col.field(&d))
		return d, err
	}, query, runUID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		stored := col.field(&out[i])
		if !strings.HasPrefix(*stored, seal.Prefix) {
			continue
		}
		uuid, err := s.runUUID(ctx, s.db, runUID)
		if err != nil {
			return nil, err
		}
		if plain, err := s.keys.Open(*stored, col.column.place(uuid, 0)); err == nil {
			*stored = plain
		}
	}
	return out, nil
}
