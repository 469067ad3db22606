package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"runsdesk/db"
	"runsdesk/runtime/auditchain"
)

// TestAuditKeygenAndVerify: keygen prints a key pair; with its key a chainer pass chains the
// desk's audit rows and signs a checkpoint (also appended to a file); verify exits 0 with the
// range, then, after a row is changed in SQL, 1 naming it and the last good checkpoint; the
// file's checkpoints are checked when the database's are gone; without a key verify refuses.
func TestAuditKeygenAndVerify(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	r := cliRun(t, env, nil, "audit", "keygen")
	m := regexp.MustCompile(`(?m)^RUNSDESK_AUDIT_KEY=(PRIVATE\+KEY\+runsdesk-audit\+\S+)\nRUNSDESK_AUDIT_VERIFIER_KEY=(runsdesk-audit\+\S+)$`).FindStringSubmatch(r.stdout)
	if r.code != exitOK || m == nil {
		t.Fatalf("audit keygen: %+v", r)
	}
	if r := cliRun(t, env, nil, "audit", "verify"); r.code != exitFailure || !strings.Contains(r.stderr, "RUNSDESK_AUDIT_VERIFIER_KEY") {
		t.Errorf("audit verify without a key: %+v", r)
	}
	bad := environ{}
	for k, v := range env {
		bad[k] = v
	}
	bad["RUNSDESK_AUDIT_KEY"] = "PRIVATE+KEY+not-a-key"
	if r := cliRun(t, bad, nil, "worker"); r.code != exitFailure || !strings.Contains(r.stderr, "RUNSDESK_AUDIT_KEY") {
		t.Errorf("worker with a malformed audit key: %+v, want exit 1 naming RUNSDESK_AUDIT_KEY", r)
	}
	env["RUNSDESK_AUDIT_VERIFIER_KEY"] = m[2]
	addUser(t, env, "ann", "admin", annPassword)
	addUser(t, env, "bob", "reviewer", annPassword)
	for _, args := range [][]string{{"user", "disable", "bob"}, {"user", "enable", "bob"}} {
		if r := cliRun(t, env, nil, args...); r.code != exitOK {
			t.Fatalf("%v: %+v", args, r)
		}
	}

	conn := store(t, env)
	signer, err := note.NewSigner(m[1])
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "checkpoints")
	chainer := auditchain.New(auditchain.Config{Store: db.New(conn.pool), Signer: signer, CheckpointFile: file,
		Now: func() time.Time { return time.Now().Add(time.Minute) }})
	n, cp, err := chainer.Pass(context.Background())
	if err != nil || n < 2 || cp == nil || cp.Seq != int64(n) {
		t.Fatalf("chain pass: %d rows, checkpoint %+v, %v", n, cp, err)
	}
	r = cliRun(t, env, nil, "audit", "verify", "--checkpoints", file)
	if r.code != exitOK || !strings.Contains(r.stdout, "audit chain seq 1–") || !strings.Contains(r.stdout, "OK\n") {
		t.Fatalf("audit verify: %+v", r)
	}

	if _, err := conn.pool.Exec(`UPDATE tx_runsdesk_audit SET actor_name = 'mallory' WHERE uid = 2`); err != nil {
		t.Fatal(err)
	}
	r = cliRun(t, env, nil, "audit", "verify")
	if r.code != exitFailure || !strings.Contains(r.stderr, "changed: tx_runsdesk_audit uid 2 at chain seq 2") ||
		!strings.Contains(r.stdout, "last good checkpoint: none") {
		t.Errorf("audit verify after a change: %+v", r)
	}
	// The database's checkpoints removed: the file's still show the chain was cut short.
	if _, err := conn.pool.Exec(`UPDATE tx_runsdesk_audit SET actor_name = 'cli:runsdesk:user' WHERE uid = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.pool.Exec(`DELETE FROM tx_runsdesk_chain_checkpoint`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.pool.Exec(`DELETE FROM tx_runsdesk_chain WHERE seq > 1`); err != nil {
		t.Fatal(err)
	}
	r = cliRun(t, env, nil, "audit", "verify", "--checkpoints", file)
	if r.code != exitFailure || !strings.Contains(r.stderr, "truncated: the chain ends at seq 1") {
		t.Errorf("audit verify of a truncated chain with the checkpoint file: %+v", r)
	}
	rows := listJSON(t, env, []string{"id", "time", "actor", "actor_uid", "ip", "action", "run", "outcome", "reason", "chain_seq"},
		"audit", "list", "--action", "audit_verify")
	if len(rows) != 3 || rows[0]["outcome"] != "failure" || rows[2]["outcome"] != "success" {
		t.Errorf("audit verify's own audit rows: %v", rows)
	}
	if b, err := os.ReadFile(file); err != nil || len(auditchain.SplitNotes(string(b))) != 1 {
		t.Errorf("checkpoint file: %v, %q", err, b)
	}
}

// TestWorkerChainsTheAuditTrail: a worker started with an audit key, --audit-lag 1s and
// --checkpoint-file chains the audit rows written before it and signs a checkpoint into the
// file; audit verify against that file then exits 0.
func TestWorkerChainsTheAuditTrail(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	addUser(t, env, "bob", "reviewer", annPassword)
	for _, args := range [][]string{{"user", "disable", "bob"}, {"user", "enable", "bob"}} {
		if r := cliRun(t, env, nil, args...); r.code != exitOK {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	skey, vkey, err := auditchain.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	env["RUNSDESK_AUDIT_KEY"] = skey
	file := filepath.Join(t.TempDir(), "checkpoints")
	w := start(t, env, "worker", "--workers", "1", "--audit-lag", "1s", "--checkpoint-file", file)
	w.waitFor(t, regexp.MustCompile(`(1 worker\(s\) running)`))
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && len(auditchain.SplitNotes(string(b))) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint in %s after 30 s; worker stderr:\n%s", file, w.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := w.stop(t); code != exitOK {
		t.Errorf("worker exited %d:\n%s", code, w.stderr)
	}
	delete(env, "RUNSDESK_AUDIT_KEY")
	env["RUNSDESK_AUDIT_VERIFIER_KEY"] = vkey
	if r := cliRun(t, env, nil, "audit", "verify", "--checkpoints", file); r.code != exitOK || !strings.Contains(r.stdout, "audit chain seq 1–3 ") {
		t.Errorf("audit verify after the worker: %+v", r)
	}
}
