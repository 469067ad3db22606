package db

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"time"
)

// Backoff between attempts of a retried write: exponential from retryBaseDelay, capped at
// retryMaxDelay, each wait drawn at random from its upper half so writers that collided do
// not collide again in step. Ten attempts wait at most about a second in all.
const (
	retryBaseDelay = 5 * time.Millisecond
	retryMaxDelay  = 200 * time.Millisecond
)

// Errors after which a write is known not to have committed and is retried as a whole.
const (
	// errUnknownCommand is ER_UNKNOWN_COM_ERROR, what a Galera node answers while it is not
	// part of the primary component ("WSREP has not yet prepared node for application use").
	errUnknownCommand = 1047
)

// isTransient reports whether err is a deadlock or a Galera certification failure (both
// 1213: the transaction was rolled back), a transaction found gone before its COMMIT
// (errTxLost), or a Galera node not ready (1047: the statement was not run). Either way
// nothing was written and the whole write may be run again.
func isTransient(err error) bool {
	return errors.Is(err, errTxLost) || isMySQLError(err, errDeadlock, errUnknownCommand)
}

// retryTransient runs attempt until it succeeds, fails with an error that is neither
// transient nor accepted by retry (nil: none), or ctx ends, waiting with bounded, jittered
// backoff between attempts; it returns the last error. Transient errors are retried for
// maxTxAttempts attempts in all. An error retry accepts says another writer's change came
// first (a stale event sequence, say), so every such retry follows someone's progress; those
// have a budget of their own, maxProgressRetries, as many writers of one run may each come
// first once.
func retryTransient(ctx context.Context, retry func(error) bool, attempt func() error) error {
	var err error
	for transient, progressed := 0, 0; ; {
		if n := transient + progressed; n > 0 {
			wait := min(retryMaxDelay, retryBaseDelay<<min(n-1, 16))
			wait = wait/2 + rand.N(wait/2+1)
			select {
			case <-ctx.Done():
				return err
			case <-time.After(wait):
			}
		}
		if err = attempt(); err == nil {
			return nil
		}
		switch {
		case isTransient(err):
			transient++
		case retry != nil && retry(err):
			progressed++
		default:
			return err
		}
		if transient >= maxTxAttempts || progressed >= maxProgressRetries || ctx.Err() != nil {
			return err
		}
	}
}

// maxProgressRetries bounds the retries of a write whose every failure was another writer's
// change coming first: more than the writers one run sees at once.
const maxProgressRetries = 64

// retryingPool is a pool as an execer whose statements, each its own transaction
// (autocommit), are retried as a whole after a transient error (retryTransient).
type retryingPool struct{ db *sql.DB }

// ExecContext is execRetrying on the pool.
func (p retryingPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return execRetrying(ctx, p.db, query, args...)
}

// execRetrying runs one statement on pool in autocommit, retrying it as a whole after a
// transient error (retryTransient). Every write outside a transaction goes through it.
func execRetrying(ctx context.Context, pool *sql.DB, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := retryTransient(ctx, nil, func() error {
		var err error
		res, err = pool.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// QueryRowContext runs a read on the pool.
func (p retryingPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.db.QueryRowContext(ctx, query, args...)
}
