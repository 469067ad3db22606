package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// WithBatches sends the run transitions of the submit path (a decision's claim, a segment's
// checkpoint and settle) as one batch each on pool, a pool from OpenBatches; without it they
// run statement by statement, as every other transaction does.
func WithBatches(pool *sql.DB) Option {
	return func(s *Store) { s.batches = pool }
}

// batch is one transaction of a run's transition sent to the server in one round trip: START
// TRANSACTION, the guarded UPDATE, the writes that follow it, and COMMIT. The first write is
// an INSERT whose first value is NULL unless the guard changed exactly one row (every column
// is NOT NULL, so the server then refuses it and runs nothing after it); the others are plain
// statements. A transaction sent statement by statement costs a round trip each, and on the
// submit path the round trips, not the statements' work, were most of both processes' CPU.
type batch struct {
	guard     string
	guardArgs []any
	writes    []string
	args      []any
	// unguarded marks a batch whose first write is not an insertValues: nothing would stop it
	// after a guard that missed, so runBatch never sends it.
	unguarded bool
}

// guardedValue wraps the first value of a batch's first write: NULL (refused) unless the
// guarded UPDATE before it changed exactly one row.
const guardedValue = "IF(ROW_COUNT() = 1, ?, NULL)"

// insertValues adds the INSERT head ("INSERT INTO t (cols) VALUES ") of rows, each a
// parenthesised list of values whose first is a placeholder, its arguments appended in order,
// and returns the statement's index in the batch (see batchResult).
func (b *batch) insertValues(head string, rows []string, args ...any) int {
	if len(b.writes) == 0 {
		rows = append([]string{strings.Replace(rows[0], "?", guardedValue, 1)}, rows[1:]...)
	}
	b.writes = append(b.writes, head+strings.Join(rows, ", "))
	b.args = append(b.args, args...)
	return len(b.writes) - 1 + batchLead
}

// write adds a statement that runs once the batch's first write (an insertValues) was taken;
// as the first write it leaves the batch unguarded.
func (b *batch) write(stmt string, args ...any) {
	b.unguarded = b.unguarded || len(b.writes) == 0
	b.writes = append(b.writes, stmt)
	b.args = append(b.args, args...)
}

// batchLead is how many statements of a batch precede its writes: START TRANSACTION and the
// guard.
const batchLead = 2

// text is the batch as one multi-statement text, and its arguments.
func (b *batch) text() (string, []any) {
	parts := make([]string, 0, len(b.writes)+3)
	parts = append(parts, "START TRANSACTION", b.guard)
	parts = append(parts, b.writes...)
	parts = append(parts, "COMMIT")
	return strings.Join(parts, ";\n"), append(append([]any{}, b.guardArgs...), b.args...)
}

// errBatchDeclined is a batch the server refused before its COMMIT (a duplicate key, say), or
// one runBatch did not send because it is unguarded: nothing of it was written, and the
// transition is to be run statement by statement, whose steps tell the refusals apart.
var errBatchDeclined = errors.New("batch declined")

// runBatch sends b and reports whether its guard held; when it did not (its first write
// refused as a NULL), nothing was written.
// A deadlock, a Galera certification failure or a node not ready retries the whole batch
// (retryTransient). Any other error the server reports before the COMMIT rolls back and is
// errBatchDeclined. An error that leaves the COMMIT's fate unknown (the connection lost while
// the batch ran) is returned as it is, as a failed COMMIT of a transaction would be.
func (s *Store) runBatch(ctx context.Context, b *batch) (batchResult, error) {
	if b.unguarded {
		return batchResult{}, fmt.Errorf("%w: its first write is not an INSERT, which would carry the guard", errBatchDeclined)
	}
	text, args := b.text()
	var out batchResult
	err := retryTransient(ctx, nil, func() error {
		var err error
		out, err = s.execBatch(ctx, text, args)
		return err
	})
	var me *mysql.MySQLError
	switch {
	case isMySQLError(err, errColumnNull):
		return batchResult{}, nil
	case err != nil && (errors.Is(err, driver.ErrSkip) || errors.As(err, &me) && !isTransient(err)):
		return batchResult{}, fmt.Errorf("%w: %w", errBatchDeclined, err)
	}
	return out, err
}

// batchResult is what the server answered a batch: each statement's affected rows and last
// insert id, in order.
type batchResult struct {
	counts []int64
	ids    []int64
}

// held reports whether the batch's guard changed exactly one row (so its writes applied).
func (r batchResult) held() bool { return len(r.counts) > 1 && r.counts[1] == 1 }

// insertID is the first row id the statement at index i inserted.
func (r batchResult) insertID(i int) int64 {
	if i < len(r.ids) {
		return r.ids[i]
	}
	return 0
}

// execBatch runs text on one pooled connection and returns each statement's affected rows.
// After a server error the open transaction is rolled back; a connection that cannot be
// rolled back is discarded rather than returned to the pool.
func (s *Store) execBatch(ctx context.Context, text string, args []any) (batchResult, error) {
	conn, err := s.batches.Conn(ctx)
	if err != nil {
		return batchResult{}, err
	}
	defer conn.Close()
	var out batchResult
	var batchErr error
	err = conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		checker, okc := dc.(driver.NamedValueChecker)
		if !ok || !okc {
			return errors.New("db: the driver cannot send a batch")
		}
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
			if err := checker.CheckNamedValue(&named[i]); err != nil {
				return fmt.Errorf("db: batch argument %d: %w", i+1, err)
			}
		}
		res, err := ex.ExecContext(ctx, text, named)
		if err != nil {
			batchErr = err
			var me *mysql.MySQLError
			if errors.Is(err, driver.ErrSkip) {
				return nil
			}
			if !errors.As(err, &me) {
				return driver.ErrBadConn
			}
			if _, rerr := ex.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil); rerr != nil {
				return driver.ErrBadConn
			}
			return nil
		}
		r, ok := res.(mysql.Result)
		if !ok {
			return errors.New("db: the driver gave no per-statement results")
		}
		out = batchResult{counts: r.AllRowsAffected(), ids: r.AllLastInsertIds()}
		return nil
	})
	if batchErr != nil {
		return batchResult{}, batchErr
	}
	return out, err
}
