package db

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// errTxLost is a transaction gone before its COMMIT. On a Galera node, a transaction that a
// conflicting write set from another node aborts while its client sits between statements
// can be rolled back without the next statement being told: that statement, and the COMMIT
// after it, then run outside any transaction and answer OK, so a guarded transition two
// nodes ran at once was reported won on both (three reapers dead-lettering one run each).
// It is retried as a deadlock is (isTransient).
var errTxLost = errors.New("the transaction was rolled back by a conflicting write from another Galera node")

// galeraNode remembers whether a pool's server is a Galera node: asked on first use, and again
// after a failed question.
type galeraNode struct {
	mu    sync.Mutex
	known bool
	on    bool
}

// is reports whether pool's server is a Galera node (isGalera), asking it at most once.
func (g *galeraNode) is(ctx context.Context, pool *sql.DB) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known {
		return g.on, nil
	}
	on, err := isGalera(ctx, pool)
	if err != nil {
		return false, err
	}
	g.known, g.on = true, on
	return on, nil
}

// stillOpen is fn followed by the check that its transaction is still open
// (@@in_transaction, asked in the text protocol right before COMMIT): errTxLost when it is not.
func stillOpen(ctx context.Context, fn func(*sql.Tx) error) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRowContext(ctx, `SELECT @@in_transaction`).Scan(&open); err != nil {
			return err
		}
		if open != 1 {
			return errTxLost
		}
		return nil
	}
}
