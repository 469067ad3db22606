package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"runsdesk/runtime"
)

// SessionIndex is runsdesk's index of signed-in sessions by person (tx_runsdesk_session): the
// session store keeps tokens and data only, so the index is what lists a person's sessions
// and ends one of them. Each row is found by the random id its session's data holds. It is
// safe for concurrent use.
type SessionIndex struct {
	pool *sql.DB
	prep *statements
}

// NewSessionIndex returns the session index on pool.
func NewSessionIndex(pool *sql.DB) *SessionIndex {
	return &SessionIndex{pool: pool, prep: newStatements(pool, maxPreparedFew)}
}

const sessionColumns = `uid, session_id, be_user, epoch, crdate, last_seen, expires_at, ended_at, ip, user_agent`

func scanSession(row interface{ Scan(...any) error }) (runtime.Session, error) {
	var s runtime.Session
	err := row.Scan(&s.UID, &s.ID, &s.UserUID, &s.Epoch, &s.Created, &s.LastSeen, &s.Expires, &s.Ended, &s.IP, &s.UserAgent)
	return s, err
}

// Start records signed-in session s (its ID, person, epoch, times, address and user agent);
// s.UID, s.Ended are ignored.
func (x *SessionIndex) Start(ctx context.Context, s runtime.Session) error {
	if _, err := execRetrying(ctx, x.pool, `INSERT INTO tx_runsdesk_session
		(session_id, be_user, epoch, crdate, last_seen, expires_at, ip, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.UserUID, s.Epoch, s.Created, s.LastSeen, s.Expires, s.IP, s.UserAgent); err != nil {
		return fmt.Errorf("db: start session of user %d: %w", s.UserUID, err)
	}
	return nil
}

const sqlFindIndexedSession = `SELECT ` + sessionColumns + ` FROM tx_runsdesk_session WHERE session_id = ?`

// Find returns the row of session id, ended or not (under WithSessionAccount the row read with
// the request's session when that read had it); an id without a row (or "") is an error
// wrapping runtime.ErrNotFound.
func (x *SessionIndex) Find(ctx context.Context, id string) (runtime.Session, error) {
	if id == "" {
		return runtime.Session{}, fmt.Errorf("db: session without an id: %w", runtime.ErrNotFound)
	}
	if row, indexed, ok := sessionIndexRow(ctx, id); ok {
		if !indexed {
			return runtime.Session{}, fmt.Errorf("db: find session: %w", runtime.ErrNotFound)
		}
		return row, nil
	}
	s, err := scanSession(x.prep.on(nil).QueryRowContext(ctx, sqlFindIndexedSession, id))
	if err != nil {
		return runtime.Session{}, fmt.Errorf("db: find session: %w", notFound(err))
	}
	return s, nil
}

// Touch records a request of open session id at seen from ip, which keeps it until expires.
// A row seen at or after notBefore is left as it is, so parallel requests write it once; an
// ended row is never touched.
func (x *SessionIndex) Touch(ctx context.Context, id string, seen, notBefore int64, ip string, expires int64) error {
	if _, err := execRetrying(ctx, x.pool, `UPDATE tx_runsdesk_session SET last_seen = ?, ip = ?, expires_at = ?
		WHERE session_id = ? AND ended_at = 0 AND last_seen < ?`, seen, ip, expires, id, notBefore); err != nil {
		return fmt.Errorf("db: touch session: %w", err)
	}
	return nil
}

// List returns user's open sessions of epoch that have not expired at now, the most recently
// seen first.
func (x *SessionIndex) List(ctx context.Context, user, epoch, now int64) ([]runtime.Session, error) {
	out, err := queryAll(ctx, x.pool, func(r *sql.Rows) (runtime.Session, error) { return scanSession(r) },
		`SELECT `+sessionColumns+` FROM tx_runsdesk_session
		WHERE be_user = ? AND epoch = ? AND ended_at = 0 AND expires_at > ?
		ORDER BY last_seen DESC, uid DESC LIMIT 200`, user, epoch, now)
	if err != nil {
		return nil, fmt.Errorf("db: sessions of user %d: %w", user, err)
	}
	return out, nil
}

// End signs out user's open session uid at at, while user's session keep (the one asking) is
// open. A session that is not user's or not open, or a keep that is not open (another
// session signed it out first), is an error wrapping runtime.ErrNotFound.
func (x *SessionIndex) End(ctx context.Context, user int64, keep string, uid, at int64) error {
	n, err := x.end(ctx, user, keep, uid, at)
	if err != nil {
		return fmt.Errorf("db: end session %d of user %d: %w", uid, user, err)
	}
	if n != 1 {
		return fmt.Errorf("db: end session %d of user %d: %w", uid, user, runtime.ErrNotFound)
	}
	return nil
}

// EndOthers signs out every open session of user but keep (the one asking) at at, and
// returns how many it ended. A keep that is not open (another session signed it out first) is
// an error wrapping runtime.ErrNotFound, and ends nothing.
func (x *SessionIndex) EndOthers(ctx context.Context, user int64, keep string, at int64) (int64, error) {
	n, err := x.end(ctx, user, keep, 0, at)
	if err != nil {
		return 0, fmt.Errorf("db: end other sessions of user %d: %w", user, err)
	}
	return n, nil
}

// end ends user's open session uid (0: every one but keep) in one transaction that first
// locks all of user's rows in index order, so sessions of one person signing each other out
// at once take turns: the first one wins, the next finds its own session ended.
func (x *SessionIndex) end(ctx context.Context, user int64, keep string, uid, at int64) (int64, error) {
	var n int64
	err := inTx(ctx, x.pool, func(tx *sql.Tx) error {
		n = 0
		open, err := queryAll(ctx, tx, func(r *sql.Rows) (string, error) {
			var id string
			return id, r.Scan(&id)
		}, `SELECT session_id FROM tx_runsdesk_session WHERE be_user = ? AND ended_at = 0 ORDER BY last_seen, uid FOR UPDATE`, user)
		if err != nil {
			return err
		}
		if !slices.Contains(open, keep) {
			return runtime.ErrNotFound
		}
		res, err := tx.ExecContext(ctx, `UPDATE tx_runsdesk_session SET ended_at = ?
			WHERE be_user = ? AND session_id <> ? AND ended_at = 0 AND (? = 0 OR uid = ?)`, at, user, keep, uid, uid)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// Forget removes the row of session id (sign-out, or a new sign-in in the same browser); an
// id without a row is no error.
func (x *SessionIndex) Forget(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	if _, err := execRetrying(ctx, x.pool, `DELETE FROM tx_runsdesk_session WHERE session_id = ?`, id); err != nil {
		return fmt.Errorf("db: forget session: %w", err)
	}
	return nil
}

// DeleteExpiredSessionIndex removes the session index rows whose expiry has passed (ended
// rows included) and returns how many were removed; the session janitor runs it beside
// DeleteExpiredSessions.
func DeleteExpiredSessionIndex(ctx context.Context, pool *sql.DB) (int64, error) {
	res, err := execRetrying(ctx, pool, `DELETE FROM tx_runsdesk_session WHERE expires_at < UNIX_TIMESTAMP()`)
	if err != nil {
		return 0, fmt.Errorf("db: delete expired session index rows: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("db: delete expired session index rows: %w", err)
	}
	return n, nil
}
