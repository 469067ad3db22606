package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"runsdesk/runtime"
)

// sqlRenewHold renews a held pause's heartbeat while the run still waits on that pause.
const sqlRenewHold = updateRunByUID + `
	SET hold_heartbeat = ?
	WHERE uid = ? AND status = 'waiting_for_input' AND suspended_at = ? AND hold_heartbeat > 0`

// sqlLapsedHolds lists the held pauses whose heartbeat lapsed (index holds).
const sqlLapsedHolds = `SELECT uid, uuid FROM tx_nrllm_agentrun FORCE INDEX (holds)
	WHERE status = 'waiting_for_input' AND hold_heartbeat BETWEEN 1 AND ?
	ORDER BY hold_heartbeat, uid LIMIT ?`

// holdHeartbeat is what Suspend stores as the pause's hold heartbeat: now for a held pause.
func holdHeartbeat(sp runtime.Suspension, now int64) int64 {
	if sp.Held {
		return now
	}
	return 0
}

// RenewHold renews a held pause's heartbeat: waiting_for_input ∧ suspended_at ∧
// hold_heartbeat>0 → hold_heartbeat=now. A renewal within the same second changes nothing
// and still counts as held.
func (s *Store) RenewHold(ctx context.Context, uid, suspendedAt, now int64) error {
	err := s.execGuarded(ctx, "renew hold", uid, sqlRenewHold, now, uid, suspendedAt)
	return unchangedButHeld(ctx, s.db, err, "renew hold", uid,
		`SELECT 1 FROM tx_nrllm_agentrun WHERE uid = ? AND status = 'waiting_for_input' AND suspended_at = ? AND hold_heartbeat = ?`,
		uid, suspendedAt, now)
}

// FindHolds reads uids as they are now (see runtime.Store).
func (s *Store) FindHolds(ctx context.Context, uids []int64) ([]runtime.Run, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	args := make([]any, len(uids))
	for i, u := range uids {
		args[i] = u
	}
	query := `SELECT uid, uuid, status, claimed_by, suspended_at, hold_heartbeat FROM tx_nrllm_agentrun
		WHERE uid IN (?` + strings.Repeat(", ?", len(uids)-1) + `)`
	runs, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Run, error) {
		var r runtime.Run
		var status string
		err := rows.Scan(&r.UID, &r.UUID, &status, &r.ClaimedBy, &r.SuspendedAt, &r.HoldHeartbeat)
		r.Status = runtime.Status(status)
		return r, err
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: find holds: %w", err)
	}
	return runs, nil
}

// FindLapsedHolds lists held pauses whose heartbeat is older than before (see runtime.Store).
func (s *Store) FindLapsedHolds(ctx context.Context, before int64, limit int) ([]runtime.Run, error) {
	runs, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Run, error) {
		var r runtime.Run
		return r, rows.Scan(&r.UID, &r.UUID)
	}, sqlLapsedHolds, before-1, clampPage(limit))
	if err != nil {
		return nil, fmt.Errorf("db: find lapsed holds: %w", err)
	}
	return runs, nil
}
