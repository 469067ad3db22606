// Package db is runsdesk's MySQL/MariaDB layer: the embedded migrations (TYPO3 table layout)
// and Store, which implements runtime.Store and runtime.Catalog with raw SQL. Every run
// transition is one guarded UPDATE; every transaction touches the rows of one run (an
// automatic approval's claim also counts its standing approval's use); every list query is a
// bounded keyset scan on an index.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
)

var (
	_ runtime.Store   = (*Store)(nil)
	_ runtime.Catalog = (*Store)(nil)
)

// maxTxAttempts bounds how often a write is retried after a deadlock, a certification
// failure or a node not ready (and, for event appends, a duplicate sequence).
const maxTxAttempts = 10

// Store implements runtime.Store and runtime.Catalog on a MySQL or MariaDB database whose
// schema Migrate created. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// batches is the pool of batched transitions (WithBatches); nil: they run statement by
	// statement.
	batches *sql.DB
	prep    *statements
	// lists prepares the list queries, whose texts vary with their filters, apart from prep.
	lists *statements
	now   func() time.Time
	seqs  sequenceHints
	// paused holds what the reads of waiting runs brought for their claim (ClaimForResume).
	paused pauseHints
	// states shares the suspended states list pages read (see stateTexts).
	states *stateTexts
	// afterWrite, when set (by tests), runs after the guard and each write a commit plan runs
	// statement by statement; its error fails the plan's transaction (a fault after that side
	// effect).
	afterWrite func(what string) error
	// galera is whether the pool's server is a Galera node, whose transactions inTx checks
	// are still open before their COMMIT (stillOpen).
	galera galeraNode
	sealing
}

// New returns a Store using sqlDB, a pool from Open (or any pool with parseTime=true).
// Run operations take their time from the caller; only the catalog upserts read the clock.
// Without WithKeys run state is stored in clear.
func New(sqlDB *sql.DB, opts ...Option) *Store {
	s := &Store{db: sqlDB, prep: newStatements(sqlDB, maxPrepared), lists: newStatements(sqlDB, maxPreparedLists), now: time.Now, seqs: newSequenceHints(), paused: newPauseHints(), states: newStateTexts(), sealing: newSealing()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// inTx runs fn in a transaction and commits it; fn's error, or a failed commit, rolls back.
// A deadlock or Galera certification failure (at any statement or at COMMIT), a Galera node
// not ready, or an error matching retry restarts the whole transaction with backoff, at most
// maxTxAttempts times (retryTransient): what fn saw in a rolled-back attempt counts for
// nothing, so a guarded transition wins only in the attempt whose commit succeeded. On a
// Galera node the transaction must still be open before its COMMIT (stillOpen).
func (s *Store) inTx(ctx context.Context, retry func(error) bool, fn func(*sql.Tx) error) error {
	galera, err := s.galera.is(ctx, s.db)
	if err != nil {
		return fmt.Errorf("db: %w", err)
	}
	if galera {
		fn = stillOpen(ctx, fn)
	}
	return retryTransient(ctx, retry, func() error { return txOnce(ctx, s.db, fn) })
}

// execer is what a guarded write needs of a pool or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// execGuarded runs one guarded UPDATE and maps "not exactly one row" to runtime.ErrGuard.
func (s *Store) execGuarded(ctx context.Context, op string, uid int64, query string, args ...any) error {
	return execGuardedOn(ctx, s.prep.on(nil), op, uid, query, args...)
}

// execGuardedOn is execGuarded on q (the pool or a transaction).
func execGuardedOn(ctx context.Context, q execer, op string, uid int64, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
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

// withEvents runs write, one guarded UPDATE of run uid, and appends events after it in the
// same transaction, in order from the run's next sequence (each event's Run is set to uid):
// MAX(sequence)+1, or the hint this Store kept from its own last append to the run (see
// sequenceHints; a stale hint hits the unique sequence and the transaction is retried
// without it). The UPDATE locks the run row, so appenders are serialised and sequences stay
// dense. With keep the run's next sequence is remembered after the commit (the caller goes on
// writing the run), else forgotten. If write fails (runtime.ErrGuard included) nothing is
// written and its error is returned unchanged. Without events write runs alone, outside a
// transaction. A payload that is not JSON is refused before any write.
func (s *Store) withEvents(ctx context.Context, op string, uid int64, keep bool, events []runtime.NewEvent,
	write func(execer) error) error {
	if len(events) == 0 {
		if !keep {
			s.seqs.forget(uid)
		}
		return write(s.prep.on(nil))
	}
	return s.withEventsTx(ctx, op, uid, keep, events, write, nil)
}

// stepBatch is a transition whose write is the one guarded UPDATE guard (args), with its
// events, sent as one batch (runBatch) at the run's next event sequence as this Store
// remembers it. It reports false, having written nothing, when it cannot: no events or no
// remembered sequence, a guard that did not change exactly one row (a miss, or an UPDATE
// that changed no column), or a batch the server declined; the caller then runs the
// transition as a transaction, whose steps tell those cases apart. Sequences are kept as
// withEventsTx keeps them. more, when set, adds the writes that follow the events.
func (s *Store) stepBatch(ctx context.Context, op string, uid int64, keep bool, events []runtime.NewEvent,
	more func(*batch), guard string, args ...any) (bool, error) {
	if s.batches == nil || len(events) == 0 {
		return false, nil
	}
	st, err := s.prepareSteps(ctx, s.db, uid, events)
	if err != nil {
		return false, nil
	}
	next := s.seqs.next(uid)
	if next < 0 {
		return false, nil
	}
	b := &batch{guard: guard, guardArgs: args}
	eventsInBatch(b, uid, next, st)
	if more != nil {
		more(b)
	}
	res, err := s.runBatch(ctx, b)
	switch {
	case errors.Is(err, errBatchDeclined):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("db: %s run %d: %w", op, uid, err)
	case !res.held():
		s.seqs.put(uid, next)
		return false, nil
	}
	if keep {
		s.seqs.put(uid, next+len(events))
	}
	return true, nil
}

// withEventsTx is withEvents in a transaction even without events: write may add rows that
// must commit with its UPDATE (a suspend's notifications). after, when set, runs last in the
// transaction with the run's next event sequence after the events (-1: not known).
func (s *Store) withEventsTx(ctx context.Context, op string, uid int64, keep bool, events []runtime.NewEvent,
	write func(execer) error, after func(q execer, next int) error) error {
	st, err := s.prepareSteps(ctx, s.db, uid, events)
	if err != nil {
		return fmt.Errorf("db: %s run %d: %w", op, uid, err)
	}
	var writeErr error
	var seq int
	err = s.inTx(ctx, isDuplicateKey, func(tx *sql.Tx) error {
		next := s.seqs.next(uid)
		q := s.prep.on(tx)
		if writeErr = write(q); writeErr != nil {
			return writeErr
		}
		if len(events) == 0 {
			return runAfter(q, after, next)
		}
		var err error
		if seq, _, err = appendEventsTx(ctx, q, uid, next, st); err != nil {
			return err
		}
		return runAfter(q, after, seq+len(events))
	})
	switch {
	case err == nil:
		if keep {
			s.seqs.put(uid, seq+len(events))
		}
		return nil
	case writeErr != nil:
		return writeErr
	}
	return fmt.Errorf("db: %s run %d: %w", op, uid, err)
}

// runAfter calls after (when set) with the run's next event sequence (-1: not known).
func runAfter(q execer, after func(execer, int) error, next int) error {
	if after == nil {
		return nil
	}
	return after(q, next)
}

type scanner interface {
	Scan(dest ...any) error
}
