// Package backend reads a TYPO3 12 site's backend accounts (be_users, be_groups) for runsdesk's
// sign-in, read only: every statement it sends is a SELECT, and it never reads TYPO3's MFA
// secrets (whether an account has TYPO3's own MFA is worked out by the database, so the mfa
// column never leaves the server).
//
// A Reader signs a person in with their TYPO3 username and password (SignIn), re-checks an
// account by uid for a session (Account) and tells whether a username belongs to a TYPO3
// account (Exists). An account signs in when exactly one be_users row with deleted = 0 has the
// username (compared as the column's collation does, as TYPO3 does), the password matches its
// hash (typo3/passwords), it is not disabled, its starttime (when set) has come, its endtime
// (when set) has not, and its groups or admin flag give it a runsdesk role (typo3/roles, with
// be_groups read anew each time). Each refusal is one of the exported errors, for the caller to
// audit; none quotes a username, password or hash.
package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
	"runsdesk/typo3/passwords"
	"runsdesk/typo3/roles"
)

// Refusals. Callers tell them apart with errors.Is, record the reason and show the person one
// generic message.
var (
	// ErrBadCredentials: no live account has the username, or the password is wrong (or empty).
	ErrBadCredentials = errors.New("unknown username or wrong password")
	// ErrAmbiguous: more than one live account has the username as the collation compares it.
	ErrAmbiguous = errors.New("more than one account has this username")
	// ErrHash: the account's password hash is of a format typo3/passwords does not know, or
	// malformed.
	ErrHash = errors.New("the password hash is of an unknown format or malformed")
	// ErrDisabled: be_users.disable is set.
	ErrDisabled = errors.New("the account is disabled")
	// ErrNotStarted: be_users.starttime is set and still to come.
	ErrNotStarted = errors.New("the account's start time has not come")
	// ErrExpired: be_users.endtime is set and has passed.
	ErrExpired = errors.New("the account's end time has passed")
	// ErrNoRole: no mapped group reaches the account and it is not a TYPO3 admin.
	ErrNoRole = errors.New("no runsdesk role: no mapped group and not a TYPO3 admin")
	// ErrNotFound: no live account has the uid (deleted, or never there).
	ErrNotFound = errors.New("no such account")
)

// dummyHash is what SignIn verifies the password against when no single account has the
// username, so that the answer takes as long as for an account with TYPO3 12's default hash
// (argon2i, 64 MiB, t = 16). It is the hash of a random password nobody kept.
const dummyHash = `$argon2i$v=19$m=65536,t=16,p=1$N1ViNTVscVJwaFU1WGhoSA$0qzqtChGxpAymzKicPJ1vrIQFGxW4YaCQe3dMDFrXPg`

// Account is a TYPO3 backend account that may use runsdesk, as of the moment it was read.
type Account struct {
	UID      int64
	Username string
	RealName string
	Email    string
	// Admin is TYPO3's admin flag (bit 1 of be_users.admin, as TYPO3 reads it).
	Admin bool
	// Role is the runsdesk role the account's groups or admin flag give it.
	Role runtime.Role
	// MFA is whether the account has TYPO3's own MFA enabled (see mfaEnabled).
	MFA bool
}

// Reader reads be_users and be_groups of one TYPO3 site. Safe for concurrent use.
type Reader struct {
	db       *sql.DB
	mapping  roles.Mapping
	adminsAs runtime.Role
}

// New returns a Reader on db, a TYPO3 12 site's database, giving roles by mapping (the
// parsed --typo3-roles) and adminsAs (the parsed --typo3-admins-as).
func New(db *sql.DB, mapping roles.Mapping, adminsAs runtime.Role) *Reader {
	return &Reader{db: db, mapping: mapping, adminsAs: adminsAs}
}

// mfaEnabled is an SQL expression over be_users.mfa: 1 when the account has TYPO3's MFA on,
// 0 when not. The column (a JSON object of provider identifier to properties, secrets among
// them) is read only here, inside the server. Off: NULL, empty, or JSON without a provider
// whose "active" is truthy as PHP's (bool) reads it ([] is what TYPO3 writes after the last
// provider is removed). On, failing closed: anything that is not valid JSON, valid JSON that
// is neither an object nor an empty array, and any "active" other than false, null, 0, "",
// "0", [] or {}.
const mfaEnabled = `CASE
	WHEN mfa IS NULL OR mfa = '' THEN 0
	WHEN JSON_VALID(CONVERT(mfa USING utf8mb4)) = 0 THEN 1
	WHEN JSON_TYPE(CONVERT(mfa USING utf8mb4)) = 'ARRAY' AND JSON_LENGTH(CONVERT(mfa USING utf8mb4)) = 0 THEN 0
	WHEN JSON_TYPE(CONVERT(mfa USING utf8mb4)) <> 'OBJECT' THEN 1
	WHEN JSON_EXTRACT(CONVERT(mfa USING utf8mb4), '$.*.active') IS NULL THEN 0
	WHEN JSON_COMPACT(JSON_EXTRACT(CONVERT(mfa USING utf8mb4), '$.*.active'))
		REGEXP '^[[]{0,1}((false|null|0|""|"0"|[[][]]|[{][}]),{0,1})*[]]{0,1}$' THEN 0
	ELSE 1
END`

// accountColumns are the be_users columns an account is read with, in accountRow.dest order.
const accountColumns = `uid, username, realName, email, (admin & 1) = 1, COALESCE(usergroup, ''),
	disable <> 0, starttime, endtime, ` + mfaEnabled

// accountRow is one be_users row as accountColumns reads it.
type accountRow struct {
	Account
	userGroups string
	disabled   bool
	startTime  int64
	endTime    int64
}

// dest returns the scan destinations for accountColumns.
func (a *accountRow) dest() []any {
	return []any{&a.UID, &a.Username, &a.RealName, &a.Email, &a.Admin, &a.userGroups,
		&a.disabled, &a.startTime, &a.endTime, &a.MFA}
}

// SignIn returns the account whose username and password these are, if it may use runsdesk
// at now. A refusal is an error wrapping one of ErrBadCredentials, ErrAmbiguous, ErrHash,
// ErrDisabled, ErrNotStarted, ErrExpired or ErrNoRole; the password is checked before the
// account's state, so a wrong password on a disabled account is ErrBadCredentials. Without a
// single matching account the password is still verified, against a fixed hash, so the
// answer takes as long. Other errors are the database's.
func (r *Reader) SignIn(ctx context.Context, username, password string, now time.Time) (Account, error) {
	if password == "" {
		return Account{}, fmt.Errorf("typo3 backend: sign in: %w", ErrBadCredentials)
	}
	rows, err := r.db.QueryContext(ctx,
		"SELECT password, "+accountColumns+" FROM be_users WHERE username = ? AND deleted = 0 ORDER BY uid LIMIT 2",
		username)
	if err != nil {
		return Account{}, fmt.Errorf("typo3 backend: sign in: read be_users: %w", err)
	}
	var found []accountRow
	var hash string
	for rows.Next() {
		var a accountRow
		if err := rows.Scan(append([]any{&hash}, a.dest()...)...); err != nil {
			_ = rows.Close()
			return Account{}, fmt.Errorf("typo3 backend: sign in: read be_users: %w", err)
		}
		found = append(found, a)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return Account{}, fmt.Errorf("typo3 backend: sign in: read be_users: %w", err)
	}
	switch len(found) {
	case 0:
		_, _ = passwords.Verify(dummyHash, password)
		return Account{}, fmt.Errorf("typo3 backend: sign in: %w", ErrBadCredentials)
	case 2:
		_, _ = passwords.Verify(dummyHash, password)
		return Account{}, fmt.Errorf("typo3 backend: sign in: be_users uids %d and %d: %w", found[0].UID, found[1].UID, ErrAmbiguous)
	}
	ok, err := passwords.Verify(hash, password)
	if err != nil {
		return Account{}, fmt.Errorf("typo3 backend: sign in: be_users uid %d: %w: %w", found[0].UID, ErrHash, err)
	}
	if !ok {
		return Account{}, fmt.Errorf("typo3 backend: sign in: %w", ErrBadCredentials)
	}
	return r.eligible(ctx, found[0], now)
}

// Account returns the account with this uid if it may use runsdesk at now, for re-checking a
// session: SignIn's checks without the password. A refusal wraps ErrNotFound (no be_users row
// with this uid and deleted = 0), ErrDisabled, ErrNotStarted, ErrExpired or ErrNoRole.
func (r *Reader) Account(ctx context.Context, uid int64, now time.Time) (Account, error) {
	var a accountRow
	err := r.db.QueryRowContext(ctx,
		"SELECT "+accountColumns+" FROM be_users WHERE uid = ? AND deleted = 0", uid).Scan(a.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, fmt.Errorf("typo3 backend: be_users uid %d: %w", uid, ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("typo3 backend: read be_users uid %d: %w", uid, err)
	}
	return r.eligible(ctx, a, now)
}

// Exists reports whether a be_users row with deleted = 0 has this username, compared as
// SignIn compares it (disabled and expired accounts count).
func (r *Reader) Exists(ctx context.Context, username string) (bool, error) {
	var exists bool
	err := r.db.QueryRowContext(ctx,
		"SELECT EXISTS (SELECT 1 FROM be_users WHERE username = ? AND deleted = 0)", username).Scan(&exists)
	if err != nil {
		return false, fmt.Errorf("typo3 backend: look up a username in be_users: %w", err)
	}
	return exists, nil
}

// eligible applies the account checks after the password: state, time window and role.
func (r *Reader) eligible(ctx context.Context, a accountRow, now time.Time) (Account, error) {
	var refusal error
	switch {
	case a.disabled:
		refusal = ErrDisabled
	case a.startTime != 0 && a.startTime > now.Unix():
		refusal = ErrNotStarted
	case a.endTime != 0 && a.endTime <= now.Unix():
		refusal = ErrExpired
	}
	if refusal != nil {
		return Account{}, fmt.Errorf("typo3 backend: be_users uid %d: %w", a.UID, refusal)
	}
	groups, err := r.groups(ctx)
	if err != nil {
		return Account{}, err
	}
	role, ok := roles.Resolve(r.mapping, groups, a.userGroups, a.Admin, r.adminsAs)
	if !ok {
		return Account{}, fmt.Errorf("typo3 backend: be_users uid %d: %w", a.UID, ErrNoRole)
	}
	a.Role = role
	return a.Account, nil
}

// groups reads every be_groups row that is not deleted.
func (r *Reader) groups(ctx context.Context) ([]roles.Group, error) {
	rows, err := r.db.QueryContext(ctx,
		"SELECT uid, title, COALESCE(subgroup, ''), hidden <> 0, deleted <> 0 FROM be_groups WHERE deleted = 0")
	if err != nil {
		return nil, fmt.Errorf("typo3 backend: read be_groups: %w", err)
	}
	var groups []roles.Group
	for rows.Next() {
		var g roles.Group
		if err := rows.Scan(&g.UID, &g.Title, &g.Subgroups, &g.Hidden, &g.Deleted); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("typo3 backend: read be_groups: %w", err)
		}
		groups = append(groups, g)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("typo3 backend: read be_groups: %w", err)
	}
	return groups, nil
}
