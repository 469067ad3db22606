package db

import (
	"context"
	"fmt"
	"strings"
	"time"

	"runsdesk/runtime"
)

// sessionAccountKey is the context key of a request's sessionAccount.
type sessionAccountKey struct{}

// sessionAccount is what one request's session read (SessionStore.FindCtx) read of the user
// its token belonged to at its last request, for that request's account re-check
// (Accounts.SessionActor). It belongs to one request and is used at most once.
type sessionAccount struct {
	store *SessionStore
	token string
	// uid is the user read with the session (0: none, or already used); found tells whether
	// that user exists undeleted, user is its row then.
	uid   int64
	found bool
	user  User
}

// WithSessionAccount returns ctx for one request whose session read also reads, in the same
// statement, the user the session's token belonged to at its last request; the request's
// account re-check of that user then uses that row instead of reading it again, so a
// signed-in request costs one statement less. The row is as fresh as the session itself: a
// user disabled before the request began is refused by it. A request without it reads both
// on their own.
func WithSessionAccount(ctx context.Context) context.Context {
	return context.WithValue(ctx, sessionAccountKey{}, &sessionAccount{})
}

func sessionAccountOf(ctx context.Context) *sessionAccount {
	h, _ := ctx.Value(sessionAccountKey{}).(*sessionAccount)
	return h
}

// sqlFindSessionWithUser is the session read with the user of uid (each column of userColumns,
// 0 when there is no such user) and whether there is one.
var sqlFindSessionWithUser = `SELECT s.data, s.expiry, u.uid IS NOT NULL, ` + coalescedColumns(userColumns, "u.") + `
	FROM sessions s LEFT JOIN be_users u ON u.uid = ? AND u.deleted = 0
	WHERE s.token = ? AND UTC_TIMESTAMP(6) < s.expiry`

// coalescedColumns turns a comma-separated column list into the same columns of table prefix
// each as COALESCE(column, 0), for a row an outer join may not find.
func coalescedColumns(cols, prefix string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = "COALESCE(" + prefix + strings.TrimSpace(p) + ", 0)"
	}
	return strings.Join(parts, ", ")
}

// findWithUser reads the session of token and, when the request carries a sessionAccount and
// this store knows the user of token's last request, that user in the same statement. It
// returns the session's data and expiry as FindCtx's statement does.
func (s *SessionStore) findWithUser(ctx context.Context, token string) ([]byte, time.Time, error) {
	var b []byte
	var expiry time.Time
	h := sessionAccountOf(ctx)
	if h == nil {
		err := s.prep.on(nil).QueryRowContext(ctx, sqlFindSession, token).Scan(&b, &expiry)
		return b, expiry, err
	}
	h.store, h.token, h.uid = s, token, 0
	uid, known := s.users.Get(token)
	if !known {
		err := s.prep.on(nil).QueryRowContext(ctx, sqlFindSession, token).Scan(&b, &expiry)
		return b, expiry, err
	}
	var found bool
	row := s.prep.on(nil).QueryRowContext(ctx, sqlFindSessionWithUser, uid, token)
	u, err := scanUser(scanFunc(func(dest ...any) error { return row.Scan(append([]any{&b, &expiry, &found}, dest...)...) }))
	if err != nil {
		return nil, time.Time{}, err
	}
	h.uid, h.found, h.user = uid, found, u
	return b, expiry, nil
}

// sessionUser is UserByUID for a request's account re-check: the row its session read read
// with it when that was uid (once), else read now. It remembers uid as the user of the
// request's session token, for the token's next request.
func (a *Accounts) sessionUser(ctx context.Context, uid int64) (User, error) {
	h := sessionAccountOf(ctx)
	if h == nil || h.store == nil {
		return a.UserByUID(ctx, uid)
	}
	h.store.users.Put(h.token, uid)
	if h.uid != uid {
		return a.UserByUID(ctx, uid)
	}
	h.uid = 0
	if !h.found {
		return User{}, fmt.Errorf("db: user %d: %w", uid, runtime.ErrNotFound)
	}
	return h.user, nil
}

// scanFunc is a scanner calling a function.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }
