package app

import (
	"context"
	"testing"
	"time"
)

// TestStartWorkersRunsTheRetentionSweeper: a process's workers include the sweeper, which
// clears an output past its retention within a few intervals and records its pass.
func TestStartWorkersRunsTheRetentionSweeper(t *testing.T) {
	pool := migratedDB(t)
	finished := time.Now().Add(-31 * 24 * time.Hour).Unix()
	if _, err := pool.Exec(`INSERT INTO tx_nrllm_agentrun (uid, uuid, status, finished_at, suspended_state, queued_request)
		VALUES (1, 'run-1', 'completed', ?, '', '')`, finished); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_run_output (run, output_text, finished_at) VALUES (1, 'the answer', ?)`, finished); err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), Config{DB: pool, RetentionInterval: 20 * time.Millisecond, PollInterval: time.Hour, ReapInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	a.StartWorkers()
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	for {
		var text string
		var passes int
		if err := pool.QueryRow(`SELECT output_text FROM tx_runsdesk_run_output WHERE run = 1`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_audit WHERE action = 'retention'`).Scan(&passes); err != nil {
			t.Fatal(err)
		}
		if text == "" && passes > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: output %q, %d passes recorded", text, passes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
