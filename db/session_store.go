package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"runsdesk/cache"
)

// SessionStore is scs/mysqlstore's store (same table) with the context methods of
// scs.CtxStore, so loading and saving a session honour the request's deadline, and a commit
// that skips rewriting an unchanged session (see CommitCtx).
type SessionStore struct {
	pool   *sql.DB
	prep   *statements
	slack  time.Duration
	loaded *cache.Cache[string, loadedSession]
	// users are the uids the sessions of tokens belonged to at their last request (see
	// WithSessionAccount).
	users *cache.Cache[string, int64]
	// indexIDs are the session index ids of the sessions of tokens at their last request (see
	// WithSessionAccount).
	indexIDs *cache.Cache[string, string]
	seed     maphash.Seed
	// commits serialises this process's writes of one token's row (striped by the token's
	// hash): parallel requests of one browser would otherwise race each other, and through
	// Galera nodes fail each other's certification, for a row where the last write wins anyway.
	commits [sessionCommitStripes]sync.Mutex
}

// sessionCommitStripes is how many locks SessionStore.commits stripes tokens over.
const sessionCommitStripes = 64

// DefaultSessionExpirySlack is the slack of NewSessionStore for the desk's 30-minute idle
// timeout.
const DefaultSessionExpirySlack = time.Minute

// NewSessionStore returns the session store on pool. slack is how far a session's stored
// expiry may lag behind the expiry a commit asks for before an unchanged session is written
// again; keep it a small fraction of the idle timeout (DefaultSessionExpirySlack for 30 min).
func NewSessionStore(pool *sql.DB, slack time.Duration) *SessionStore {
	return &SessionStore{pool: pool, prep: newStatements(pool, maxPreparedFew), slack: max(slack, 0),
		loaded:   cache.New[string, loadedSession](cache.Options{Max: maxLoadedSessions}),
		users:    cache.New[string, int64](cache.Options{Max: maxLoadedSessions}),
		indexIDs: cache.New[string, string](cache.Options{Max: maxLoadedSessions}), seed: maphash.MakeSeed()}
}

const sqlFindSession = `SELECT data, expiry FROM sessions WHERE token = ? AND UTC_TIMESTAMP(6) < expiry`

// FindCtx returns the data of an unexpired session token, and remembers what it read until
// the token's next commit (CommitCtx). Under WithSessionAccount it also reads the token's user
// in the same statement.
func (s *SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	b, expiry, err := s.findWithUser(ctx, token)
	if errors.Is(err, sql.ErrNoRows) {
		s.loaded.Delete(token)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("db: find session: %w", err)
	}
	s.loaded.Put(token, loadedSession{sum: sha256.Sum256(b), expiry: expiry})
	return b, true, nil
}

// CommitCtx stores a session's data and expiry. A commit that changes neither the data nor
// moves the expiry by more than the store's slack leaves the row as it is, so the idle timeout
// does not turn every page view into a durable write: an idle session may end up to the slack
// early, never late. When the same request found the session (FindCtx) with these data and an
// expiry within the slack, the commit sends no statement at all; otherwise the database
// decides with the same rule, so a row changed meanwhile by another request is judged as
// it is now.
func (s *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if l, ok := s.loaded.Take(token); ok && l.sum == sha256.Sum256(b) && !expiry.Before(l.expiry) && expiry.Sub(l.expiry) <= s.slack {
		return nil
	}
	mu := &s.commits[maphash.String(s.seed, token)%sessionCommitStripes]
	mu.Lock()
	defer mu.Unlock()
	_, err := execRetrying(ctx, s.pool, `INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)
		ON DUPLICATE KEY UPDATE
			expiry = IF(data = VALUES(data) AND expiry BETWEEN VALUES(expiry) - INTERVAL ? MICROSECOND AND VALUES(expiry),
				expiry, VALUES(expiry)),
			data = VALUES(data)`, token, b, expiry.UTC(), s.slack.Microseconds())
	if err != nil {
		return fmt.Errorf("db: commit session: %w", err)
	}
	return nil
}

// maxLoadedSessions bounds the sessions a SessionStore remembers between find and commit;
// past it the least recently found are forgotten (their commits then ask the database).
const maxLoadedSessions = 10000

// loadedSession is what FindCtx read of a session, remembered per token until CommitCtx
// takes it (so a skipped commit never rests on a read older than the request's own): a hash
// of its data and its expiry.
type loadedSession struct {
	sum    [sha256.Size]byte
	expiry time.Time
}

// DeleteCtx removes a session.
func (s *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	s.loaded.Delete(token)
	s.users.Delete(token)
	s.indexIDs.Delete(token)
	if _, err := execRetrying(ctx, s.pool, `DELETE FROM sessions WHERE token = ?`, token); err != nil {
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
	res, err := execRetrying(ctx, pool, `DELETE FROM sessions WHERE expiry < UTC_TIMESTAMP(6)`)
	if err != nil {
		return 0, fmt.Errorf("db: delete expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("db: delete expired sessions: %w", err)
	}
	return n, nil
}
