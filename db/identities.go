package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
)

// maxRealName is be_users.realName's length.
const maxRealName = 80

// ErrExternalAccount is returned by ResetPassword for a person who signs in with an identity
// provider: a local password would bypass it.
var ErrExternalAccount = &PolicyError{Reason: "This account signs in with the identity provider; it has no password to reset."}

// ExternalPerson is who an identity provider vouched for at a sign-in or a later check.
type ExternalPerson struct {
	Issuer, Subject string
	// Username is the provider's preferred_username, the base of a new account's username.
	Username string
	Name     string
	// Email is stored on a new account only when EmailVerified.
	Email         string
	EmailVerified bool
	Role          runtime.Role
	Tokens        ProviderTokens
}

// ProviderTokens are the provider's tokens of a person, kept server-side only.
type ProviderTokens struct {
	Access, Refresh string
	Expiry          time.Time
}

// Link is a person's identity at a provider and the tokens stored for it.
type Link struct {
	Issuer, Subject string
	Tokens          ProviderTokens
}

// Identities links people (be_users) to their identity provider's accounts
// (tx_runsdesk_identity), keyed by (issuer, subject) and never by e-mail. It is safe for
// concurrent use.
type Identities struct {
	db  *sql.DB
	now func() time.Time
}

// NewIdentities returns Identities on pool; now defaults to time.Now.
func NewIdentities(pool *sql.DB, now func() time.Time) *Identities {
	if now == nil {
		now = time.Now
	}
	return &Identities{db: pool, now: now}
}

// SignIn returns the actor and session epoch of the person p names, creating their account at
// their first sign-in (a unique username from p.Username, no password; audited) and otherwise syncing
// their role to p.Role; a changed role ends their other sessions and is audited (from ip). A
// disabled or deleted account is an error wrapping runtime.ErrNotFound.
func (s *Identities) SignIn(ctx context.Context, p ExternalPerson, ip string) (runtime.Actor, int64, error) {
	if err := checkPersonRole(p.Role); err != nil {
		return runtime.Actor{}, 0, err
	}
	var u User
	err := inTx(ctx, s.db, func(tx *sql.Tx) error {
		now := s.now().Unix()
		var uid int64
		err := tx.QueryRowContext(ctx, `SELECT be_user FROM tx_runsdesk_identity WHERE issuer = ? AND subject = ? FOR UPDATE`,
			p.Issuer, p.Subject).Scan(&uid)
		if errors.Is(err, sql.ErrNoRows) {
			uid, err = s.create(ctx, tx, p, ip, now)
		}
		if err != nil {
			return err
		}
		if u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM be_users WHERE uid = ? AND deleted = 0 FOR UPDATE`, uid)); err != nil {
			return notFound(err)
		}
		if u.Disabled {
			return runtime.ErrNotFound
		}
		if u.Role != p.Role {
			if err := s.syncRole(ctx, tx, &u, p.Role, ip, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE be_users SET lastlogin = ? WHERE uid = ?`, now, uid); err != nil {
			return err
		}
		return s.saveTokens(ctx, tx, uid, p.Tokens, now)
	})
	if err != nil {
		return runtime.Actor{}, 0, fmt.Errorf("db: sign in %s at %s: %w", p.Subject, p.Issuer, err)
	}
	return u.Actor(), u.SessionEpoch, nil
}

// IssuerOf returns the issuer of the identity the person named username (compared as sign-in
// compares it) signs in with, "" for one who signs in with a password of runsdesk's, or an
// error wrapping runtime.ErrNotFound when no undeleted person has the name.
func (s *Identities) IssuerOf(ctx context.Context, username string) (string, error) {
	var issuer string
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(i.issuer, '') FROM be_users u
		LEFT JOIN tx_runsdesk_identity i ON i.be_user = u.uid WHERE u.username = ? AND u.deleted = 0`,
		CanonicalUsername(username)).Scan(&issuer)
	if err != nil {
		return "", fmt.Errorf("db: identity of %q: %w", username, notFound(err))
	}
	return issuer, nil
}

// Linked returns the identity person uid signs in with, or an error wrapping
// runtime.ErrNotFound when they sign in with a password.
func (s *Identities) Linked(ctx context.Context, uid int64) (Link, error) {
	var l Link
	var expiry int64
	err := s.db.QueryRowContext(ctx, `SELECT issuer, subject, access_token, refresh_token, token_expiry
		FROM tx_runsdesk_identity WHERE be_user = ?`, uid).
		Scan(&l.Issuer, &l.Subject, &l.Tokens.Access, &l.Tokens.Refresh, &expiry)
	if err != nil {
		return Link{}, fmt.Errorf("db: identity of user %d: %w", uid, notFound(err))
	}
	if expiry > 0 {
		l.Tokens.Expiry = time.Unix(expiry, 0)
	}
	return l, nil
}

// Vouched records a later check of person uid: the provider still answers for them with role,
// and these are the tokens to keep. A changed role is synced as at SignIn (ending their
// sessions, audited from ip).
func (s *Identities) Vouched(ctx context.Context, uid int64, role runtime.Role, tokens ProviderTokens, ip string) error {
	if err := checkPersonRole(role); err != nil {
		return err
	}
	err := inTx(ctx, s.db, func(tx *sql.Tx) error {
		now := s.now().Unix()
		u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM be_users WHERE uid = ? AND deleted = 0 FOR UPDATE`, uid))
		if err != nil {
			return notFound(err)
		}
		if u.Role != role {
			if err := s.syncRole(ctx, tx, &u, role, ip, now); err != nil {
				return err
			}
		}
		return s.saveTokens(ctx, tx, uid, tokens, now)
	})
	if err != nil {
		return fmt.Errorf("db: vouched for user %d: %w", uid, err)
	}
	return nil
}

// create adds the be_users row and the identity row of p's first sign-in, and its audit row.
func (s *Identities) create(ctx context.Context, tx *sql.Tx, p ExternalPerson, ip string, now int64) (int64, error) {
	email := ""
	if p.EmailVerified {
		email = p.Email
	}
	base := usernameBase(p.Username)
	for n := 1; n <= 100; n++ {
		name := base
		if n > 1 {
			suffix := "-" + strconv.Itoa(n)
			name = base[:min(len(base), MaxUsernameLength-len(suffix))] + suffix
		}
		res, err := tx.ExecContext(ctx, `INSERT IGNORE INTO be_users (username, password, role, admin, realName, email, crdate, tstamp)
			VALUES (?, '', ?, ?, ?, ?, ?, ?)`, name, string(p.Role), adminFlag(p.Role), truncateRunes(p.Name, maxRealName), email, now, now)
		if err != nil {
			return 0, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		uid, err := res.LastInsertId()
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tx_runsdesk_identity (be_user, issuer, subject, access_token, refresh_token, crdate, tstamp)
			VALUES (?, ?, ?, '', '', ?, ?)`, uid, p.Issuer, p.Subject, now, now); err != nil {
			return 0, err
		}
		actor := runtime.Actor{UserUID: uid, Name: name, Role: p.Role}
		return uid, insertAudit(ctx, tx, now, actor, ip, "account_created", "", "success", firstSignIn(p.Issuer)+" as "+string(p.Role))
	}
	return 0, fmt.Errorf("no free username for %q", base)
}

// firstSignIn is how the audit names a person's first sign-in with an identity of issuer.
func firstSignIn(issuer string) string {
	if issuer == admin.TYPO3Issuer {
		return "first sign-in with a TYPO3 backend account"
	}
	return "first single sign-on"
}

// syncRole sets u's role, ends their sessions and writes the audit row of the change.
func (s *Identities) syncRole(ctx context.Context, tx *sql.Tx, u *User, role runtime.Role, ip string, now int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE be_users SET role = ?, admin = ?, session_epoch = session_epoch + 1, tstamp = ? WHERE uid = ?`,
		string(role), adminFlag(role), now, u.UID); err != nil {
		return err
	}
	reason := "role " + string(u.Role) + " → " + string(role) + " from the groups the person's identity gives"
	u.Role, u.SessionEpoch = role, u.SessionEpoch+1
	return insertAudit(ctx, tx, now, u.Actor(), ip, "role_synced", "", "success", reason)
}

func (s *Identities) saveTokens(ctx context.Context, tx *sql.Tx, uid int64, t ProviderTokens, now int64) error {
	var expiry int64
	if !t.Expiry.IsZero() {
		expiry = max(t.Expiry.Unix(), 0)
	}
	_, err := tx.ExecContext(ctx, `UPDATE tx_runsdesk_identity SET access_token = ?, refresh_token = ?, token_expiry = ?, checked_at = ?, tstamp = ?
		WHERE be_user = ?`, t.Access, t.Refresh, expiry, now, now, uid)
	return err
}

// usernameBase turns a provider's preferred_username into the safe username set: canonical,
// other characters replaced by "-", at most MaxUsernameLength; "user" when nothing is left.
func usernameBase(preferred string) string {
	c := CanonicalUsername(preferred)
	c = strings.Map(func(r rune) rune {
		if usernameSafe(r) {
			return r
		}
		return '-'
	}, c)
	c = strings.Trim(c, "-")
	if len(c) > MaxUsernameLength {
		c = c[:MaxUsernameLength]
	}
	if c == "" {
		return "user"
	}
	return c
}

// truncateRunes cuts s to at most n characters.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// isExternal reports whether person uid signs in with an identity provider.
func isExternal(ctx context.Context, q execer, uid int64) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM tx_runsdesk_identity WHERE be_user = ?`, uid).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
