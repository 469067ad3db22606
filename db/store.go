// Package db is runsdesk's MySQL/MariaDB layer: the embedded migrations (TYPO3 table layout)
// and Store, which implements runtime.Store and runtime.Catalog with raw SQL. Every run
// transition is one guarded UPDATE; every transaction touches the rows of one run; every list
// query is a bounded keyset scan on an index.
package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"runsdesk/runtime"
)

var (
	_ runtime.Store   = (*Store)(nil)
	_ runtime.Catalog = (*Store)(nil)
)

// maxTxAttempts bounds how often a transaction is retried after a deadlock (and, for event
// appends, a duplicate sequence).
const maxTxAttempts = 8

// Store implements runtime.Store and runtime.Catalog on a MySQL or MariaDB database whose
// schema Migrate created. It is safe for concurrent use.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

// New returns a Store using sqlDB, a pool from Open (or any pool with parseTime=true).
// Run operations take their time from the caller; only the catalog upserts read the clock.
func New(sqlDB *sql.DB) *Store {
	return &Store{db: sqlDB, now: time.Now}
}

// inTx runs fn in a transaction and commits it; fn's error, or a failed commit, rolls back.
// A deadlock (or an error matching retry) restarts the whole transaction, at most
// maxTxAttempts times.
func (s *Store) inTx(ctx context.Context, retry func(error) bool, fn func(*sql.Tx) error) error {
	var err error
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		err = s.txOnce(ctx, fn)
		if err == nil {
			return nil
		}
		if !isMySQLError(err, errDeadlock) && (retry == nil || !retry(err)) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}

func (s *Store) txOnce(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// execGuarded runs one guarded UPDATE and maps "not exactly one row" to runtime.ErrGuard.
func (s *Store) execGuarded(ctx context.Context, op string, uid int64, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("db: %s run %d: %w", op, uid, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("db: %s run %d: %w", op, uid, err)
	}
	if n != 1 {
		return guardErr(op, uid)
	}
	return nil
}

type scanner interface {
	Scan(dest ...any) error
}
