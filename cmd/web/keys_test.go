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
	t.Parallel()
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

// TestKeysRotate: rotate refuses without keys; it leaves cleartext rows in clear (counted)
// until --seal-clear seals them with the first key, reports progress per sealed column, and a
// second pass finds everything current; keys status counts the rows per key id; with the key
// rows are sealed with removed, keys status and serve refuse (sealing_key_missing), naming the
// id and the count; a bad key spec names the variable and never the key.
func TestKeysRotate(t *testing.T) {
	t.Parallel()
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
	queued := func() string {
		var stored string
		if err := store(t, env).pool.QueryRow(`SELECT queued_request FROM tx_nrllm_agentrun WHERE uuid = ?`, id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		return stored
	}
	r := cliRun(t, env, nil, "keys", "rotate", "--batch", "1")
	if r.code != exitOK || !strings.Contains(r.stdout, "tx_nrllm_agentrun.queued_request: 0 re-sealed with key \"new\", 0 already were, 1 in clear.") ||
		!strings.Contains(r.stdout, "tx_runsdesk_draft.form_values: 0 re-sealed") ||
		!strings.Contains(r.stdout, "seal them with --seal-clear: tx_nrllm_agentrun.queued_request: 1") || queued() != `{"kind":"start","prompt":"hi"}` {
		t.Fatalf("rotate without --seal-clear: %+v", r)
	}
	r = cliRun(t, env, nil, "keys", "rotate", "--batch", "1", "--seal-clear")
	if r.code != exitOK || !strings.Contains(r.stdout, "tx_nrllm_agentrun.queued_request: batch through row") ||
		!strings.Contains(r.stdout, "tx_nrllm_agentrun.queued_request: 1 re-sealed with key \"new\", 0 already were, 0 in clear.") ||
		!strings.HasSuffix(r.stdout, "Rotation done: every sealed column re-sealed with key \"new\".\n") {
		t.Fatalf("rotate --seal-clear: %+v", r)
	}
	if seal.KeyID(queued()) != "new" {
		t.Fatalf("queued_request after rotate: %.40q", queued())
	}
	newOnly, _ := seal.Parse(newLine)
	got, err := db.New(store(t, env).pool, db.WithKeys(newOnly)).FindByUUID(context.Background(), id)
	if err != nil || got.QueuedRequest != `{"kind":"start","prompt":"hi"}` {
		t.Fatalf("read back under the new key: %q, %v", got.QueuedRequest, err)
	}
	if r := cliRun(t, env, nil, "keys", "rotate"); r.code != exitOK || !strings.Contains(r.stdout, "queued_request: 0 re-sealed with key \"new\", 1 already were") {
		t.Fatalf("second rotate: %+v", r)
	}
	rotations := listJSON(t, env, []string{"id", "time", "actor", "actor_uid", "ip", "action", "run", "outcome", "reason", "chain_seq"},
		"audit", "list", "--action", "keys_rotate")
	if len(rotations) != 3 || rotations[0]["actor"] != "cli:runsdesk:keys" || rotations[0]["outcome"] != "success" ||
		!strings.HasPrefix(rotations[0]["reason"].(string), `0 value(s) re-sealed with key new; unopenable: none; in clear: none`) {
		t.Errorf("keys rotate's audit rows: %v", rotations)
	}
	if r := cliRun(t, env, nil, "keys", "status"); r.code != exitOK ||
		r.stdout != "Active key: \"new\"\nCOLUMN                            KEY  ROWS  STATE\ntx_nrllm_agentrun.queued_request  new  1     configured\n" {
		t.Fatalf("keys status: %+v", r)
	}
	if r := cliRun(t, env, nil, "keys", "status", "--format", "json"); r.code != exitOK || r.stdout !=
		"[\n  {\n    \"column\": \"tx_nrllm_agentrun.queued_request\",\n    \"key_id\": \"new\",\n    \"rows\": 1,\n    \"configured\": true,\n    \"active\": true\n  }\n]\n" {
		t.Fatalf("keys status --format json: %+v", r)
	}

	otherLine, _ := seal.Generate("other")
	env["RUNSDESK_KEYS"] = otherLine
	const missing = `sealing_key_missing: rows are sealed with key id(s) missing from RUNSDESK_KEYS: "new" (1 row(s)) [tx_nrllm_agentrun.queued_request 1 with "new"]`
	if r := cliRun(t, env, nil, "keys", "status"); r.code != exitFailure || !strings.Contains(r.stdout, "  1     MISSING\n") || !strings.Contains(r.stderr, missing) {
		t.Fatalf("keys status with the key removed: %+v", r)
	}
	if r := cliRun(t, env, nil, "serve", "--no-migrate", "--addr", "127.0.0.1:0"); r.code != exitFailure || !strings.Contains(r.stderr, missing) {
		t.Fatalf("serve with the key removed: %+v", r)
	}
	delete(env, "RUNSDESK_KEYS")

	secret := strings.SplitN(newLine, ":", 2)[1]
	env["RUNSDESK_KEYS"] = "new:" + secret[:10]
	if r := cliRun(t, env, nil, "keys", "rotate"); r.code != exitFailure || !strings.Contains(r.stderr, "RUNSDESK_KEYS") ||
		strings.Contains(r.stderr, secret[:10]) {
		t.Fatalf("bad RUNSDESK_KEYS: %+v", r)
	}
}
