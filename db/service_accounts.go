package db

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
)

// TokenPrefix starts every service-account token, so secret scanners and people recognise one.
const TokenPrefix = "rdsk_"

// lastUsedResolution bounds how often ActorForToken writes lastused for one account.
const lastUsedResolution = 60

// ErrNameTaken is returned by CreateToken when a service account with that name exists.
var ErrNameTaken = errors.New("service account name already taken")

// ServiceAccounts manages the machine clients of the JSON API (tx_runsdesk_service_account).
// Only the SHA-256 of a token is stored; the token itself is shown once by CreateToken. It is
// safe for concurrent use.
type ServiceAccounts struct {
	db  *sql.DB
	now func() time.Time
}

// NewServiceAccounts returns ServiceAccounts on sqlDB; now defaults to time.Now.
func NewServiceAccounts(sqlDB *sql.DB, now func() time.Time) *ServiceAccounts {
	if now == nil {
		now = time.Now
	}
	return &ServiceAccounts{db: sqlDB, now: now}
}

// CreateToken creates service account name with scopes (each one of run, read, approve,
// cancel; at least one) and returns its token, which is never stored and cannot be shown
// again; the token does not expire. A duplicate name is ErrNameTaken; a bad name or scope is a
// *PolicyError.
func (s *ServiceAccounts) CreateToken(ctx context.Context, name string, scopes []string) (string, error) {
	return s.CreateTokenUntil(ctx, name, scopes, time.Time{})
}

// CreateTokenUntil is CreateToken of a token that stops working at expires (the zero time:
// never); an expiry not in the future is a *PolicyError.
func (s *ServiceAccounts) CreateTokenUntil(ctx context.Context, name string, scopes []string, expires time.Time) (string, error) {
	return s.createToken(ctx, name, scopes, expires, nil)
}

// createToken is CreateTokenUntil writing audit's row, when it is not nil, in the same
// transaction.
func (s *ServiceAccounts) createToken(ctx context.Context, name string, scopes []string, expires time.Time, audit *runtime.AuditRecord) (string, error) {
	if err := checkUsername(name); err != nil {
		return "", err
	}
	if err := checkScopes(scopes); err != nil {
		return "", err
	}
	var expiresAt, lifetime int64
	if !expires.IsZero() {
		expiresAt = expires.Unix()
		if lifetime = expiresAt - s.now().Unix(); lifetime <= 0 {
			return "", &PolicyError{Reason: "A token's expiry must be in the future."}
		}
	}
	token, err := newToken()
	if err != nil {
		return "", fmt.Errorf("db: create token: %w", err)
	}
	now := s.now().Unix()
	err = inTx(ctx, s.db, func(tx *sql.Tx) error {
		return updateOne(ctx, tx, `INSERT INTO tx_runsdesk_service_account
			(name, token_hash, scopes, crdate, tstamp, expires_at, lifetime) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			[]any{name, tokenHash(token), strings.Join(scopes, ","), now, now, expiresAt, lifetime}, audit, now)
	})
	if isMySQLError(err, errDuplicateKey) {
		return "", fmt.Errorf("db: create token %q: %w", name, ErrNameTaken)
	}
	if err != nil {
		return "", fmt.Errorf("db: create token: %w", err)
	}
	return token, nil
}

// ActorForToken returns the service-account actor (Role service, its name and scopes) the
// token belongs to. An unknown, malformed or disabled token is an error wrapping
// runtime.ErrNotFound, an expired one runtime.ErrTokenExpired; other errors are store failures.
// It records lastused at most once a minute per account.
func (s *ServiceAccounts) ActorForToken(ctx context.Context, token string) (runtime.Actor, error) {
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 128 {
		return runtime.Actor{}, fmt.Errorf("db: token not recognised: %w", runtime.ErrNotFound)
	}
	want := tokenHash(token)
	var uid, lastUsed, expiresAt int64
	var name, stored, scopes string
	var disabled int
	err := s.db.QueryRowContext(ctx, `SELECT uid, name, token_hash, scopes, disabled, lastused, expires_at
		FROM tx_runsdesk_service_account WHERE token_hash = ?`, want).
		Scan(&uid, &name, &stored, &scopes, &disabled, &lastUsed, &expiresAt)
	if err != nil {
		return runtime.Actor{}, fmt.Errorf("db: token: %w", notFound(err))
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(want)) != 1 || disabled != 0 {
		return runtime.Actor{}, fmt.Errorf("db: token not usable: %w", runtime.ErrNotFound)
	}
	now := s.now().Unix()
	if expiresAt > 0 && now >= expiresAt {
		return runtime.Actor{}, fmt.Errorf("db: token of service account %q: %w", name, runtime.ErrTokenExpired)
	}
	if now-lastUsed >= lastUsedResolution {
		if _, err := execRetrying(ctx, s.db, `UPDATE tx_runsdesk_service_account SET lastused = ?
			WHERE uid = ? AND lastused < ?`, now, uid, now-lastUsedResolution+1); err != nil {
			return runtime.Actor{}, fmt.Errorf("db: token: record use: %w", err)
		}
	}
	return runtime.Actor{Name: name, Role: runtime.RoleService, Scopes: splitScopes(scopes), TokenExpires: expiresAt}, nil
}

// ServiceAccount is one row of tx_runsdesk_service_account without its token hash, as the
// admin operations name it.
type ServiceAccount = admin.ServiceAccount

// serviceAccountColumns are the columns scanServiceAccount reads, in its order.
const serviceAccountColumns = `name, scopes, crdate, lastused, expires_at, disabled`

// scanServiceAccount reads one row of serviceAccountColumns.
func scanServiceAccount(row interface{ Scan(...any) error }) (ServiceAccount, error) {
	var sa ServiceAccount
	var scopes string
	var disabled int
	if err := row.Scan(&sa.Name, &scopes, &sa.Created, &sa.LastUsed, &sa.Expires, &disabled); err != nil {
		return ServiceAccount{}, err
	}
	sa.Scopes, sa.Disabled = splitScopes(scopes), disabled != 0
	return sa, nil
}

// ServiceAccountByName returns service account name, or an error wrapping runtime.ErrNotFound
// when there is none.
func (s *ServiceAccounts) ServiceAccountByName(ctx context.Context, name string) (ServiceAccount, error) {
	sa, err := scanServiceAccount(s.db.QueryRowContext(ctx, `SELECT `+serviceAccountColumns+`
		FROM tx_runsdesk_service_account WHERE name = ?`, name))
	if err != nil {
		return ServiceAccount{}, fmt.Errorf("db: service account %q: %w", name, notFound(err))
	}
	return sa, nil
}

// ListTokens returns every service account, ordered by name.
func (s *ServiceAccounts) ListTokens(ctx context.Context) ([]ServiceAccount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+serviceAccountColumns+`
		FROM tx_runsdesk_service_account ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("db: list tokens: %w", err)
	}
	defer rows.Close()
	var out []ServiceAccount
	for rows.Next() {
		sa, err := scanServiceAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("db: list tokens: %w", err)
		}
		out = append(out, sa)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list tokens: %w", err)
	}
	return out, nil
}

// DisableToken disables service account name; its token stops working at once. An unknown or
// already disabled name is an error wrapping runtime.ErrNotFound. When audit is not nil its row
// is written in the same transaction.
func (s *ServiceAccounts) DisableToken(ctx context.Context, name string, audit *runtime.AuditRecord) error {
	return s.update(ctx, "disable token", name, audit, `UPDATE tx_runsdesk_service_account
		SET disabled = 1, tstamp = ? WHERE name = ? AND disabled = 0`, s.now().Unix(), name)
}

// RotateToken gives service account name a new token and returns it (shown once, never
// stored); the old token stops working at once, a disabled account is enabled again, and a
// token created with an expiry gets the same lifetime from now. An unknown name is an error
// wrapping runtime.ErrNotFound. When audit is not nil its row is written in the same
// transaction.
func (s *ServiceAccounts) RotateToken(ctx context.Context, name string, audit *runtime.AuditRecord) (string, error) {
	token, err := newToken()
	if err != nil {
		return "", fmt.Errorf("db: rotate token %q: %w", name, err)
	}
	now := s.now().Unix()
	if err := s.update(ctx, "rotate token", name, audit, `UPDATE tx_runsdesk_service_account
		SET token_hash = ?, disabled = 0, tstamp = ?, expires_at = IF(lifetime > 0, ? + lifetime, 0) WHERE name = ?`,
		tokenHash(token), now, now, name); err != nil {
		return "", err
	}
	return token, nil
}

// update runs query, which must change exactly the row of name (else runtime.ErrNotFound and
// nothing is written), and audit's row when it is not nil, in one transaction.
func (s *ServiceAccounts) update(ctx context.Context, op, name string, audit *runtime.AuditRecord, query string, args ...any) error {
	if err := inTx(ctx, s.db, func(tx *sql.Tx) error {
		return updateOne(ctx, tx, query, args, audit, s.now().UTC().Unix())
	}); err != nil {
		return fmt.Errorf("db: %s %q: %w", op, name, err)
	}
	return nil
}

// newToken returns a fresh token: TokenPrefix and 32 random bytes, base64url-encoded.
func newToken() (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(secret), nil
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func checkScopes(scopes []string) error {
	if len(scopes) == 0 {
		return &PolicyError{Reason: "A service account needs at least one scope."}
	}
	for _, sc := range scopes {
		if !slices.Contains(runtime.Scopes(), sc) {
			return &PolicyError{Reason: fmt.Sprintf("Unknown scope %q: use %s.", sc, strings.Join(runtime.Scopes(), ", "))}
		}
	}
	return nil
}

func splitScopes(s string) []string {
	var out []string
	for _, sc := range strings.Split(s, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			out = append(out, sc)
		}
	}
	return out
}
