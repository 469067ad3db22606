package db

import (
	"context"
	"database/sql"
	"errors"
)

// upsertSQL are the statements of one catalog table: find (uid, deleted, then the compared
// columns) by key, insert (the insert prefix, the columns, crdate, tstamp), and update (the
// columns, tstamp, uid).
type upsertSQL struct {
	find, insert, update string
}

// upsertRow creates or updates the catalog row keyed by key, writing only when the stored
// columns differ from want or the row was soft-deleted (which revives it), and reports whether
// it wrote. columns lists want's values in statement order; dest the scan targets of a row.
func upsertRow[R comparable](ctx context.Context, s *Store, q upsertSQL, key string, insertPrefix []any,
	want R, columns func(R) []any, dest func(*R) []any) (bool, error) {
	now := s.now().Unix()
	var changed bool
	err := s.inTx(ctx, isDuplicateKey, func(tx *sql.Tx) error {
		changed = false
		var uid int64
		var deleted bool
		var have R
		err := tx.QueryRowContext(ctx, q.find, key).Scan(append([]any{&uid, &deleted}, dest(&have)...)...)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			changed = true
			args := append(append(append([]any(nil), insertPrefix...), columns(want)...), now, now)
			_, err = tx.ExecContext(ctx, q.insert, args...)
			return err
		case err != nil:
			return err
		case have == want && !deleted:
			return nil
		}
		changed = true
		_, err = tx.ExecContext(ctx, q.update, append(columns(want), now, uid)...)
		return err
	})
	return changed, err
}
