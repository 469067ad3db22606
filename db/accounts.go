package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"runsdesk/internal/argon2phc"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
)

// Password policy (ASVS V6.2, NIST SP 800-63B rev. 4, section 3.1.1.2). runsdesk signs people in with a
// password alone, so the minimum is the single-factor length of 15 characters. There are no
// composition rules; a short list of well-known long passwords is refused.
const (
	MinPasswordLength = 15
	MaxPasswordBytes  = 1024
	MaxUsernameLength = 50
)

// argon2id parameters: the OWASP Password Storage Cheat Sheet minimum (m=19 MiB, t=2, p=1).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// Limits on parameters read back from a stored hash, so a tampered row cannot make one
// verification allocate gigabytes.
const (
	maxArgonMemoryKiB = 256 * 1024
	maxArgonTime      = 10
	maxArgonThreads   = 8
)

// ErrBadCredentials is returned by Authenticate and ChangePassword when the username or
// password is not accepted: unknown user, wrong password, disabled or deleted user, or a role
// that may not sign in. It wraps runtime.ErrNotFound, so callers that only know runtime can
// test errors.Is(err, runtime.ErrNotFound).
var ErrBadCredentials = fmt.Errorf("username or password not accepted: %w", runtime.ErrNotFound)

// ErrUsernameTaken is returned by CreateUser when the username is already in use.
var ErrUsernameTaken = errors.New("username already taken")

// PolicyError is returned by CreateUser and ChangePassword when a username, password or role
// does not meet the policy. Reason is a sentence that may be shown to the person.
type PolicyError struct {
	Reason string
}

func (e *PolicyError) Error() string { return e.Reason }

// PolicyViolation reports true; it lets packages that do not import db (handlers) recognise a
// policy error with errors.As and show its Reason.
func (e *PolicyError) PolicyViolation() bool { return true }

// User is one row of be_users as runsdesk sees it; the password hash never leaves this file.
// LastLogin and Created are unix seconds (LastLogin 0: never signed in). RealName is the
// display name (be_users.realName; "" when none was set).
type User struct {
	UID                    int64
	Username               string
	RealName               string
	Role                   runtime.Role
	Disabled               bool
	SessionEpoch           int64
	LastLogin              int64
	Created                int64
	PasswordChangeRequired bool
	// TimeZone is the IANA name of the time zone the person chose for pages ("" = UTC).
	TimeZone string
	// Email is the person's address for the notifications that concern them ("": none).
	Email string
}

// Actor returns the runtime actor of u.
func (u User) Actor() runtime.Actor {
	return runtime.Actor{UserUID: u.UID, Name: u.Username, DisplayName: u.RealName, Role: u.Role, Disabled: u.Disabled,
		PasswordChangeRequired: u.PasswordChangeRequired, TimeZone: u.TimeZone, Email: u.Email}
}

// userColumns are the be_users columns scanUser reads, in its order.
const userColumns = `uid, username, realName, role, disable, session_epoch, lastlogin, crdate, password_change_required, time_zone, email`

// scanUser reads one row of userColumns.
func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var role string
	var disabled, changeRequired int
	if err := row.Scan(&u.UID, &u.Username, &u.RealName, &role, &disabled, &u.SessionEpoch, &u.LastLogin, &u.Created, &changeRequired, &u.TimeZone, &u.Email); err != nil {
		return User{}, err
	}
	u.Role, u.Disabled, u.PasswordChangeRequired = runtime.Role(role), disabled != 0, changeRequired != 0
	return u, nil
}

// Accounts manages the people who may sign in (be_users): argon2id password hashes, roles and
// the session epoch that ends every session of a user at once. At most a fixed number of
// password hashes run at the same time; further callers wait (or give up when their context
// ends). It is safe for concurrent use.
type Accounts struct {
	db    *sql.DB
	prep  *statements
	now   func() time.Time
	slots chan struct{}
	dummy string
	// memoryKiB and passes are the argon2id cost of the hashes this Accounts makes.
	memoryKiB, passes uint32
	// verified counts password verifications, so a test can check that every sign-in attempt,
	// known username or not, costs exactly one.
	verified atomic.Int64
}

// AccountsOption changes how NewAccounts (and NewAdmin) set up Accounts.
type AccountsOption func(*Accounts)

// CheapHashes makes new password hashes cost argon2id's least (8 KiB, one pass) instead of
// the default. For test suites only, which sign people in thousands of times under the race
// detector (a default hash takes about 135 ms there); hashes already stored verify as before.
func CheapHashes() AccountsOption {
	return func(a *Accounts) { a.memoryKiB, a.passes = 8, 1 }
}

// NewAccounts returns Accounts on sqlDB (a pool from Open). now defaults to time.Now;
// maxConcurrentHashes <= 0 means 4. It computes one hash of a random password, which
// Authenticate verifies for unknown usernames so they take as long as known ones.
func NewAccounts(sqlDB *sql.DB, now func() time.Time, maxConcurrentHashes int, opts ...AccountsOption) (*Accounts, error) {
	if now == nil {
		now = time.Now
	}
	if maxConcurrentHashes <= 0 {
		maxConcurrentHashes = 4
	}
	a := &Accounts{db: sqlDB, prep: newStatements(sqlDB, maxPreparedFew), now: now, slots: make(chan struct{}, maxConcurrentHashes),
		memoryKiB: argonMemoryKiB, passes: argonTime}
	for _, opt := range opts {
		opt(a)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("db: accounts: %w", err)
	}
	dummy, err := a.hash(context.Background(), base64.RawStdEncoding.EncodeToString(secret))
	if err != nil {
		return nil, fmt.Errorf("db: accounts: %w", err)
	}
	a.dummy = dummy
	return a, nil
}

// CreateUser adds a person with role admin, reviewer or support and returns their uid. The
// username is stored in its CanonicalUsername form, which must be 1–50 characters of a-z, 0-9
// and . _ - @; the password must pass CheckPassword. A policy violation is a *PolicyError; a
// username whose canonical form is in use is ErrUsernameTaken.
func (a *Accounts) CreateUser(ctx context.Context, username, password string, role runtime.Role) (int64, error) {
	return a.createUser(ctx, username, password, role, "", nil)
}

// createUser is CreateUser storing email too ("" none; longer than 254 bytes is a
// *PolicyError), and, when audit is not nil, the row it returns for the new uid and canonical
// username in the same transaction.
func (a *Accounts) createUser(ctx context.Context, username, password string, role runtime.Role, email string,
	audit func(uid int64, username string) *runtime.AuditRecord) (int64, error) {
	username, err := newUsername(username)
	if err != nil {
		return 0, err
	}
	if err := checkPersonRole(role); err != nil {
		return 0, err
	}
	if len(email) > maxEmailLength {
		return 0, &PolicyError{Reason: fmt.Sprintf("the address is longer than %d bytes", maxEmailLength)}
	}
	if err := CheckPassword(username, password); err != nil {
		return 0, err
	}
	phc, err := a.hash(ctx, password)
	if err != nil {
		return 0, fmt.Errorf("db: create user: %w", err)
	}
	now := a.now().Unix()
	var uid int64
	err = inTx(ctx, a.db, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO be_users
			(username, password, role, admin, email, crdate, tstamp) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			username, phc, string(role), adminFlag(role), email, now, now)
		if err != nil {
			return err
		}
		if uid, err = res.LastInsertId(); err != nil || audit == nil {
			return err
		}
		r := audit(uid, username)
		return insertAudit(ctx, tx, now, r.Actor, r.IP, r.Action, "", r.Outcome, r.Reason)
	})
	if isMySQLError(err, errDuplicateKey) {
		return 0, fmt.Errorf("db: create user %q: %w", username, ErrUsernameTaken)
	}
	if err != nil {
		return 0, fmt.Errorf("db: create user: %w", err)
	}
	return uid, nil
}

// Authenticate checks username (any text whose CanonicalUsername is the stored one) and
// password and returns the person's actor and current session epoch. Every failure that depends on the credentials is ErrBadCredentials and costs
// one password verification, known username or not; other errors are store failures. A
// successful sign-in records lastlogin.
func (a *Accounts) Authenticate(ctx context.Context, username, password string) (runtime.Actor, int64, error) {
	row, err := a.loginRow(ctx, username)
	if err != nil {
		return runtime.Actor{}, 0, err
	}
	usable := row.uid != 0 && len(password) <= MaxPasswordBytes
	if _, err := parsePHC(row.hash); err != nil {
		usable = false
	}
	stored := a.dummy
	if usable {
		stored = row.hash
	}
	ok, err := a.verify(ctx, password, stored)
	if err != nil {
		return runtime.Actor{}, 0, fmt.Errorf("db: authenticate: %w", err)
	}
	if !ok || !usable || row.user.Disabled || checkPersonRole(row.user.Role) != nil {
		return runtime.Actor{}, 0, ErrBadCredentials
	}
	if _, err := execRetrying(ctx, a.db, `UPDATE be_users SET lastlogin = ? WHERE uid = ?`,
		a.now().Unix(), row.uid); err != nil {
		return runtime.Actor{}, 0, fmt.Errorf("db: authenticate: record login: %w", err)
	}
	return row.user.Actor(), row.user.SessionEpoch, nil
}

// SessionActor returns the actor and session epoch of user uid for a request carrying a
// session of that user (read with the session under WithSessionAccount). A missing, deleted
// or disabled user, or one whose role may not sign in, is an error wrapping
// runtime.ErrNotFound.
func (a *Accounts) SessionActor(ctx context.Context, uid int64) (runtime.Actor, int64, error) {
	u, err := a.sessionUser(ctx, uid)
	if err != nil {
		return runtime.Actor{}, 0, err
	}
	if u.Disabled || checkPersonRole(u.Role) != nil {
		return runtime.Actor{}, 0, fmt.Errorf("db: session user %d may not sign in: %w", uid, runtime.ErrNotFound)
	}
	return u.Actor(), u.SessionEpoch, nil
}

// UserByUID returns the user, or an error wrapping runtime.ErrNotFound when no undeleted user
// has that uid.
func (a *Accounts) UserByUID(ctx context.Context, uid int64) (User, error) {
	u, err := scanUser(a.prep.on(nil).QueryRowContext(ctx, `SELECT `+userColumns+`
		FROM be_users WHERE uid = ? AND deleted = 0`, uid))
	if err != nil {
		return User{}, fmt.Errorf("db: user %d: %w", uid, notFound(err))
	}
	return u, nil
}

// AccountByUsername returns the undeleted user the CLI names by username, compared as
// sign-in compares it, or an error wrapping runtime.ErrNotFound when there is none.
func (a *Accounts) AccountByUsername(ctx context.Context, username string) (User, error) {
	u, err := scanUser(a.db.QueryRowContext(ctx, `SELECT `+userColumns+`
		FROM be_users WHERE username = ? AND deleted = 0`, CanonicalUsername(username)))
	if err != nil {
		return User{}, fmt.Errorf("db: user %q: %w", username, notFound(err))
	}
	return u, nil
}

// ListUsers returns every undeleted user, ordered by username.
func (a *Accounts) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT `+userColumns+` FROM be_users WHERE deleted = 0 ORDER BY username, uid`)
	if err != nil {
		return nil, fmt.Errorf("db: list users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("db: list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list users: %w", err)
	}
	return out, nil
}

// The account changes below take audit: when not nil, its row (no run) is written in the
// transaction that makes the change, so the two are stored together or not at all. Each one
// on an unknown or deleted uid is an error wrapping runtime.ErrNotFound and changes nothing.

// DisableUser disables user uid and ends all their sessions (bumps session_epoch).
// Disabling the last enabled admin is admin.ErrLastAdmin.
func (a *Accounts) DisableUser(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.updateKeepingAnAdmin(ctx, "disable user", uid, audit, `UPDATE be_users
		SET disable = 1, session_epoch = session_epoch + 1, tstamp = ? WHERE uid = ? AND deleted = 0`,
		a.now().Unix(), uid)
}

// EnableUser lets disabled user uid sign in again; sessions ended by DisableUser stay ended.
// A user who is not disabled is runtime.ErrNotFound too (nothing to change).
func (a *Accounts) EnableUser(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.update(ctx, "enable user", uid, audit, `UPDATE be_users
		SET disable = 0, tstamp = ? WHERE uid = ? AND deleted = 0 AND disable = 1`,
		a.now().Unix(), uid)
}

// EndSessions ends every session of user uid (bumps session_epoch) without disabling them.
func (a *Accounts) EndSessions(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.update(ctx, "end sessions", uid, audit, `UPDATE be_users
		SET session_epoch = session_epoch + 1, tstamp = ? WHERE uid = ? AND deleted = 0`,
		a.now().Unix(), uid)
}

// SetRole changes user uid's role (keeping TYPO3's admin flag in step) and ends all their
// sessions, so the new role applies from their next sign-in. An invalid role is a *PolicyError;
// taking the last enabled admin's role is admin.ErrLastAdmin.
func (a *Accounts) SetRole(ctx context.Context, uid int64, role runtime.Role, audit *runtime.AuditRecord) error {
	if err := checkPersonRole(role); err != nil {
		return err
	}
	change := a.update
	if role != runtime.RoleAdmin {
		change = a.updateKeepingAnAdmin
	}
	return change(ctx, "set role", uid, audit, `UPDATE be_users
		SET role = ?, admin = ?, session_epoch = session_epoch + 1, tstamp = ? WHERE uid = ? AND deleted = 0`,
		string(role), adminFlag(role), a.now().Unix(), uid)
}

// SetEmail stores user uid's address for the notifications that concern them ("" removes it),
// checked by the caller; longer than 254 bytes is a *PolicyError.
func (a *Accounts) SetEmail(ctx context.Context, uid int64, email string, audit *runtime.AuditRecord) error {
	if len(email) > maxEmailLength {
		return &PolicyError{Reason: fmt.Sprintf("the address is longer than %d bytes", maxEmailLength)}
	}
	return a.update(ctx, "set email", uid, audit, `UPDATE be_users SET email = ?, tstamp = ? WHERE uid = ? AND deleted = 0`,
		email, a.now().Unix(), uid)
}

// maxEmailLength is the longest address SetEmail stores (RFC 5321's path limit).
const maxEmailLength = 254

// MaxTimeZoneLength is the longest time zone name SetTimeZone stores (be_users.time_zone).
const MaxTimeZoneLength = 64

// SetTimeZone stores the time zone user uid chose for pages: an IANA name the caller checked
// (time.LoadLocation), "" for UTC; storing the zone it already has is no error (an unknown
// user is ErrNotFound). A longer name than MaxTimeZoneLength is a *PolicyError.
func (a *Accounts) SetTimeZone(ctx context.Context, uid int64, name string) error {
	if len(name) > MaxTimeZoneLength {
		return &PolicyError{Reason: fmt.Sprintf("A time zone name has at most %d characters.", MaxTimeZoneLength)}
	}
	err := a.update(ctx, "set time zone", uid, nil, `UPDATE be_users
		SET time_zone = ?, tstamp = ? WHERE uid = ? AND deleted = 0`, name, a.now().Unix(), uid)
	if !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	var same int
	if qerr := a.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM be_users WHERE uid = ? AND deleted = 0 AND time_zone = ?`, uid, name).Scan(&same); qerr != nil {
		return fmt.Errorf("db: set time zone %d: %w", uid, qerr)
	}
	if same == 1 {
		return nil
	}
	return err
}

// ChangePassword replaces user uid's password after verifying the current one, and ends all
// their sessions (bumps session_epoch) and returns the new epoch, so the caller can keep the
// session it renews. A wrong current password is ErrBadCredentials; a new password that fails
// CheckPassword is a *PolicyError.
func (a *Accounts) ChangePassword(ctx context.Context, uid int64, current, next string) (int64, error) {
	var username, stored string
	err := a.db.QueryRowContext(ctx, `SELECT username, password FROM be_users
		WHERE uid = ? AND deleted = 0 AND disable = 0`, uid).Scan(&username, &stored)
	if err != nil {
		return 0, fmt.Errorf("db: change password of %d: %w", uid, notFound(err))
	}
	ok, err := a.verify(ctx, current, stored)
	if err != nil {
		return 0, fmt.Errorf("db: change password: %w", err)
	}
	if !ok {
		return 0, ErrBadCredentials
	}
	if next == current {
		return 0, &PolicyError{Reason: "The new password must differ from the current one."}
	}
	if err := CheckPassword(username, next); err != nil {
		return 0, err
	}
	return a.setPassword(ctx, uid, next, false, nil)
}

// ResetPassword replaces user uid's password without knowing the current one (the CLI's
// reset), ends all their sessions and requires them to choose a new password at their next
// sign-in. A password that fails CheckPassword is a *PolicyError; a person who signs in with an
// identity provider is ErrExternalAccount.
func (a *Accounts) ResetPassword(ctx context.Context, uid int64, password string, audit *runtime.AuditRecord) error {
	u, err := a.UserByUID(ctx, uid)
	if err != nil {
		return err
	}
	external, err := isExternal(ctx, a.db, uid)
	if err != nil {
		return fmt.Errorf("db: reset password of user %d: %w", uid, err)
	}
	if external {
		return ErrExternalAccount
	}
	if err := CheckPassword(u.Username, password); err != nil {
		return err
	}
	_, err = a.setPassword(ctx, uid, password, true, audit)
	return err
}

// setPassword stores password's hash, ends every session of uid and sets (reset) or clears
// (the person's own change) password_change_required; it returns the new session epoch.
func (a *Accounts) setPassword(ctx context.Context, uid int64, password string, changeRequired bool, audit *runtime.AuditRecord) (int64, error) {
	phc, err := a.hash(ctx, password)
	if err != nil {
		return 0, fmt.Errorf("db: set password: %w", err)
	}
	if err := a.update(ctx, "set password", uid, audit, `UPDATE be_users
		SET password = ?, password_change_required = ?, session_epoch = session_epoch + 1, tstamp = ?
		WHERE uid = ? AND deleted = 0`,
		phc, changeRequired, a.now().Unix(), uid); err != nil {
		return 0, err
	}
	u, err := a.UserByUID(ctx, uid)
	if err != nil {
		return 0, err
	}
	return u.SessionEpoch, nil
}

type loginRow struct {
	uid  int64
	hash string
	user User
}

func (a *Accounts) loginRow(ctx context.Context, username string) (loginRow, error) {
	var r loginRow
	var role string
	var disabled, changeRequired int
	if len(username) > 4*MaxUsernameLength {
		return r, nil
	}
	username = CanonicalUsername(username)
	if username == "" {
		return r, nil
	}
	err := a.db.QueryRowContext(ctx, `SELECT uid, username, password, role, disable, session_epoch, lastlogin, password_change_required
		FROM be_users WHERE username = ? AND deleted = 0`, username).
		Scan(&r.uid, &r.user.Username, &r.hash, &role, &disabled, &r.user.SessionEpoch, &r.user.LastLogin, &changeRequired)
	if errors.Is(err, sql.ErrNoRows) {
		return loginRow{}, nil
	}
	if err != nil {
		return r, fmt.Errorf("db: authenticate: %w", err)
	}
	r.user.UID, r.user.Role, r.user.Disabled = r.uid, runtime.Role(role), disabled != 0
	r.user.PasswordChangeRequired = changeRequired != 0
	return r, nil
}

// update runs query, which must change exactly the row of uid (else runtime.ErrNotFound and
// nothing is written), and audit's row when it is not nil, in one transaction.
func (a *Accounts) update(ctx context.Context, op string, uid int64, audit *runtime.AuditRecord, query string, args ...any) error {
	if err := inTx(ctx, a.db, func(tx *sql.Tx) error {
		return updateOne(ctx, tx, query, args, audit, a.now().UTC().Unix())
	}); err != nil {
		return fmt.Errorf("db: %s %d: %w", op, uid, err)
	}
	return nil
}

// updateKeepingAnAdmin is update refused with admin.ErrLastAdmin when uid is the only enabled
// admin. It locks the enabled admins' rows first, so of two changes at once that would each
// leave one admin, the second sees the first's result.
func (a *Accounts) updateKeepingAnAdmin(ctx context.Context, op string, uid int64, audit *runtime.AuditRecord, query string, args ...any) error {
	if err := inTx(ctx, a.db, func(tx *sql.Tx) error {
		admins, err := enabledAdmins(ctx, tx)
		if err != nil {
			return err
		}
		if len(admins) == 1 && admins[0] == uid {
			return admin.ErrLastAdmin
		}
		return updateOne(ctx, tx, query, args, audit, a.now().UTC().Unix())
	}); err != nil {
		return fmt.Errorf("db: %s %d: %w", op, uid, err)
	}
	return nil
}

// enabledAdmins returns the uids of the enabled admins, locking their rows until tx ends.
func enabledAdmins(ctx context.Context, tx *sql.Tx) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT uid FROM be_users
		WHERE role = 'admin' AND disable = 0 AND deleted = 0 ORDER BY uid FOR UPDATE`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var uids []int64
	for rows.Next() {
		var uid int64
		if err := rows.Scan(&uid); err != nil {
			return nil, err
		}
		uids = append(uids, uid)
	}
	return uids, rows.Err()
}

// updateOne runs query on q; anything but exactly one changed row is runtime.ErrNotFound.
// When audit is not nil its row (time at, no run) follows on q.
func updateOne(ctx context.Context, q execer, query string, args []any, audit *runtime.AuditRecord, at int64) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return runtime.ErrNotFound
	}
	if audit == nil {
		return nil
	}
	return insertAudit(ctx, q, at, audit.Actor, audit.IP, audit.Action, "", audit.Outcome, audit.Reason)
}

// inTx runs fn in a transaction on pool and commits it, restarting the whole transaction
// after a transient error (retryTransient); fn's error, or a failed commit, rolls back.
func inTx(ctx context.Context, pool *sql.DB, fn func(*sql.Tx) error) error {
	return retryTransient(ctx, nil, func() error { return txOnce(ctx, pool, fn) })
}

// txOnce runs fn in one transaction on pool and commits it; fn's error, or a failed commit,
// rolls back.
func txOnce(ctx context.Context, pool *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// hash returns the PHC string of password at a's argon2id cost.
func (a *Accounts) hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if err := a.acquire(ctx); err != nil {
		return "", err
	}
	h := argon2phc.New(argon2phc.ID, password, salt, a.memoryKiB, a.passes, argonThreads, argonKeyLen)
	a.release()
	return h.String(), nil
}

// verify reports whether password matches the PHC string phc. A malformed phc is an error.
func (a *Accounts) verify(ctx context.Context, password, phc string) (bool, error) {
	p, err := parsePHC(phc)
	if err != nil {
		return false, err
	}
	if err := a.acquire(ctx); err != nil {
		return false, err
	}
	ok := p.Matches(password)
	a.release()
	a.verified.Add(1)
	return ok, nil
}

func (a *Accounts) acquire(ctx context.Context) error {
	select {
	case a.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *Accounts) release() { <-a.slots }

// parsePHC reads a stored password hash: an argon2id PHC string within the limits above.
func parsePHC(phc string) (argon2phc.Hash, error) {
	h, err := argon2phc.Parse(phc, argon2phc.Limits{MaxMemoryKiB: maxArgonMemoryKiB, MaxTime: maxArgonTime, MaxThreads: maxArgonThreads})
	if err != nil {
		return h, fmt.Errorf("stored %w", err)
	}
	if h.Variant != argon2phc.ID {
		return argon2phc.Hash{}, errors.New("stored password hash is not an argon2id PHC string")
	}
	return h, nil
}

// CheckPassword reports whether password may be set for username: at least
// MinPasswordLength characters, at most MaxPasswordBytes bytes, valid UTF-8, not the username
// with a few characters added, not one character repeated, not a well-known password. Any
// character is allowed and none is required. A violation is a *PolicyError.
func CheckPassword(username, password string) error {
	switch {
	case !utf8.ValidString(password):
		return &PolicyError{Reason: "The password contains invalid characters."}
	case utf8.RuneCountInString(password) < MinPasswordLength:
		return &PolicyError{Reason: fmt.Sprintf("The password must be at least %d characters long.", MinPasswordLength)}
	case len(password) > MaxPasswordBytes:
		return &PolicyError{Reason: fmt.Sprintf("The password must be at most %d bytes long.", MaxPasswordBytes)}
	case basedOnUsername(username, password):
		return &PolicyError{Reason: "The password must not be based on the username."}
	case singleCharacter(password):
		return &PolicyError{Reason: "The password must not repeat a single character."}
	case isCommonPassword(password):
		return &PolicyError{Reason: "This password is too common. Choose another one."}
	}
	return nil
}

// basedOnUsername reports whether password is username (any case) with fewer than 8 other
// characters around it.
func basedOnUsername(username, password string) bool {
	u := CanonicalUsername(username)
	if utf8.RuneCountInString(u) < 3 {
		return false
	}
	rest := strings.ReplaceAll(strings.ToLower(password), u, "")
	return rest != strings.ToLower(password) && utf8.RuneCountInString(rest) < 8
}

func singleCharacter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return strings.Trim(s, string(r)) == ""
}

// commonPasswords lists well-known passwords of at least MinPasswordLength characters from
// public breach top lists, one per line, lower case (shorter ones fail the length rule).
const commonPasswords = `
123456789012345
1234567890123456
12345678901234567890
098765432109876
0987654321098765
qwertyuiopasdfgh
qwertyuiopasdfghjkl
qwertyuiopasdfghjklzxcvbnm
asdfghjklasdfghjkl
1q2w3e4r5t6y7u8i
1q2w3e4r5t6y7u8i9o0p
1qaz2wsx3edc4rfv
zaq12wsxcde34rfv
qazwsxedcrfvtgbyhn
passwordpassword
password1234567
password12345678
password123456789
iloveyouiloveyou
abcdefghijklmnop
abcdefghijklmnopqrstuvwxyz
correcthorsebatterystaple
correct horse battery staple
administrator123
adminadminadmin
welcome123456789
letmein123456789
changemechangeme
`

func isCommonPassword(password string) bool {
	return strings.Contains(commonPasswords, "\n"+strings.ToLower(strings.TrimSpace(password))+"\n")
}

func checkUsername(username string) error {
	n := utf8.RuneCountInString(username)
	if n == 0 || n > MaxUsernameLength || !utf8.ValidString(username) {
		return &PolicyError{Reason: fmt.Sprintf("The username must be 1 to %d characters long.", MaxUsernameLength)}
	}
	for _, r := range username {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return &PolicyError{Reason: "The username must not contain spaces or control characters."}
		}
	}
	return nil
}

func checkPersonRole(role runtime.Role) error {
	switch role {
	case runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport:
		return nil
	}
	return &PolicyError{Reason: fmt.Sprintf("The role must be admin, reviewer or support, not %q.", string(role))}
}

// adminFlag is TYPO3's be_users.admin for role.
func adminFlag(role runtime.Role) int {
	if role == runtime.RoleAdmin {
		return 1
	}
	return 0
}
