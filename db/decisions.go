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
	if err := s.openDecisions(ctx, runUID, out, func(d *runtime.Decision) (*string, seal.Place) { return &d.Arguments, decisionArgumentsPlace("") }); err != nil {
		return nil, fmt.Errorf("db: edited decisions of run %d: %w", runUID, err)
	}
	return out, nil
}

const sqlReasonedDecisions = `SELECT ` + decisionColumns + `, reason FROM tx_runsdesk_decision
	WHERE run = ? AND reason <> '' ORDER BY uid`

// ReasonedDecisions returns the run's decisions whose decider gave a reason, oldest first,
// each reason opened (one that does not open is left as stored).
func (s *Store) ReasonedDecisions(ctx context.Context, runUID int64) ([]runtime.Decision, error) {
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Decision, error) {
		var d runtime.Decision
		err := rows.Scan(&d.UID, &d.Run, &d.IdempotencyKey, &d.Kind, &d.Approved, &d.DecidedBy, &d.DecidedByService, &d.Crdate, &d.Reason)
		return d, err
	}, sqlReasonedDecisions, runUID)
	if err != nil {
		return nil, fmt.Errorf("db: reasoned decisions of run %d: %w", runUID, err)
	}
	if err := s.openDecisions(ctx, runUID, out, func(d *runtime.Decision) (*string, seal.Place) { return &d.Reason, decisionReasonPlace("") }); err != nil {
		return nil, fmt.Errorf("db: reasoned decisions of run %d: %w", runUID, err)
	}
	return out, nil
}

// openDecisions replaces the sealed field (with its place, whose run uuid it fills in) of
// each decision of run runUID by its plaintext; one that does not open is left as stored.
func (s *Store) openDecisions(ctx context.Context, runUID int64, decs []runtime.Decision, field func(*runtime.Decision) (*string, seal.Place)) error {
	for i := range decs {
		stored, place := field(&decs[i])
		if !strings.HasPrefix(*stored, seal.Prefix) {
			continue
		}
		uuid, err := s.runUUID(ctx, s.db, runUID)
		if err != nil {
			return err
		}
		place.RunUUID = uuid
		if plain, err := s.keys.Open(*stored, place); err == nil {
			*stored = plain
		}
	}
	return nil
}
