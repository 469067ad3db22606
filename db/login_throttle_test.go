package db

import (
	"context"
	"testing"
	"time"
)

func TestLoginThrottleSlidingWindows(t *testing.T) {
	pool := accountsPool(t)
	th := NewLoginThrottle(pool, LoginLimits{AccountFailures: 3, AccountWindow: 15 * time.Minute, IPFailures: 5, IPWindow: time.Hour})
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	account := func(user string) string {
		t.Helper()
		key, err := th.Account(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	blocked := func(user, ip string, at time.Time) time.Duration {
		t.Helper()
		d, err := th.Blocked(ctx, account(user), ip, at)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	fail := func(user, ip string, at time.Time) {
		t.Helper()
		if err := th.Fail(ctx, account(user), ip, at); err != nil {
			t.Fatal(err)
		}
	}

	for i := range 3 {
		if d := blocked("Alice", "192.0.2.1", t0); d != 0 {
			t.Fatalf("attempt %d blocked for %s, want allowed", i+1, d)
		}
		fail("Alice", "192.0.2.1", t0.Add(time.Duration(i)*time.Minute))
	}
	if d := blocked(" alice ", "192.0.2.9", t0.Add(3*time.Minute)); d != 12*time.Minute {
		t.Errorf("4th attempt (any case, other address): blocked %s, want 12m (until the oldest failure is 15m old)", d)
	}
	if d := blocked("alice", "192.0.2.9", t0.Add(15*time.Minute)); d != 0 {
		t.Errorf("after the oldest failure aged out: blocked %s, want 0 (sliding window)", d)
	}
	if d := blocked("bob", "192.0.2.1", t0.Add(3*time.Minute)); d != 0 {
		t.Errorf("other account, 3 failures from its address: blocked %s, want 0", d)
	}

	fail("bob", "192.0.2.1", t0.Add(4*time.Minute))
	fail("carol", "192.0.2.1", t0.Add(5*time.Minute))
	if d := blocked("dave", "192.0.2.1", t0.Add(6*time.Minute)); d != 54*time.Minute {
		t.Errorf("6th attempt from one address: blocked %s, want 54m", d)
	}
	if d := blocked("dave", "192.0.2.2", t0.Add(6*time.Minute)); d != 0 {
		t.Errorf("other address: blocked %s, want 0", d)
	}

	if err := th.Succeed(ctx, account("ALICE")); err != nil {
		t.Fatal(err)
	}
	if d := blocked("alice", "192.0.2.9", t0.Add(3*time.Minute)); d != 0 {
		t.Errorf("after a successful sign-in: blocked %s, want 0", d)
	}

	fail("erin", "192.0.2.3", t0.Add(3*time.Hour))
	var n int
	if err := pool.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_login_failure`).Scan(&n); err != nil || n != 1 {
		t.Errorf("rows after a failure 3 h later: %d (%v), want 1 (older rows purged)", n, err)
	}
	var stored string
	if err := pool.QueryRow(`SELECT account_hash FROM tx_runsdesk_login_failure`).Scan(&stored); err != nil || stored == "erin" || len(stored) != 64 {
		t.Errorf("account stored as %q, want a SHA-256 hex digest", stored)
	}
}

// TestLoginThrottleKeysAnAccountByItsUser checks that every spelling of an existing user's
// name, and the user's uid, share one allowance, while an unknown name has its own.
func TestLoginThrottleKeysAnAccountByItsUser(t *testing.T) {
	a, pool := newAccounts(t)
	uid := mustCreateUser(t, a, "throt2", "support")
	th := NewLoginThrottle(pool, LoginLimits{AccountFailures: 2, IPFailures: 100})
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	user := th.UserAccount(uid)
	for _, name := range []string{"throt2", "THROT2", "ｔｈｒｏｔ２", " Throt2"} {
		if key, err := th.Account(ctx, name); err != nil || key != user {
			t.Errorf("Account(%q) = %q, %v; want the user's key %q", name, key, err, user)
		}
	}
	other, err := th.Account(ctx, "ťhrot2")
	if err != nil || other == user {
		t.Fatalf("Account(ťhrot2) = %q, %v; want a key of its own", other, err)
	}
	for i := range 2 {
		if err := th.Fail(ctx, user, "192.0.2.1", t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := th.Blocked(ctx, user, "192.0.2.2", t0.Add(time.Minute)); err != nil || d == 0 {
		t.Errorf("user after 2 failures: blocked %s (%v), want a wait", d, err)
	}
	if d, err := th.Blocked(ctx, other, "192.0.2.2", t0.Add(time.Minute)); err != nil || d != 0 {
		t.Errorf("another name: blocked %s (%v), want 0", d, err)
	}
}
