package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// A deadlock or certification failure (1213) and a Galera node not ready (1047) are retried
// until the write succeeds; any other error, or one the caller's retry does not accept, is
// returned at once.
func TestRetryTransientRetriesCertificationFailureAndNodeNotReady(t *testing.T) {
	for _, number := range []uint16{errDeadlock, errUnknownCommand} {
		calls := 0
		err := retryTransient(context.Background(), nil, func() error {
			calls++
			if calls < 3 {
				return fmt.Errorf("commit: %w", &mysql.MySQLError{Number: number, Message: "transient"})
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("error %d: got %v after %d calls, want success on the 3rd", number, err, calls)
		}
	}
	calls := 0
	other := &mysql.MySQLError{Number: errDuplicateKey}
	if err := retryTransient(context.Background(), nil, func() error { calls++; return other }); !errors.Is(err, other) || calls != 1 {
		t.Errorf("duplicate key without retry: got %v after %d calls, want it returned after 1", err, calls)
	}
	calls = 0
	if err := retryTransient(context.Background(), isDuplicateKey, func() error {
		calls++
		if calls == 1 {
			return other
		}
		return nil
	}); err != nil || calls != 2 {
		t.Errorf("duplicate key accepted by retry: got %v after %d calls, want success on the 2nd", err, calls)
	}
}

// Retries are bounded: a write that keeps failing is attempted maxTxAttempts times, with
// backoff between attempts of at most retryMaxDelay each, and its last error is returned.
func TestRetryTransientIsBounded(t *testing.T) {
	calls := 0
	conflict := &mysql.MySQLError{Number: errDeadlock}
	began := time.Now()
	err := retryTransient(context.Background(), nil, func() error { calls++; return conflict })
	if !errors.Is(err, conflict) || calls != maxTxAttempts {
		t.Fatalf("got %v after %d calls, want the conflict after %d", err, calls, maxTxAttempts)
	}
	if took := time.Since(began); took < retryBaseDelay || took > time.Duration(maxTxAttempts)*retryMaxDelay+time.Second {
		t.Errorf("%d attempts took %s, want between %s and %s of backoff", calls, took, retryBaseDelay, time.Duration(maxTxAttempts)*retryMaxDelay)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = retryTransient(ctx, nil, func() error { calls++; cancel(); return conflict })
	if !errors.Is(err, conflict) || calls != 1 {
		t.Errorf("cancelled context: got %v after %d calls, want the conflict after 1", err, calls)
	}
}

// On a Galera node inTx asks, right before COMMIT, whether its transaction is still open: one
// ended behind the client's back (here by a ROLLBACK sent inside it, as a conflicting write
// set from another node ends it) is errTxLost and runs again, where COMMIT alone would
// answer OK for a transaction that is gone.
func TestTransactionGoneBeforeCommitIsRetried(t *testing.T) {
	s, _ := newStore(t)
	s.galera = galeraNode{known: true, on: true}
	attempts := 0
	err := s.inTx(context.Background(), nil, func(tx *sql.Tx) error {
		attempts++
		if attempts == 1 {
			_, err := tx.ExecContext(context.Background(), `ROLLBACK`)
			return err
		}
		return nil
	})
	if err != nil || attempts != 2 {
		t.Fatalf("inTx: %v after %d attempts; want success in the second", err, attempts)
	}
	if !isTransient(fmt.Errorf("db: reap run 7: %w", errTxLost)) {
		t.Error("errTxLost is not retried")
	}
}
