package db

import (
	"context"
	"fmt"
)

// CountByStatus returns the number of runs per stored status value (index scan of
// status_lookup). Unknown stored values are returned as they are.
func (s *Store) CountByStatus(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT status, COUNT(*) FROM tx_nrllm_agentrun GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("db: count runs by status: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("db: count runs by status: %w", err)
		}
		out[status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: count runs by status: %w", err)
	}
	return out, nil
}

// WaitingSince returns suspended_at of every waiting run (index-only scan of the waiting
// key).
func (s *Store) WaitingSince(ctx context.Context) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT suspended_at FROM tx_nrllm_agentrun WHERE suspended_at > 0`)
	if err != nil {
		return nil, fmt.Errorf("db: waiting since: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var t int64
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("db: waiting since: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: waiting since: %w", err)
	}
	return out, nil
}

// CountLeased returns the number of running runs holding a lease.
func (s *Store) CountLeased(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status = 'running' AND lease_expires > 0`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("db: count leased runs: %w", err)
	}
	return n, nil
}
