package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/seal"
)

// TestServeRefusesRequireMFAWithoutKeys: --require-mfa (or its environment twin) without
// sealing keys, or naming no role, does not start, and says how to set the keys.
func TestServeRefusesRequireMFAWithoutKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"flag", environ{}, []string{"serve", "--require-mfa", "admin,reviewer"}, "set RUNSDESK_KEYS or RUNSDESK_KEYS_FILE"},
		{"environment", environ{"RUNSDESK_REQUIRE_MFA": "admin"}, []string{"serve"}, "`runsdesk keys generate` prints a key"},
		{"not a role", environ{"RUNSDESK_KEYS": "k:" + strings.Repeat("A", 43) + "="}, []string{"serve", "--require-mfa", "admin,boss"}, `"boss" is not a role`},
	} {
		r := cliRun(t, c.env, nil, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", c.name, r.code, r.stderr, c.want)
		}
	}
}

// TestUserMFAReset: user mfa-reset removes the person's factor and recovery codes, ends their
// sessions and is audited; for a person without a factor it changes nothing and says so.
func TestUserMFAReset(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	addUser(t, env, "bob", "reviewer", bobPassword)
	pool := store(t, env).pool
	accounts, err := db.NewAccounts(pool, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := accounts.AccountByUsername(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	line, err := seal.Generate("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := seal.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	factors := db.NewFactors(pool, keys, nil)
	if err := factors.Begin(t.Context(), bob.UID, "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"); err != nil {
		t.Fatal(err)
	}
	if err := factors.Confirm(t.Context(), bob.UID, 1, []string{"h1"}, nil); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, env, nil, "user", "mfa-reset", "bob")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, `The second factor of "bob" is removed and their sessions have ended`) {
		t.Fatalf("user mfa-reset: %+v", r)
	}
	if _, err := factors.Factor(t.Context(), bob.UID); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("factor after mfa-reset: %v", err)
	}
	after, err := accounts.UserByUID(context.Background(), bob.UID)
	if err != nil || after.SessionEpoch != bob.SessionEpoch+1 {
		t.Fatalf("session epoch %d → %d, %v; want the sessions ended", bob.SessionEpoch, after.SessionEpoch, err)
	}
	r = cliRun(t, env, nil, "user", "mfa-reset", "bob")
	if r.code != exitOK || r.stdout != "User \"bob\" has no second factor; nothing changed.\n" {
		t.Fatalf("second user mfa-reset: %+v", r)
	}
	got := auditTrail(t, env)
	if len(got) != 3 || !strings.HasPrefix(got[0], `cli:runsdesk:user user_add success user "bob" (uid `) ||
		!strings.HasPrefix(got[1], `cli:runsdesk:user user_mfa_reset success user "bob" (uid `) ||
		!strings.HasSuffix(got[1], "second factor removed") || !strings.HasPrefix(got[2], `cli:runsdesk:user user_mfa_reset failure user "bob"`) {
		t.Fatalf("audit = %q", got)
	}
}

// TestDemoKeys: serve --demo without keys in the environment writes one key to
// DATA_DIR/keys (0600) the first time, reads the same file after, and leaves keys the
// environment sets alone.
func TestDemoKeys(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "var")
	getenv := environ{}.get
	env, path, err := demoKeys(getenv, dir)
	if err != nil || path != filepath.Join(dir, "keys") || env("RUNSDESK_KEYS_FILE") != path {
		t.Fatalf("demoKeys = %q, %v; RUNSDESK_KEYS_FILE %q", path, err, env("RUNSDESK_KEYS_FILE"))
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", st, err)
	}
	keys, err := seal.FromEnv(env)
	if err != nil || keys.Active() != "demo" {
		t.Fatalf("keys from the demo file: %v, %v", keys, err)
	}
	before, _ := os.ReadFile(path)
	if _, _, err := demoKeys(getenv, dir); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a second start replaced the demo key")
	}
	set := environ{"RUNSDESK_KEYS": "k:" + strings.Repeat("A", 43) + "="}
	if env, path, err := demoKeys(set.get, dir); err != nil || path != "" || env("RUNSDESK_KEYS_FILE") != "" {
		t.Fatalf("with RUNSDESK_KEYS set: %q, %v", path, err)
	}
}
