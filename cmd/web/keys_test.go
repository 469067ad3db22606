package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/seal"
)

func TestKeysGenerate(t *testing.T) {
	r := cliRun(t, environ{}, nil, "keys", "generate", "--id", "k2027")
	if r.code != exitOK || !regexp.MustCompile(`^k2027:[A-Za-z0-9+/]{43}=\n$`).MatchString(r.stdout) ||
		!strings.Contains(r.stderr, "RUNSDESK_KEYS") {
		t.Fatalf("keys generate: %+v", r)
	}
	if _, err := seal.Parse(r.stdout); err != nil {
		t.Fatalf("the printed line does not parse as RUNSDESK_KEYS: %v", err)
	}
	if again := cliRun(t, environ{}, nil, "keys", "generate", "--id", "k2027"); again.stdout == r.stdout {
		t.Fatal("two generated keys are equal")
	}
	if bad := cliRun(t, environ{}, nil, "keys", "generate", "--id", "no spaces"); bad.code != exitUsage {
		t.Fatalf("bad id: %+v", bad)
	}
}

// TestKeysRotate: rotate refuses without keys, seals cleartext state with the first key,
// reports progress, and a second pass finds everything current; a bad key spec names the
// variable and never the key.
func TestKeysRotate(t *testing.T) {
	env := newDatabase(t)
	id := newRun(t, env, false)
	if r := cliRun(t, env, nil, "keys", "rotate"); r.code != exitFailure || !strings.Contains(r.stderr, "no keys are configured") {
		t.Fatalf("rotate without keys: %+v", r)
	}
	oldLine, _ := seal.Generate("old")
	newLine, _ := seal.Generate("new")
	keysFile := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keysFile, []byte(newLine+"\n"+oldLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env["RUNSDESK_KEYS_FILE"] = keysFile
	r := cliRun(t, env, nil, "keys", "rotate", "--batch", "1")
	if r.code != exitOK || !strings.Contains(r.stdout, "Batch through run") || !strings.Contains(r.stdout, "Batch through call") ||
		!strings.Contains(r.stdout, "Executed calls: 0 re-sealed, 0 already were.") ||
		!strings.HasSuffix(r.stdout, "Rotation done: 1 run(s) re-sealed with key \"new\", 0 already were.\n") {
		t.Fatalf("rotate: %+v", r)
	}
	var stored string
	if err := store(t, env).pool.QueryRow(`SELECT queued_request FROM tx_nrllm_agentrun WHERE uuid = ?`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if seal.KeyID(stored) != "new" {
		t.Fatalf("queued_request after rotate: %.40q", stored)
	}
	newOnly, _ := seal.Parse(newLine)
	got, err := db.New(store(t, env).pool, db.WithKeys(newOnly)).FindByUUID(context.Background(), id)
	if err != nil || got.QueuedRequest != `{"kind":"start","prompt":"hi"}` {
		t.Fatalf("read back under the new key: %q, %v", got.QueuedRequest, err)
	}
	if r := cliRun(t, env, nil, "keys", "rotate"); r.code != exitOK || !strings.Contains(r.stdout, "0 run(s) re-sealed") {
		t.Fatalf("second rotate: %+v", r)
	}
	secret := strings.SplitN(newLine, ":", 2)[1]
	env["RUNSDESK_KEYS"] = "new:" + secret[:10]
	if r := cliRun(t, env, nil, "keys", "rotate"); r.code != exitFailure || !strings.Contains(r.stderr, "RUNSDESK_KEYS") ||
		strings.Contains(r.stderr, secret[:10]) {
		t.Fatalf("bad RUNSDESK_KEYS: %+v", r)
	}
}
