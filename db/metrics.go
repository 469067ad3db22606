package db

import (
	"context"
	"fmt"
	"strings"
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

// WaitingAges returns the waiting-age histogram of the waiting runs as of now (unix
// seconds), counted in the database by one index-only range scan of the waiting key, no row
// shipped: cumulative[i] is the number of waiting runs whose age max(now - suspended_at, 0)
// is at most bounds[i] seconds, and cumulative[len(bounds)] the number of waiting runs (the
// +Inf bucket); sum is the total of their ages in seconds.
func (s *Store) WaitingAges(ctx context.Context, now int64, bounds []int64) (cumulative []int64, sum int64, err error) {
	query, args := waitingAgesQuery(now, bounds)
	out := make([]int64, len(bounds)+2)
	dest := make([]any, len(out))
	for i := range out {
		dest[i] = &out[i]
	}
	if err := s.db.QueryRowContext(ctx, query, args...).Scan(dest...); err != nil {
		return nil, 0, fmt.Errorf("db: waiting ages: %w", err)
	}
	return out[1:], out[0], nil
}

// waitingAgesQuery selects the sum of the ages (suspended_at is unsigned: only past times
// are subtracted), then one conditional count per bound (an age
// is at most b when suspended_at >= now - b), then the count of waiting runs.
func waitingAgesQuery(now int64, bounds []int64) (string, []any) {
	cols := []string{"COALESCE(SUM(IF(suspended_at < ?, ? - suspended_at, 0)), 0)"}
	args := []any{now, now}
	for _, b := range bounds {
		cols = append(cols, "COALESCE(SUM(suspended_at >= ?), 0)")
		args = append(args, now-b)
	}
	cols = append(cols, "COUNT(*)")
	return "SELECT " + strings.Join(cols, ", ") + " FROM tx_nrllm_agentrun WHERE suspended_at > 0", args
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
