package db

import (
	"context"
	"database/sql"
)

// queryAll runs query and returns every row converted by scan, in order (an empty slice when
// there are none). A failure of the query, of any scan or of the iteration is returned as is;
// callers wrap it with what they were doing.
func queryAll[T any](ctx context.Context, db querier, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	return queryPage(ctx, db, 0, scan, query, args...)
}

// queryPage is queryAll with room for n rows made at once (a page's limit).
func queryPage[T any](ctx context.Context, db querier, n int, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]T, 0, n)
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// scanInt64 scans a one-column integer row.
func scanInt64(rows *sql.Rows) (int64, error) {
	var v int64
	err := rows.Scan(&v)
	return v, err
}

// statusCount is one row of a COUNT(*) … GROUP BY status.
type statusCount struct {
	status string
	n      int
}

func scanStatusCount(rows *sql.Rows) (statusCount, error) {
	var c statusCount
	err := rows.Scan(&c.status, &c.n)
	return c, err
}
