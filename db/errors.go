package db

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"runsdesk/runtime"
)

// ErrDuplicateDecision is returned (wrapped, together with runtime.ErrGuard) by
// ClaimForResume when the run already has a decision stored under the claim's idempotency
// key. The transaction was rolled back: the run, its decisions and its events are unchanged,
// and FindDecision returns the first decision.
var ErrDuplicateDecision = errors.New("decision with this idempotency key already stored")

const (
	errDuplicateKey = 1062
	// errColumnNull is ER_BAD_NULL_ERROR: a NULL for a NOT NULL column (a batch's guard).
	errColumnNull  = 1048
	errNoSuchTable = 1146
	errDeadlock    = 1213
	// errPreparedLimit is ER_MAX_PREPARED_STMT_COUNT_REACHED.
	errPreparedLimit = 1461
)

func isMySQLError(err error, numbers ...uint16) bool {
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return false
	}
	for _, n := range numbers {
		if myErr.Number == n {
			return true
		}
	}
	return false
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return runtime.ErrNotFound
	}
	return err
}

func guardErr(op string, uid int64) error {
	return fmt.Errorf("db: %s run %d: %w", op, uid, runtime.ErrGuard)
}
