package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LoginLimits are the sliding windows of LoginThrottle: at most AccountFailures failed
// sign-ins (or current-password checks) per account within AccountWindow, and IPFailures per client address within
// IPWindow.
type LoginLimits struct {
	AccountFailures int
	AccountWindow   time.Duration
	IPFailures      int
	IPWindow        time.Duration
}

// DefaultLoginLimits are 10 failures per account in 15 minutes and 100 per address in an hour.
func DefaultLoginLimits() LoginLimits {
	return LoginLimits{AccountFailures: 10, AccountWindow: 15 * time.Minute, IPFailures: 100, IPWindow: time.Hour}
}

// purgeBatch bounds how many expired rows one Fail deletes.
const purgeBatch = 500

// LoginThrottle counts failed sign-ins in tx_runsdesk_login_failure and refuses further
// attempts while a window is full. There is no hard lockout: each window slides, so attempts
// are allowed again as the oldest failures age out. An account is named by a key from Account
// or UserAccount, stored only as a hash. It is safe for concurrent use.
type LoginThrottle struct {
	db     *sql.DB
	limits LoginLimits
}

// NewLoginThrottle returns a LoginThrottle on sqlDB. Zero or negative fields of limits take
// their DefaultLoginLimits value.
func NewLoginThrottle(sqlDB *sql.DB, limits LoginLimits) *LoginThrottle {
	d := DefaultLoginLimits()
	if limits.AccountFailures <= 0 {
		limits.AccountFailures = d.AccountFailures
	}
	if limits.AccountWindow <= 0 {
		limits.AccountWindow = d.AccountWindow
	}
	if limits.IPFailures <= 0 {
		limits.IPFailures = d.IPFailures
	}
	if limits.IPWindow <= 0 {
		limits.IPWindow = d.IPWindow
	}
	return &LoginThrottle{db: sqlDB, limits: limits}
}

// Account returns the throttle key of a sign-in attempt as username: the account's uid when an
// undeleted user has that CanonicalUsername, else the canonical name, so every spelling of a
// name shares one allowance. A store failure is an error.
func (t *LoginThrottle) Account(ctx context.Context, username string) (string, error) {
	name := CanonicalUsername(username)
	var uid int64
	err := t.db.QueryRowContext(ctx, `SELECT uid FROM be_users WHERE username = ? AND deleted = 0`, name).Scan(&uid)
	if errors.Is(err, sql.ErrNoRows) {
		return "name:" + name, nil
	}
	if err != nil {
		return "", fmt.Errorf("db: login throttle account: %w", err)
	}
	return t.UserAccount(uid), nil
}

// UserAccount returns the throttle key of user uid, the same key Account returns for their
// username.
func (t *LoginThrottle) UserAccount(uid int64) string {
	return "uid:" + strconv.FormatInt(uid, 10)
}

// CodeAccount returns the throttle key of user uid's second sign-in step (one-time and
// recovery codes): its own allowance, so a right password does not forget wrong codes.
func (t *LoginThrottle) CodeAccount(uid int64) string {
	return "code:" + t.UserAccount(uid)
}

// Blocked reports how long an attempt for account (a key from Account or UserAccount) from ip
// must wait at time now: 0 when it may proceed, otherwise the time until the fullest window
// has room again (at least 1 s).
func (t *LoginThrottle) Blocked(ctx context.Context, account, ip string, now time.Time) (time.Duration, error) {
	acc, err := t.waitFor(ctx, nthAccountFailure, accountKey(account), t.limits.AccountFailures, t.limits.AccountWindow, now)
	if err != nil {
		return 0, err
	}
	byIP, err := t.waitFor(ctx, nthIPFailure, ipKey(ip), t.limits.IPFailures, t.limits.IPWindow, now)
	if err != nil {
		return 0, err
	}
	return max(acc, byIP), nil
}

// Fail records a failed attempt for account from ip at time now, and purges a bounded batch
// of rows older than the longest window.
func (t *LoginThrottle) Fail(ctx context.Context, account, ip string, now time.Time) error {
	if _, err := execRetrying(ctx, t.db, `INSERT INTO tx_runsdesk_login_failure (crdate, account_hash, ip)
		VALUES (?, ?, ?)`, now.Unix(), accountKey(account), ipKey(ip)); err != nil {
		return fmt.Errorf("db: record login failure: %w", err)
	}
	cutoff := now.Add(-max(t.limits.AccountWindow, t.limits.IPWindow)).Unix()
	if _, err := execRetrying(ctx, t.db, `DELETE FROM tx_runsdesk_login_failure
		WHERE crdate < ? ORDER BY crdate LIMIT ?`, cutoff, purgeBatch); err != nil {
		return fmt.Errorf("db: purge login failures: %w", err)
	}
	return nil
}

// Succeed forgets the failed attempts of account (a person who signs in starts afresh); the
// per-address failures remain.
func (t *LoginThrottle) Succeed(ctx context.Context, account string) error {
	if _, err := execRetrying(ctx, t.db, `DELETE FROM tx_runsdesk_login_failure WHERE account_hash = ?`,
		accountKey(account)); err != nil {
		return fmt.Errorf("db: clear login failures: %w", err)
	}
	return nil
}

// The limit-th newest failure of one account or address, read through its (key, crdate) index.
const (
	nthAccountFailure = `SELECT crdate FROM tx_runsdesk_login_failure
		WHERE account_hash = ? ORDER BY crdate DESC LIMIT 1 OFFSET ?`
	nthIPFailure = `SELECT crdate FROM tx_runsdesk_login_failure
		WHERE ip = ? ORDER BY crdate DESC LIMIT 1 OFFSET ?`
)

// waitFor returns how long until key has fewer than limit failures within window, using query
// (nthAccountFailure or nthIPFailure).
func (t *LoginThrottle) waitFor(ctx context.Context, query, key string, limit int, window time.Duration, now time.Time) (time.Duration, error) {
	var at int64
	err := t.db.QueryRowContext(ctx, query, key, limit-1).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("db: login throttle: %w", err)
	}
	until := time.Unix(at, 0).Add(window)
	if !until.After(now) {
		return 0, nil
	}
	return max(until.Sub(now).Round(time.Second), time.Second), nil
}

// accountKey hashes account, so a password typed into the username field is never stored.
func accountKey(account string) string {
	sum := sha256.Sum256([]byte(account))
	return hex.EncodeToString(sum[:])
}

// ipKey keeps the characters of an IPv4 or IPv6 text address and cuts it to the column width.
func ipKey(ip string) string {
	k := strings.Map(func(r rune) rune {
		if r == '.' || r == ':' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F') {
			return r
		}
		return -1
	}, ip)
	if len(k) > auditIPLen {
		k = k[:auditIPLen]
	}
	return k
}
