package db

import (
	"context"
	"database/sql"
	"fmt"
)

const sqlSeen = `INSERT INTO tx_runsdesk_presence (run, be_user, seen_at) VALUES (?, ?, ?)
	ON DUPLICATE KEY UPDATE seen_at = VALUES(seen_at)`

const sqlPresent = `SELECT be_user FROM tx_runsdesk_presence WHERE run = ? AND be_user <> ? AND seen_at >= ?
	ORDER BY be_user LIMIT 20`

// Seen records that person user has run's page open at now and returns the uids of the others
// seen on it at or after since (at most 20), in uid order.
func (s *Store) Seen(ctx context.Context, run, user, now, since int64) ([]int64, error) {
	if _, err := s.db.ExecContext(ctx, sqlSeen, run, user, now); err != nil {
		return nil, fmt.Errorf("db: presence on run %d: %w", run, err)
	}
	others, err := queryAll(ctx, s.db, func(r *sql.Rows) (int64, error) {
		var uid int64
		return uid, r.Scan(&uid)
	}, sqlPresent, run, user, since)
	if err != nil {
		return nil, fmt.Errorf("db: presence on run %d: %w", run, err)
	}
	return others, nil
}
