package main

import (
	"strings"
	"testing"
	"time"
)

// TestRetentionRun: the dry run reports the expired output and keeps it, the pass removes it
// and says so, a second pass finds nothing.
func TestRetentionRun(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	if r := cliRun(t, env, nil, "migrate"); r.code != exitOK {
		t.Fatalf("migrate: %+v", r)
	}
	pool := store(t, env).pool
	finished := time.Now().Add(-40 * 24 * time.Hour).Unix()
	if _, err := pool.Exec(`INSERT INTO tx_nrllm_agentrun (uid, uuid, status, configuration_uid, finished_at, suspended_state, queued_request)
		VALUES (1, 'run-1', 'completed', 7, ?, '', '')`, finished); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_run_output (run, output_text, finished_at) VALUES (1, 'the answer', ?)`, finished); err != nil {
		t.Fatal(err)
	}
	output := func() string {
		var text string
		if err := pool.QueryRow(`SELECT output_text FROM tx_runsdesk_run_output WHERE run = 1`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		return text
	}
	r := cliRun(t, env, nil, "retention", "run", "--dry-run")
	if r.code != exitOK || !strings.Contains(r.stdout, "retention (dry run): would remove 1 output(s), 0 transcript row(s), 0 run(s)") || output() != "the answer" {
		t.Fatalf("dry run: %+v, output %q", r, output())
	}
	r = cliRun(t, env, nil, "retention", "run")
	if r.code != exitOK || !strings.Contains(r.stdout, "retention: removed 1 output(s)") || output() != "" {
		t.Fatalf("pass: %+v, output %q", r, output())
	}
	if r := cliRun(t, env, nil, "retention", "run"); r.code != exitOK || !strings.Contains(r.stdout, "removed 0 output(s)") {
		t.Fatalf("second pass: %+v", r)
	}
	if r := cliRun(t, env, nil, "retention", "run", "now"); r.code != exitUsage {
		t.Fatalf("extra argument: %+v", r)
	}
}
