package db

import (
	"context"
	"fmt"
)

// CountByStatus returns the number of runs per stored status value (index scan of
// status_lookup). Unknown stored values are returned as they are.
func (s *Store) CountByStatus(ctx context.Context) (map[string]int, error) {
	counts, err := queryAll(ctx, s.db, scanStatusCount, `SELECT status, COUNT(*) FROM tx_nrllm_agentrun GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("db: count runs by status: %w", err)
	}
	out := make(map[string]int, len(counts))
	for _, c := range counts {
		out[c.status] = c.n
	}
	return out, nil
}

// WaitingSince returns suspended_at of every waiting run (index-only scan of the waiting
// key).
func (s *Store) WaitingSince(ctx context.Context) ([]int64, error) {
	since, err := queryAll(ctx, s.db, scanInt64, `SELECT suspended_at FROM tx_nrllm_agentrun WHERE suspended_at > 0`)
	if err != nil {
		return nil, fmt.Errorf("db: waiting since: %w", err)
	}
	return since, nil
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
