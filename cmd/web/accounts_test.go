package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/runtime"
)

func TestCommandsRefuseAnUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	env := environ{"RUNSDESK_DSN": dbtest.NewDatabase(t), "RUNSDESK_LOG_LEVEL": "warn"}
	for _, args := range [][]string{
		{"user", "add", "--username", "ann", "--role", "admin"},
		{"token", "create", "--name", "ci", "--scopes", "read"},
		{"user", "list"},
		{"user", "reset-password", "ann"},
		{"token", "rotate", "ci"},
		{"apply", "-f", "../../runtime/apply/testdata/valid.yaml"},
		{"reap"},
		{"cancel", "6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10"},
		{"serve", "--no-migrate", "--addr", "127.0.0.1:0"},
		{"worker", "--no-migrate"},
	} {
		r := cliRun(t, env, nil, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "run `runsdesk migrate` first") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	r := cliRun(t, env, nil, "migrate")
	if r.code != exitOK || r.stdout != "Database migrated: 0 migration(s) applied, none pending.\n" {
		t.Errorf("second migrate: %+v", r)
	}
}

func TestUserAddGeneratesAPasswordAndPrintsItOnce(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	r := cliRun(t, env, nil, "user", "add", "--username", "ann", "--role", "admin")
	if r.code != exitOK {
		t.Fatalf("user add: %+v", r)
	}
	out := lines(r.stdout)
	if len(out) != 1 || len(out[0]) < 30 {
		t.Fatalf("stdout = %q, want one line holding the password", r.stdout)
	}
	password := out[0]
	if strings.Count(r.stdout+r.stderr, password) != 1 {
		t.Errorf("the password appears %d times in the output", strings.Count(r.stdout+r.stderr, password))
	}
	if !strings.Contains(r.stderr, `User "ann" created (role admin`) || !strings.Contains(r.stderr, "shown only this once") {
		t.Errorf("stderr = %q", r.stderr)
	}
	actor := authenticate(t, env, "ann", password)
	if actor.Role != runtime.RoleAdmin {
		t.Errorf("role = %q", actor.Role)
	}

	r = cliRun(t, env, nil, "user", "add", "--username", "ann", "--role", "support")
	if r.code != exitFailure || !strings.Contains(r.stderr, `the username "ann" is already taken`) || r.stdout != "" {
		t.Errorf("duplicate user add: %+v", r)
	}
}

func TestUserAddReadsAPipedPassword(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	const password = "violet otters juggle 42 teacups"
	r := cliRun(t, env, strings.NewReader(password+"\r\n"), "user", "add", "--username", "rita", "--role", "reviewer")
	if r.code != exitOK || r.stdout != "" || strings.Contains(r.stderr, password) {
		t.Fatalf("user add: %+v", r)
	}
	if a := authenticate(t, env, "rita", password); a.Role != runtime.RoleReviewer {
		t.Errorf("role = %q", a.Role)
	}

	r = cliRun(t, env, strings.NewReader("short\n"), "user", "add", "--username", "sam", "--role", "support")
	if r.code != exitFailure || !strings.Contains(r.stderr, "runsdesk user add: ") || strings.Contains(r.stderr, "short") {
		t.Errorf("short password: %+v", r)
	}
	r = cliRun(t, env, strings.NewReader(""), "user", "add", "--username", "sam", "--role", "support")
	if r.code != exitFailure || !strings.Contains(r.stderr, "standard input is empty") {
		t.Errorf("empty stdin: %+v", r)
	}
}

func TestTokenCreatePrintsTheTokenOnceAndStoresOnlyItsHash(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	r := cliRun(t, env, nil, "token", "create", "--name", "ci", "--scopes", "run, read,cancel")
	if r.code != exitOK {
		t.Fatalf("token create: %+v", r)
	}
	out := lines(r.stdout)
	if len(out) != 1 || !strings.HasPrefix(out[0], db.TokenPrefix) {
		t.Fatalf("stdout = %q, want one line holding the token", r.stdout)
	}
	token := out[0]
	if strings.Contains(r.stderr, token) || !strings.Contains(r.stderr, `Service account "ci" created (scopes run, read, cancel; it does not expire)`) {
		t.Errorf("stderr = %q", r.stderr)
	}
	c := store(t, env)
	ctx := context.Background()
	var hash, scopes string
	if err := c.pool.QueryRowContext(ctx, `SELECT token_hash, scopes FROM tx_runsdesk_service_account WHERE name = 'ci'`).Scan(&hash, &scopes); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(token))
	if hash != hex.EncodeToString(sum[:]) {
		t.Errorf("stored hash %q is not the token's SHA-256", hash)
	}
	var n int
	if err := c.pool.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_service_account
		WHERE name LIKE CONCAT('%', ?, '%') OR token_hash LIKE CONCAT('%', ?, '%') OR scopes LIKE CONCAT('%', ?, '%')`,
		token, token, token).Scan(&n); err != nil || n != 0 {
		t.Errorf("the token itself is stored (%d rows, %v)", n, err)
	}
	actor, err := db.NewServiceAccounts(c.pool, nil).ActorForToken(ctx, token)
	if err != nil || actor.Role != runtime.RoleService || !slices.Equal(actor.Scopes, []string{"run", "read", "cancel"}) {
		t.Errorf("ActorForToken = %+v, %v", actor, err)
	}

	r = cliRun(t, env, nil, "token", "create", "--name", "ci", "--scopes", "read")
	if r.code != exitFailure || !strings.Contains(r.stderr, `a service account named "ci" already exists`) || r.stdout != "" {
		t.Errorf("duplicate token create: %+v", r)
	}
}

// TestTokenCreateExpires: --expires 90d stores the expiry 90 days ahead and says it, token list
// shows it (and "never" for a token without one), the token works until then and is refused
// as expired after; rotating an expired token gives the new one 90 days again; a duration that
// is not positive is refused before anything is stored.
func TestTokenCreateExpires(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	before := time.Now()
	r := cliRun(t, env, nil, "token", "create", "--name", "short", "--scopes", "read", "--expires", "90d")
	if r.code != exitOK || !strings.Contains(r.stderr, "it expires ") {
		t.Fatalf("token create --expires: %+v", r)
	}
	token := lines(r.stdout)[0]
	c := store(t, env)
	var expires int64
	if err := c.pool.QueryRow(`SELECT expires_at FROM tx_runsdesk_service_account WHERE name = 'short'`).Scan(&expires); err != nil {
		t.Fatal(err)
	}
	want := before.Add(90 * 24 * time.Hour).Unix()
	if expires < want || expires > want+60 {
		t.Fatalf("expires_at %d, want about %d", expires, want)
	}
	if r := cliRun(t, env, nil, "token", "create", "--name", "forever", "--scopes", "read"); r.code != exitOK {
		t.Fatalf("token create: %+v", r)
	}
	list := cliRun(t, env, nil, "token", "list")
	if row := listRow(t, list.stdout, "short"); row[5] != time.Unix(expires, 0).UTC().Format(time.RFC3339) {
		t.Errorf("token list row of short: %q", row)
	}
	if row := listRow(t, list.stdout, "forever"); row[5] != "never" {
		t.Errorf("token list row of forever: %q", row)
	}
	valid := db.NewServiceAccounts(c.pool, func() time.Time { return time.Unix(expires-1, 0) })
	if _, err := valid.ActorForToken(context.Background(), token); err != nil {
		t.Errorf("the token a second before its expiry: %v", err)
	}
	late := db.NewServiceAccounts(c.pool, func() time.Time { return time.Unix(expires, 0) })
	if _, err := late.ActorForToken(context.Background(), token); !errors.Is(err, runtime.ErrTokenExpired) {
		t.Errorf("the token at its expiry: %v, want ErrTokenExpired", err)
	}
	if _, err := c.pool.Exec(`UPDATE tx_runsdesk_service_account SET expires_at = 1 WHERE name = 'short'`); err != nil {
		t.Fatal(err)
	}
	rotated := cliRun(t, env, nil, "token", "rotate", "short")
	if rotated.code != exitOK {
		t.Fatalf("token rotate of an expired token: %+v", rotated)
	}
	if err := c.pool.QueryRow(`SELECT expires_at FROM tx_runsdesk_service_account WHERE name = 'short'`).Scan(&expires); err != nil ||
		expires < time.Now().Add(90*24*time.Hour).Unix()-60 {
		t.Errorf("the rotated token expires at %d (%v), want 90 days from the rotation", expires, err)
	}
	if _, err := db.NewServiceAccounts(c.pool, nil).ActorForToken(context.Background(), lines(rotated.stdout)[0]); err != nil {
		t.Errorf("the rotated token: %v", err)
	}
	if r := cliRun(t, env, nil, "token", "create", "--name", "dated", "--scopes", "read", "--expires", "2099-01-31"); r.code != exitOK ||
		!strings.Contains(r.stderr, "it expires 2099-01-31T00:00:00Z") {
		t.Errorf("token create --expires DATE: %+v", r)
	}
	for _, bad := range []string{"0d", "-5h", "soon", "2001-01-01"} {
		r := cliRun(t, env, nil, "token", "create", "--name", "bad", "--scopes", "read", "--expires", bad)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--expires") || r.stdout != "" {
			t.Errorf("--expires %s: %+v", bad, r)
		}
	}
}

// authenticate signs username in on env's database and fails the test if that is refused.
func authenticate(t *testing.T, env environ, username, password string) runtime.Actor {
	t.Helper()
	accounts, err := db.NewAccounts(store(t, env).pool, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	actor, _, err := accounts.Authenticate(context.Background(), username, password)
	if err != nil {
		t.Fatalf("Authenticate(%s): %v", username, err)
	}
	return actor
}

// TestUserEmail: user add --email stores the address, user email changes and removes it
// (audited), and a malformed address is a usage error.
func TestUserEmail(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	if r := cliRun(t, env, nil, "user", "add", "--username", "rita", "--role", "reviewer", "--email", "rita@example.com"); r.code != exitOK {
		t.Fatalf("user add --email: %+v", r)
	}
	email := func() string {
		var e string
		if err := store(t, env).pool.QueryRow(`SELECT email FROM be_users WHERE username = 'rita'`).Scan(&e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	if got := email(); got != "rita@example.com" {
		t.Fatalf("stored %q", got)
	}
	if r := cliRun(t, env, nil, "user", "email", "rita", "r@example.org"); r.code != exitOK || r.stdout != "User \"rita\" is mailed at r@example.org.\n" || email() != "r@example.org" {
		t.Errorf("user email: %+v, stored %q", r, email())
	}
	if r := cliRun(t, env, nil, "user", "email", "rita", "-"); r.code != exitOK || email() != "" {
		t.Errorf("user email -: %+v, stored %q", r, email())
	}
	if r := cliRun(t, env, nil, "user", "email", "rita", "not an address"); r.code != exitUsage {
		t.Errorf("a malformed address: %+v, want a usage error", r)
	}
	if r := cliRun(t, env, nil, "user", "add", "--username", "bob", "--role", "admin", "--email", "bob@"); r.code != exitUsage {
		t.Errorf("user add with a malformed address: %+v", r)
	}
}
