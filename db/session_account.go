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
// (Accounts.SessionActor), and of the session index row it had then, for the request's index
// check (SessionIndex.Find). It belongs to one request and each part is used at most once.
type sessionAccount struct {
	store *SessionStore
	token string
	// uid is the user read with the session (0: none, or already used); found tells whether
	// that user exists undeleted, user is its row then.
	uid   int64
	found bool
	user  User
	// indexID is the id of the session index row read with the session ("": none, or already
	// used); indexed tells whether that row exists, indexRow is it then.
	indexID  string
	indexed  bool
	indexRow runtime.Session
}

// WithSessionAccount returns ctx for one request whose session read also reads, in the same
// statement, the user the session's token belonged to at its last request and that session's
// row of the session index; the request's account re-check and index check then use those
// rows instead of reading them again, so a signed-in request costs two statements less. The
// rows are as fresh as the session itself: a user disabled, or a session signed out from
// another one, before the request began is refused by them. A request without it reads each
// on its own.
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

// sqlFindSessionWithUserAndIndex is sqlFindSessionWithUser with the session index row of
// session_id (each column of sessionColumns, 0 when there is none) and whether there is one.
var sqlFindSessionWithUserAndIndex = `SELECT s.data, s.expiry, u.uid IS NOT NULL, ` + coalescedColumns(userColumns, "u.") + `,
	x.uid IS NOT NULL, ` + coalescedColumns(sessionColumns, "x.") + `
	FROM sessions s LEFT JOIN be_users u ON u.uid = ? AND u.deleted = 0
	LEFT JOIN tx_runsdesk_session x ON x.session_id = ?
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
// this store knows the user of token's last request, that user in the same statement, and
// with it the session index row of that request when the store knows it too. It returns the
// session's data and expiry as FindCtx's statement does.
func (s *SessionStore) findWithUser(ctx context.Context, token string) ([]byte, time.Time, error) {
	var b []byte
	var expiry time.Time
	h := sessionAccountOf(ctx)
	if h == nil {
		err := s.prep.on(nil).QueryRowContext(ctx, sqlFindSession, token).Scan(&b, &expiry)
		return b, expiry, err
	}
	h.store, h.token, h.uid, h.indexID = s, token, 0, ""
	uid, known := s.users.Get(token)
	if !known {
		err := s.prep.on(nil).QueryRowContext(ctx, sqlFindSession, token).Scan(&b, &expiry)
		return b, expiry, err
	}
	id, indexKnown := s.indexIDs.Get(token)
	var found, indexed bool
	var row runtime.Session
	var u User
	var err error
	if indexKnown {
		r := s.prep.on(nil).QueryRowContext(ctx, sqlFindSessionWithUserAndIndex, uid, id, token)
		u, err = scanUser(scanFunc(func(userDest ...any) error {
			row, err = scanSession(scanFunc(func(indexDest ...any) error {
				dest := append(append([]any{&b, &expiry, &found}, userDest...), &indexed)
				return r.Scan(append(dest, indexDest...)...)
			}))
			return err
		}))
	} else {
		r := s.prep.on(nil).QueryRowContext(ctx, sqlFindSessionWithUser, uid, token)
		u, err = scanUser(scanFunc(func(dest ...any) error { return r.Scan(append([]any{&b, &expiry, &found}, dest...)...) }))
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	h.uid, h.found, h.user = uid, found, u
	if indexKnown {
		h.indexID, h.indexed, h.indexRow = id, indexed, row
	}
	return b, expiry, nil
}

// sessionIndexRow is SessionIndex.Find for a request's index check: the row its session read
// read with it when that was id's (once; ok false otherwise). It remembers id as the index id
// of the request's session token, for the token's next request.
func sessionIndexRow(ctx context.Context, id string) (row runtime.Session, indexed, ok bool) {
	h := sessionAccountOf(ctx)
	if h == nil || h.store == nil {
		return runtime.Session{}, false, false
	}
	h.store.indexIDs.Put(h.token, id)
	if h.indexID == "" || h.indexID != id {
		return runtime.Session{}, false, false
	}
	h.indexID = ""
	return h.indexRow, h.indexed, true
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
