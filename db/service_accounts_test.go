package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

func TestServiceAccountTokens(t *testing.T) {
	pool := accountsPool(t)
	now := time.Unix(1_800_000_000, 0)
	s := NewServiceAccounts(pool, func() time.Time { return now })
	ctx := context.Background()

	token, err := s.CreateToken(ctx, "ci-bot", []string{runtime.ScopeRun, runtime.ScopeRead})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	if !strings.HasPrefix(token, TokenPrefix) || len(token) < len(TokenPrefix)+43 {
		t.Errorf("token %q: want prefix %q and 32 random bytes", token, TokenPrefix)
	}
	var stored string
	if err := pool.QueryRow(`SELECT token_hash FROM tx_runsdesk_service_account WHERE name = 'ci-bot'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(token))
	if stored != hex.EncodeToString(sum[:]) || strings.Contains(stored, token) {
		t.Errorf("stored %q, want the hex SHA-256 of the token only", stored)
	}

	actor, err := s.ActorForToken(ctx, token)
	if err != nil {
		t.Fatalf("ActorForToken: %v", err)
	}
	if actor.Role != runtime.RoleService || actor.Name != "ci-bot" || actor.UserUID != 0 ||
		!slices.Equal(actor.Scopes, []string{"run", "read"}) {
		t.Errorf("actor = %+v", actor)
	}
	var lastUsed int64
	if err := pool.QueryRow(`SELECT lastused FROM tx_runsdesk_service_account WHERE name = 'ci-bot'`).Scan(&lastUsed); err != nil || lastUsed != now.Unix() {
		t.Errorf("lastused = %d (%v), want %d", lastUsed, err, now.Unix())
	}

	for _, bad := range []string{"", "rdsk_", token + "x", strings.TrimPrefix(token, TokenPrefix), strings.Repeat("a", 500)} {
		if _, err := s.ActorForToken(ctx, bad); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("ActorForToken(%.20q): got %v, want runtime.ErrNotFound", bad, err)
		}
	}
	if _, err := s.CreateToken(ctx, "ci-bot", []string{"read"}); !errors.Is(err, ErrNameTaken) {
		t.Errorf("duplicate name: got %v, want ErrNameTaken", err)
	}
	var pe *PolicyError
	if _, err := s.CreateToken(ctx, "other", []string{"admin"}); !errors.As(err, &pe) {
		t.Errorf("unknown scope: got %v, want *PolicyError", err)
	}
	if _, err := s.CreateToken(ctx, "other", nil); !errors.As(err, &pe) {
		t.Errorf("no scope: got %v, want *PolicyError", err)
	}

	if err := s.DisableToken(ctx, "ci-bot", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ActorForToken(ctx, token); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("disabled token: got %v, want runtime.ErrNotFound", err)
	}
	if err := s.DisableToken(ctx, "nobody", nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("DisableToken(unknown): got %v, want runtime.ErrNotFound", err)
	}
}
