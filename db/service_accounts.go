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
// again. A duplicate name is ErrNameTaken; a bad name or scope is a *PolicyError.
func (s *ServiceAccounts) CreateToken(ctx context.Context, name string, scopes []string) (string, error) {
	if err := checkUsername(name); err != nil {
		return "", err
	}
	if err := checkScopes(scopes); err != nil {
		return "", err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("db: create token: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(secret)
	now := s.now().Unix()
	_, err := execRetrying(ctx, s.db, `INSERT INTO tx_runsdesk_service_account
		(name, token_hash, scopes, crdate, tstamp) VALUES (?, ?, ?, ?, ?)`,
		name, tokenHash(token), strings.Join(scopes, ","), now, now)
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
// runtime.ErrNotFound; other errors are store failures. It records lastused at most once a
// minute per account.
func (s *ServiceAccounts) ActorForToken(ctx context.Context, token string) (runtime.Actor, error) {
	if !strings.HasPrefix(token, TokenPrefix) || len(token) > 128 {
		return runtime.Actor{}, fmt.Errorf("db: token not recognised: %w", runtime.ErrNotFound)
	}
	want := tokenHash(token)
	var uid, lastUsed int64
	var name, stored, scopes string
	var disabled int
	err := s.db.QueryRowContext(ctx, `SELECT uid, name, token_hash, scopes, disabled, lastused
		FROM tx_runsdesk_service_account WHERE token_hash = ?`, want).
		Scan(&uid, &name, &stored, &scopes, &disabled, &lastUsed)
	if err != nil {
		return runtime.Actor{}, fmt.Errorf("db: token: %w", notFound(err))
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(want)) != 1 || disabled != 0 {
		return runtime.Actor{}, fmt.Errorf("db: token not usable: %w", runtime.ErrNotFound)
	}
	if now := s.now().Unix(); now-lastUsed >= lastUsedResolution {
		if _, err := execRetrying(ctx, s.db, `UPDATE tx_runsdesk_service_account SET lastused = ?
			WHERE uid = ? AND lastused < ?`, now, uid, now-lastUsedResolution+1); err != nil {
			return runtime.Actor{}, fmt.Errorf("db: token: record use: %w", err)
		}
	}
	return runtime.Actor{Name: name, Role: runtime.RoleService, Scopes: splitScopes(scopes)}, nil
}

// DisableToken disables service account name; its token stops working at once. An unknown
// name is an error wrapping runtime.ErrNotFound.
func (s *ServiceAccounts) DisableToken(ctx context.Context, name string) error {
	res, err := execRetrying(ctx, s.db, `UPDATE tx_runsdesk_service_account
		SET disabled = 1, tstamp = ? WHERE name = ?`, s.now().Unix(), name)
	if err != nil {
		return fmt.Errorf("db: disable token %q: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("db: disable token %q: %w", name, err)
	}
	if n != 1 {
		return fmt.Errorf("db: disable token %q: %w", name, runtime.ErrNotFound)
	}
	return nil
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func checkScopes(scopes []string) error {
	if len(scopes) == 0 {
		return &PolicyError{Reason: "A service account needs at least one scope."}
	}
	known := []string{runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel}
	for _, sc := range scopes {
		if !slices.Contains(known, sc) {
			return &PolicyError{Reason: fmt.Sprintf("Unknown scope %q: use run, read, approve or cancel.", sc)}
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
