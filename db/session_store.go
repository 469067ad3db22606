package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SessionStore is scs/mysqlstore's store (same table) with the context methods of
// scs.CtxStore, so loading and saving a session honour the request's deadline, and a commit
// that skips rewriting an unchanged session (see CommitCtx).
type SessionStore struct {
	pool  *sql.DB
	slack time.Duration
}

// DefaultSessionExpirySlack is the slack of NewSessionStore for the desk's 30-minute idle
// timeout.
const DefaultSessionExpirySlack = time.Minute

// NewSessionStore returns the session store on pool. slack is how far a session's stored
// expiry may lag behind the expiry a commit asks for before an unchanged session is written
// again; keep it a small fraction of the idle timeout (DefaultSessionExpirySlack for 30 min).
func NewSessionStore(pool *sql.DB, slack time.Duration) *SessionStore {
	return &SessionStore{pool: pool, slack: max(slack, 0)}
}

// FindCtx returns the data of an unexpired session token.
func (s *SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var b []byte
	err := s.pool.QueryRowContext(ctx, `SELECT data FROM sessions WHERE token = ? AND UTC_TIMESTAMP(6) < expiry`, token).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("db: find session: %w", err)
	}
	return b, true, nil
}

// CommitCtx stores a session's data and expiry. A commit that changes neither the data nor
// moves the expiry by more than the store's slack leaves the row as it is, so the idle timeout
// does not turn every page view into a durable write: an idle session may end up to
// the slack early, never late.
func (s *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	_, err := s.pool.ExecContext(ctx, `INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE
			expiry = IF(data = VALUES(data) AND expiry BETWEEN VALUES(expiry) - INTERVAL ? MICROSECOND AND VALUES(expiry),
				expiry, VALUES(expiry)),
			data = VALUES(data)`, token, b, expiry.UTC(), s.slack.Microseconds())
	if err != nil {
		return fmt.Errorf("db: commit session: %w", err)
	}
	return nil
}

// DeleteCtx removes a session.
func (s *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	if _, err := s.pool.ExecContext(ctx, `DELETE FROM sessions WHERE token = ?`, token); err != nil {
		return fmt.Errorf("db: delete session: %w", err)
	}
	return nil
}

// Find is FindCtx without a deadline (scs.Store).
func (s *SessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit is CommitCtx without a deadline (scs.Store).
func (s *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete is DeleteCtx without a deadline (scs.Store).
func (s *SessionStore) Delete(token string) error { return s.DeleteCtx(context.Background(), token) }

// DeleteExpiredSessions removes the scs sessions whose expiry has passed (the statement of
// scs/mysqlstore's own cleanup, run here so its racy cleanup goroutine is not needed) and
// returns how many were removed.
func DeleteExpiredSessions(ctx context.Context, pool *sql.DB) (int64, error) {
	res, err := pool.ExecContext(ctx, `DELETE FROM sessions WHERE expiry < UTC_TIMESTAMP(6)`)
	if err != nil {
		return 0, fmt.Errorf("db: delete expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("db: delete expired sessions: %w", err)
	}
	return n, nil
}
