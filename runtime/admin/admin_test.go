package admin

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":           {},
		"90d":        now.Add(90 * 24 * time.Hour),
		"12h":        now.Add(12 * time.Hour),
		"1d12h":      now.Add(36 * time.Hour),
		"2030-01-31": time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC),
		"2026-12-06": time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := ParseExpiry(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0d", "-5h", "soon", "2026-12-05", "2001-01-01", "2030-02-30"} {
		var r *Refusal
		if _, err := ParseExpiry(in, now); !errors.As(err, &r) || r.Field != "expires" {
			t.Errorf("ParseExpiry(%q): %v, want a refusal of the expiry", in, err)
		}
	}
}

func TestParseScopes(t *testing.T) {
	if got, err := ParseScopes(" run, read,run ,,cancel"); err != nil || !slices.Equal(got, []string{"run", "read", "cancel"}) {
		t.Errorf("ParseScopes = %q, %v", got, err)
	}
	for _, in := range []string{"", " , ", "run,admin"} {
		var r *Refusal
		if _, err := ParseScopes(in); !errors.As(err, &r) || r.Field != "scopes" {
			t.Errorf("ParseScopes(%q): %v, want a refusal of the scopes", in, err)
		}
	}
}

func TestChecks(t *testing.T) {
	for _, role := range []string{"admin", "reviewer", "support"} {
		if err := CheckRole(role); err != nil {
			t.Errorf("CheckRole(%q): %v", role, err)
		}
	}
	for _, role := range []string{"", "service", "system", "Admin"} {
		if CheckRole(role) == nil {
			t.Errorf("CheckRole(%q) accepted", role)
		}
	}
	for _, email := range []string{"", "ann@example.com"} {
		if err := CheckEmail(email); err != nil {
			t.Errorf("CheckEmail(%q): %v", email, err)
		}
	}
	for _, email := range []string{"ann", "Ann <ann@example.com>", "ann@example.com "} {
		if CheckEmail(email) == nil {
			t.Errorf("CheckEmail(%q) accepted", email)
		}
	}
	a, err := GeneratePassword()
	b, _ := GeneratePassword()
	if err != nil || len(a) != 32 || a == b {
		t.Errorf("GeneratePassword: %q, %q, %v", a, b, err)
	}
}
