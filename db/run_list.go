package db

import (
	"context"
	"fmt"
	"strings"

	"runsdesk/runtime"
)

// qualifiedRunColumns is runColumns of the run table under alias r, for a list that joins
// other tables to it, followed by expiryColumn.
func qualifiedRunColumns() string {
	cols := strings.Split(runColumns, ",")
	for i, c := range cols {
		cols[i] = "r." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ") + ", " + expiryColumn
}

// ListRuns returns one keyset page of q.Group's runs with q.Statuses, whole (as FindByUUID
// reads them, what their latest expiry did included), in one statement: waiting runs longest-waiting first (suspended_at, uid) on the
// inbox's indexes; active runs oldest created first (crdate, uid), one index range of KEY
// status_lookup per status merged in the statement; finished runs newest finished first
// (finished_at, uid descending) on KEY recent. q.Filter filters and searches as the inbox
// does (runFilter). q.Limit is clamped to 1..200.
func (s *Store) ListRuns(ctx context.Context, q runtime.RunsQuery) ([]runtime.Run, error) {
	if searchesNothing(q.Filter) || len(q.Statuses) == 0 {
		return []runtime.Run{}, nil
	}
	limit := clampPage(q.Limit)
	f := q.Filter
	f.Status, f.WaitingSince, f.ExpiringBefore, f.Escalated, f.ByExpiry = "", 0, 0, false, false
	var query string
	var args []any
	switch q.Group {
	case runtime.GroupWaiting:
		if len(q.Statuses) == 1 {
			f.Status = q.Statuses[0]
		}
		where, wargs := waitingFilter(f, true)
		query = `SELECT ` + qualifiedRunColumns() + ` FROM tx_nrllm_agentrun r` + waitingIndex(f) + waitingJoins(f, false) + where
		args = wargs
		if q.AfterAt > 0 || q.AfterUID > 0 {
			query += ` AND (r.suspended_at > ? OR (r.suspended_at = ? AND r.uid > ?))`
			args = append(args, q.AfterAt, q.AfterAt, q.AfterUID)
		}
		query += ` ORDER BY r.suspended_at, r.uid LIMIT ?`
		args = append(args, limit)
	case runtime.GroupActive:
		parts := make([]string, len(q.Statuses))
		for i, st := range q.Statuses {
			where, wargs := runFilter(` WHERE r.status = ?`, []any{string(st)}, f, false)
			part := `SELECT ` + qualifiedRunColumns() + ` FROM tx_nrllm_agentrun r FORCE INDEX (status_lookup)` + waitingJoins(f, false) + where
			args = append(args, wargs...)
			if q.AfterAt > 0 || q.AfterUID > 0 {
				part += ` AND (r.crdate > ? OR (r.crdate = ? AND r.uid > ?))`
				args = append(args, q.AfterAt, q.AfterAt, q.AfterUID)
			}
			parts[i] = `(` + part + ` ORDER BY r.crdate, r.uid LIMIT ?)`
			args = append(args, limit)
		}
		query = strings.Join(parts, ` UNION ALL `) + ` ORDER BY crdate, uid LIMIT ?`
		args = append(args, limit)
	case runtime.GroupFinished:
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(q.Statuses)), ", ")
		base := []any{}
		for _, st := range q.Statuses {
			base = append(base, string(st))
		}
		where, wargs := runFilter(` WHERE r.finished_at > 0 AND r.status IN (`+marks+`)`, base, f, false)
		query = `SELECT ` + qualifiedRunColumns() + ` FROM tx_nrllm_agentrun r FORCE INDEX (recent)` + waitingJoins(f, false) + where
		args = wargs
		if q.AfterAt > 0 || q.AfterUID > 0 {
			query += ` AND (r.finished_at < ? OR (r.finished_at = ? AND r.uid < ?))`
			args = append(args, q.AfterAt, q.AfterAt, q.AfterUID)
		}
		query += ` ORDER BY r.finished_at DESC, r.uid DESC LIMIT ?`
		args = append(args, limit)
	default:
		return nil, fmt.Errorf("db: list runs: unknown group %q", q.Group)
	}
	runs, err := s.queryRunsWithExpiry(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list %s runs: %w", q.Group, err)
	}
	return runs, nil
}
