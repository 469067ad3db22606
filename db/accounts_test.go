package db

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/db/dbtest"
	"runsdesk/internal/argon2phc"
	"runsdesk/runtime"
)

const strongPassword = "staple horse battery correct"

// accountsPool returns a pool on a fresh, migrated database.
func accountsPool(t *testing.T) *sql.DB {
	t.Helper()
	dsn := dbtest.NewDatabase(t)
	ctx := context.Background()
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	pool, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

func newAccounts(t *testing.T) (*Accounts, *sql.DB) {
	t.Helper()
	pool := accountsPool(t)
	a, err := NewAccounts(pool, nil, 2)
	if err != nil {
		t.Fatalf("NewAccounts: %v", err)
	}
	return a, pool
}

func mustCreateUser(t *testing.T, a *Accounts, name string, role runtime.Role) int64 {
	t.Helper()
	uid, err := a.CreateUser(context.Background(), name, strongPassword, role)
	if err != nil {
		t.Fatalf("CreateUser(%q): %v", name, err)
	}
	return uid
}

// CheapHashes makes the hashes argon2id's cheapest, and they sign in; the default stays the
// OWASP minimum (TestCreateUserStoresArgon2idPHC).
func TestCheapHashesSignIn(t *testing.T) {
	pool := accountsPool(t)
	a, err := NewAccounts(pool, nil, 1, CheapHashes())
	if err != nil {
		t.Fatalf("NewAccounts: %v", err)
	}
	uid := mustCreateUser(t, a, "cheap", runtime.RoleReviewer)
	var hash string
	if err := pool.QueryRow(`SELECT password FROM be_users WHERE uid = ?`, uid).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if want := "$argon2id$v=19$m=8,t=1,p=1$"; !strings.HasPrefix(hash, want) {
		t.Errorf("hash = %q, want prefix %q", hash, want)
	}
	if _, _, err := a.Authenticate(context.Background(), "cheap", strongPassword); err != nil {
		t.Errorf("sign in with a cheap hash: %v", err)
	}
}

func TestCreateUserStoresArgon2idPHC(t *testing.T) {
	a, pool := newAccounts(t)
	uid := mustCreateUser(t, a, "alice", runtime.RoleAdmin)
	var hash string
	var admin int
	if err := pool.QueryRow(`SELECT password, admin FROM be_users WHERE uid = ?`, uid).Scan(&hash, &admin); err != nil {
		t.Fatal(err)
	}
	if want := "$argon2id$v=19$m=19456,t=2,p=1$"; !strings.HasPrefix(hash, want) {
		t.Errorf("hash = %q, want prefix %q", hash, want)
	}
	if strings.Contains(hash, strongPassword) {
		t.Error("hash contains the password")
	}
	if admin != 1 {
		t.Errorf("admin flag = %d, want 1 for role admin", admin)
	}
	if _, err := a.CreateUser(context.Background(), "alice", strongPassword, runtime.RoleSupport); !errors.Is(err, ErrUsernameTaken) {
		t.Errorf("duplicate username: got %v, want ErrUsernameTaken", err)
	}
}

func TestCreateUserRejectsBadInput(t *testing.T) {
	a, _ := newAccounts(t)
	for _, tc := range []struct {
		name, username, password string
		role                     runtime.Role
	}{
		{"empty username", "", strongPassword, runtime.RoleSupport},
		{"username with space", "a b", strongPassword, runtime.RoleSupport},
		{"username too long", strings.Repeat("u", 51), strongPassword, runtime.RoleSupport},
		{"service role", "svc", strongPassword, runtime.RoleService},
		{"unknown role", "bob", strongPassword, "root"},
		{"short password", "bob", "short", runtime.RoleSupport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.CreateUser(context.Background(), tc.username, tc.password, tc.role)
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want *PolicyError", err)
			}
		})
	}
}

func TestCheckPassword(t *testing.T) {
	for _, tc := range []struct {
		password string
		ok       bool
	}{
		{"", false},
		{"abcdefgh", false},                     // 8: below the single-factor minimum
		{"fourteen chars", false},               // 14
		{"fifteen chars!!", true},               // 15
		{"ünïcödé pässwörd", true},              // 16 characters, more bytes
		{"ääääääääääääääääää", false},           // one character repeated
		{"aaaaaaaaaaaaaaaaaaaaaaaa", false},     // one character repeated
		{"passwordpassword", false},             // common
		{"Correct Horse Battery Staple", false}, // common, any case
		{"alice-alice-ali", false},              // username plus 3 characters
		{"alice and a long tail of words", true},
		{strings.Repeat("xyz ", 16), true},    // 64 accepted
		{strings.Repeat("wxyz", 256), true},   // 1024 bytes accepted
		{strings.Repeat("wxyz", 257), false},  // over 1024 bytes
		{"no composition rules at all", true}, // no digits, no capitals
		{"invalid \xff utf8 bytes", false},
	} {
		err := CheckPassword("alice", tc.password)
		if got := err == nil; got != tc.ok {
			t.Errorf("CheckPassword(%.30q) = %v, want ok=%v", tc.password, err, tc.ok)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	a, pool := newAccounts(t)
	uid := mustCreateUser(t, a, "alice", runtime.RoleReviewer)
	ctx := context.Background()

	actor, epoch, err := a.Authenticate(ctx, "alice", strongPassword)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if actor.UserUID != uid || actor.Role != runtime.RoleReviewer || actor.Name != "alice" || epoch != 0 {
		t.Errorf("got actor %+v epoch %d, want uid %d reviewer alice epoch 0", actor, epoch, uid)
	}
	var last int64
	if err := pool.QueryRow(`SELECT lastlogin FROM be_users WHERE uid = ?`, uid).Scan(&last); err != nil || last == 0 {
		t.Errorf("lastlogin = %d (%v), want set", last, err)
	}

	for _, tc := range []struct{ name, username, password string }{
		{"wrong password", "alice", strongPassword + "x"},
		{"unknown user", "mallory", strongPassword},
		{"empty", "", ""},
		{"huge password", "alice", strings.Repeat("p", MaxPasswordBytes+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := a.Authenticate(ctx, tc.username, tc.password)
			if !errors.Is(err, ErrBadCredentials) || !errors.Is(err, runtime.ErrNotFound) {
				t.Errorf("got %v, want ErrBadCredentials wrapping runtime.ErrNotFound", err)
			}
		})
	}

	if err := a.DisableUser(ctx, uid, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate(ctx, "alice", strongPassword); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("disabled user: got %v, want ErrBadCredentials", err)
	}
}

func TestAuthenticateForeignHashIsBadCredentials(t *testing.T) {
	a, pool := newAccounts(t)
	uid := mustCreateUser(t, a, "typo3", runtime.RoleSupport)
	if _, err := pool.Exec(`UPDATE be_users SET password = '$2y$12$abcdefghijklmnopqrstuv' WHERE uid = ?`, uid); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate(context.Background(), "typo3", strongPassword); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("bcrypt hash: got %v, want ErrBadCredentials", err)
	}
}

// TestEveryFailedSignInCostsOneVerification: an unknown username, a wrong password and a
// disabled user each cost exactly one argon2id verification with the current parameters, so
// they cannot be told apart by timing.
func TestEveryFailedSignInCostsOneVerification(t *testing.T) {
	a, _ := newAccounts(t)
	mustCreateUser(t, a, "alice", runtime.RoleSupport)
	uid := mustCreateUser(t, a, "carol", runtime.RoleSupport)
	ctx := context.Background()
	if err := a.DisableUser(ctx, uid, nil); err != nil {
		t.Fatal(err)
	}
	dummy, err := parsePHC(a.dummy)
	if err != nil {
		t.Fatal(err)
	}
	if dummy.Variant != argon2phc.ID || dummy.Memory != argonMemoryKiB || dummy.Time != argonTime || dummy.Threads != argonThreads {
		t.Fatalf("dummy hash parameters m=%d t=%d p=%d differ from real ones", dummy.Memory, dummy.Time, dummy.Threads)
	}
	for _, username := range []string{"alice", "nobody-here", "carol"} {
		before := a.verified.Load()
		if _, _, err := a.Authenticate(ctx, username, "not the password at all"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("%s: got %v, want ErrBadCredentials", username, err)
		}
		if n := a.verified.Load() - before; n != 1 {
			t.Errorf("%s: %d verifications, want 1", username, n)
		}
	}
}

func TestSessionEpochChanges(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "bob", runtime.RoleSupport)
	epochOf := func() int64 {
		t.Helper()
		_, e, err := a.SessionActor(ctx, uid)
		if err != nil {
			t.Fatalf("SessionActor: %v", err)
		}
		return e
	}
	e0 := epochOf()
	if err := a.SetRole(ctx, uid, runtime.RoleReviewer, nil); err != nil {
		t.Fatal(err)
	}
	actor, e1, err := a.SessionActor(ctx, uid)
	if err != nil || e1 != e0+1 || actor.Role != runtime.RoleReviewer {
		t.Errorf("after SetRole: actor %+v epoch %d err %v, want reviewer, epoch %d", actor, e1, err, e0+1)
	}
	if err := a.EndSessions(ctx, uid, nil); err != nil || epochOf() != e0+2 {
		t.Errorf("EndSessions: err %v, want epoch %d", err, e0+2)
	}
	if err := a.SetRole(ctx, uid, runtime.RoleService, nil); err == nil {
		t.Error("SetRole(service) succeeded, want a policy error")
	}
	if err := a.DisableUser(ctx, uid, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.SessionActor(ctx, uid); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("disabled user's SessionActor: got %v, want runtime.ErrNotFound", err)
	}
	if err := a.DisableUser(ctx, 999999, nil); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("DisableUser(unknown): got %v, want runtime.ErrNotFound", err)
	}
}

func TestChangePassword(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "carol", runtime.RoleSupport)
	const next = "a completely different passphrase"

	if _, err := a.ChangePassword(ctx, uid, "wrong current password", next); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("wrong current: got %v, want ErrBadCredentials", err)
	}
	var pe *PolicyError
	if _, err := a.ChangePassword(ctx, uid, strongPassword, "short"); !errors.As(err, &pe) {
		t.Errorf("weak new password: got %v, want *PolicyError", err)
	}
	epoch, err := a.ChangePassword(ctx, uid, strongPassword, next)
	if err != nil || epoch != 1 {
		t.Fatalf("ChangePassword: epoch %d err %v, want epoch 1", epoch, err)
	}
	if _, _, err := a.Authenticate(ctx, "carol", strongPassword); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("old password still works: %v", err)
	}
	if _, _, err := a.Authenticate(ctx, "carol", next); err != nil {
		t.Errorf("new password: %v", err)
	}
	if err := a.ResetPassword(ctx, uid, strongPassword, nil); err != nil {
		t.Errorf("ResetPassword: %v", err)
	}
}

func TestHashingIsBounded(t *testing.T) {
	pool := accountsPool(t)
	a, err := NewAccounts(pool, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := a.Authenticate(ctx, "anyone", strongPassword); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with every slot taken: got %v, want context.DeadlineExceeded", err)
	}
	<-a.slots

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, err := a.Authenticate(context.Background(), "anyone", strongPassword); !errors.Is(err, ErrBadCredentials) {
				t.Errorf("concurrent Authenticate: %v", err)
			}
		})
	}
	wg.Wait()
}

func TestParsePHCRejectsHostileParameters(t *testing.T) {
	for _, phc := range []string{
		"",
		"$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=19456,t=999,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$!!",
	} {
		if _, err := parsePHC(phc); err == nil {
			t.Errorf("parsePHC(%q) accepted", phc)
		}
	}
}

func TestMigrationsCreateNoAccounts(t *testing.T) {
	pool := accountsPool(t)
	for _, table := range []string{"be_users", "tx_runsdesk_service_account"} {
		var n int
		if err := pool.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s holds %d rows after Migrate (%v), want none: no default accounts", table, n, err)
		}
	}
}

// TestActorCarriesTheDisplayName: a person's actor carries be_users.realName as its display
// name (empty when none is set), whoever reads the account.
func TestActorCarriesTheDisplayName(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "ada", runtime.RoleReviewer)
	if actor, _, err := a.SessionActor(ctx, uid); err != nil || actor.DisplayName != "" || actor.Shown() != "ada" {
		t.Fatalf("without a display name: %+v, %v; want shown as ada", actor, err)
	}
	if _, err := pool.ExecContext(ctx, `UPDATE be_users SET realName = 'Ada Lovelace' WHERE uid = ?`, uid); err != nil {
		t.Fatal(err)
	}
	actor, _, err := a.SessionActor(ctx, uid)
	if err != nil || actor.DisplayName != "Ada Lovelace" || actor.Shown() != "Ada Lovelace" || actor.Name != "ada" {
		t.Fatalf("with a display name: %+v, %v", actor, err)
	}
	if u, err := a.UserByUID(ctx, uid); err != nil || u.RealName != "Ada Lovelace" {
		t.Fatalf("UserByUID: %+v, %v", u, err)
	}
}
