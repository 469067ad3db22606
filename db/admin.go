package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/seal"
)

// Admin is the admin.Store of the people and service accounts on one pool: what the CLI's
// `user` and `token` commands and the /admin pages change through admin.Desk.
type Admin struct {
	db       *sql.DB
	accounts *Accounts
	tokens   *ServiceAccounts
	factors  *Factors
	throttle *LoginThrottle
	audit    *Audit
}

// NewAdmin returns Admin on pool; keys open the second factors (nil: none can be enrolled);
// now defaults to time.Now; opts set up its Accounts as NewAccounts's do.
func NewAdmin(pool *sql.DB, keys *seal.Keyring, now func() time.Time, opts ...AccountsOption) (*Admin, error) {
	accounts, err := NewAccounts(pool, now, 0, opts...)
	if err != nil {
		return nil, err
	}
	return &Admin{db: pool, accounts: accounts, tokens: NewServiceAccounts(pool, now), factors: NewFactors(pool, keys, now),
		throttle: NewLoginThrottle(pool, DefaultLoginLimits()), audit: NewAudit(pool, now)}, nil
}

// person is u as the admin pages show them.
func person(u User, mfa bool) admin.Person {
	return admin.Person{UID: u.UID, Username: u.Username, Role: u.Role, Email: u.Email, Disabled: u.Disabled,
		MustChangePassword: u.PasswordChangeRequired, MFA: mfa, LastLogin: u.LastLogin, Created: u.Created}
}

// People returns every undeleted person by username, with whether they have a confirmed
// second factor.
func (a *Admin) People(ctx context.Context) ([]admin.Person, error) {
	users, err := a.accounts.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	enrolled, err := a.enrolled(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]admin.Person, 0, len(users))
	for _, u := range users {
		out = append(out, person(u, enrolled[u.UID]))
	}
	return out, nil
}

// enrolled returns the uids of the people with a confirmed second factor.
func (a *Admin) enrolled(ctx context.Context) (map[int64]bool, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT be_user FROM tx_runsdesk_totp WHERE confirmed = 1`)
	if err != nil {
		return nil, fmt.Errorf("db: second factors: %w", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var uid int64
		if err := rows.Scan(&uid); err != nil {
			return nil, fmt.Errorf("db: second factors: %w", err)
		}
		out[uid] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: second factors: %w", err)
	}
	return out, nil
}

// Person returns the undeleted person named username (compared as sign-in compares it), with
// the issuer of the outside identity they sign in with.
func (a *Admin) Person(ctx context.Context, username string) (admin.Person, error) {
	u, err := a.accounts.AccountByUsername(ctx, username)
	if err != nil {
		return admin.Person{}, err
	}
	mfa, err := a.factors.Enrolled(ctx, u.UID)
	if err != nil {
		return admin.Person{}, err
	}
	p := person(u, mfa)
	link, err := NewIdentities(a.db, nil).Linked(ctx, u.UID)
	switch {
	case err == nil:
		p.Issuer = link.Issuer
	case !errors.Is(err, runtime.ErrNotFound):
		return admin.Person{}, err
	}
	return p, nil
}

// AddPerson creates p with its audit row; a username in use wraps admin.ErrTaken.
func (a *Admin) AddPerson(ctx context.Context, p admin.NewPerson, audit func(uid int64, username string) *runtime.AuditRecord) (int64, error) {
	uid, err := a.accounts.createUser(ctx, p.Username, p.Password, p.Role, p.Email, audit)
	if errors.Is(err, ErrUsernameTaken) {
		return 0, fmt.Errorf("%w (%w)", err, admin.ErrTaken)
	}
	return uid, err
}

// DisablePerson is Accounts.DisableUser.
func (a *Admin) DisablePerson(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.accounts.DisableUser(ctx, uid, audit)
}

// EnablePerson is Accounts.EnableUser.
func (a *Admin) EnablePerson(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.accounts.EnableUser(ctx, uid, audit)
}

// SetRole is Accounts.SetRole.
func (a *Admin) SetRole(ctx context.Context, uid int64, role runtime.Role, audit *runtime.AuditRecord) error {
	return a.accounts.SetRole(ctx, uid, role, audit)
}

// ResetPassword is Accounts.ResetPassword, then forgets the person's failed sign-ins.
func (a *Admin) ResetPassword(ctx context.Context, uid int64, password string, audit *runtime.AuditRecord) error {
	if err := a.accounts.ResetPassword(ctx, uid, password, audit); err != nil {
		return err
	}
	if err := a.throttle.Succeed(ctx, a.throttle.UserAccount(uid)); err != nil {
		return fmt.Errorf("password reset, but their failed sign-ins were not forgotten (they may have to wait): %w", err)
	}
	return nil
}

// EndSessions is Accounts.EndSessions.
func (a *Admin) EndSessions(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.accounts.EndSessions(ctx, uid, audit)
}

// ResetFactor is Factors.Reset.
func (a *Admin) ResetFactor(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	return a.factors.Reset(ctx, uid, audit)
}

// SetEmail is Accounts.SetEmail.
func (a *Admin) SetEmail(ctx context.Context, uid int64, email string, audit *runtime.AuditRecord) error {
	return a.accounts.SetEmail(ctx, uid, email, audit)
}

// ServiceAccounts returns every service account by name.
func (a *Admin) ServiceAccounts(ctx context.Context) ([]admin.ServiceAccount, error) {
	return a.tokens.ListTokens(ctx)
}

// ServiceAccount returns service account name.
func (a *Admin) ServiceAccount(ctx context.Context, name string) (admin.ServiceAccount, error) {
	return a.tokens.ServiceAccountByName(ctx, name)
}

// CreateToken creates t with its audit row; a name in use wraps admin.ErrTaken.
func (a *Admin) CreateToken(ctx context.Context, t admin.NewToken, audit *runtime.AuditRecord) (string, error) {
	token, err := a.tokens.createToken(ctx, t.Name, t.Scopes, t.Expires, audit)
	if errors.Is(err, ErrNameTaken) {
		return "", fmt.Errorf("%w (%w)", err, admin.ErrTaken)
	}
	return token, err
}

// RevokeToken is ServiceAccounts.DisableToken.
func (a *Admin) RevokeToken(ctx context.Context, name string, audit *runtime.AuditRecord) error {
	return a.tokens.DisableToken(ctx, name, audit)
}

// RotateToken is ServiceAccounts.RotateToken.
func (a *Admin) RotateToken(ctx context.Context, name string, audit *runtime.AuditRecord) (string, error) {
	return a.tokens.RotateToken(ctx, name, audit)
}

// Record is Audit.Record.
func (a *Admin) Record(ctx context.Context, actor runtime.Actor, ip, action, runUUID, outcome, reason string) error {
	return a.audit.Record(ctx, actor, ip, action, runUUID, outcome, reason)
}
