package db

import (
	"context"
	"testing"
)

// TestDeleteExpiredSessions removes expired sessions and keeps live ones.
func TestDeleteExpiredSessions(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	if _, err := pool.ExecContext(ctx, `INSERT INTO sessions (token, data, expiry) VALUES
		('old', '', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR), ('live', '', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)`); err != nil {
		t.Fatal(err)
	}
	n, err := DeleteExpiredSessions(ctx, pool)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	var left string
	if err := pool.QueryRowContext(ctx, `SELECT token FROM sessions`).Scan(&left); err != nil || left != "live" {
		t.Fatalf("left %q, %v", left, err)
	}
}
