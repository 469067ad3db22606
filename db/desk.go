package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/runtime"
)

// sqlDeskCursor is the newest change of any run (KEY changed: answered from the index alone).
const sqlDeskCursor = `SELECT COALESCE(CAST(UNIX_TIMESTAMP(MAX(changed_at)) * 1000000 AS SIGNED), 0)
	FROM tx_nrllm_agentrun`

// sqlRunChanges reads the runs changed after a cursor (unix microseconds, as a decimal of
// seconds) as one range of KEY changed, oldest change first. A run's stamp is that of the
// long-poll's (status, pause) and its assignee.
const sqlRunChanges = `SELECT uid, uuid, status, be_user, started_by_service, assignee,
		CONCAT_WS(':', status, pause_sequence, suspended_at, assignee),
		CAST(UNIX_TIMESTAMP(changed_at) * 1000000 AS SIGNED)
	FROM tx_nrllm_agentrun FORCE INDEX (changed)
	WHERE changed_at > FROM_UNIXTIME(CAST(? AS DECIMAL(20,6)))
	ORDER BY changed_at, uid LIMIT ?`

// DeskCursor returns when any run last changed (unix microseconds; 0 with no runs): where the
// live desk's feed starts reading.
func (s *Store) DeskCursor(ctx context.Context) (int64, error) {
	var at int64
	if err := s.db.QueryRowContext(ctx, sqlDeskCursor).Scan(&at); err != nil {
		return 0, fmt.Errorf("db: read the desk's cursor: %w", err)
	}
	return at, nil
}

// RunChanges returns up to limit runs whose row changed after after (unix microseconds),
// oldest change first, each as runtime.RunChange describes it. One statement, one index range,
// whatever the number of readers it is for.
func (s *Store) RunChanges(ctx context.Context, after int64, limit int) ([]runtime.RunChange, error) {
	if after < 0 {
		after = 0
	}
	cursor := fmt.Sprintf("%d.%06d", after/1_000_000, after%1_000_000)
	out, err := queryPage(ctx, s.db, limit, scanRunChange, sqlRunChanges, cursor, limit)
	if err != nil {
		return nil, fmt.Errorf("db: read the runs changed: %w", err)
	}
	return out, nil
}

func scanRunChange(rows *sql.Rows) (runtime.RunChange, error) {
	var c runtime.RunChange
	var status string
	err := rows.Scan(&c.Run.UID, &c.Run.UUID, &status, &c.Run.BeUser, &c.Run.StartedByService, &c.Run.Assignee, &c.Stamp, &c.At)
	c.Run.Status = runtime.Status(status)
	return c, err
}
