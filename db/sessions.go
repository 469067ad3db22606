package db

import (
	"context"
	"database/sql"
	"fmt"
)

// DeleteExpiredSessions removes the scs sessions whose expiry has passed (the statement of
// scs/mysqlstore's own cleanup, run here so its racy cleanup goroutine is not needed) and
// returns how many were removed.
func DeleteExpiredSessions(ctx context.Context, pool *sql.DB) (int64, error) {
	res, err := pool.ExecContext(ctx, `DELETE FROM sessions WHERE expiry < UTC_TIMESTAMP(6)`)
	if err != nil {
		return 0, fmt.Errorf("db: delete expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("db: delete expired sessions: %w", err)
	}
	return n, nil
}
