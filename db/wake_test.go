package db

import (
	"context"
	"testing"
)

// TestStamps: a run's stamp changes with its status and its pause, not with its progress; a
// service account's when it is disabled; items that do not exist are left out; an unknown
// kind is an error.
func TestStamps(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	const run = "33333333-3333-4333-8333-333333333333"
	if _, err := pool.ExecContext(ctx, `INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request)
		VALUES (?, 'running', '', '')`, run); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServiceAccounts(pool, nil).CreateToken(ctx, "ci", []string{"read"}); err != nil {
		t.Fatal(err)
	}
	stamp := func(kind, id string) string {
		t.Helper()
		got, err := s.Stamps(ctx, kind, []string{id, "missing"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got["missing"]; ok || len(got) != 1 {
			t.Fatalf("Stamps(%s) = %v, want only %s", kind, got, id)
		}
		return got[id]
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	first := stamp(wakeKindRun, run)
	exec(`UPDATE tx_nrllm_agentrun SET iterations = 5, total_tokens = 99 WHERE uuid = ?`, run)
	if got := stamp(wakeKindRun, run); got != first {
		t.Errorf("stamp after progress %q, want unchanged %q", got, first)
	}
	exec(`UPDATE tx_nrllm_agentrun SET status = 'waiting_for_approval', pause_sequence = 4, suspended_at = 10 WHERE uuid = ?`, run)
	paused := stamp(wakeKindRun, run)
	exec(`UPDATE tx_nrllm_agentrun SET pause_sequence = 9, suspended_at = 10 WHERE uuid = ?`, run)
	if paused == first || stamp(wakeKindRun, run) == paused {
		t.Errorf("stamps %q, %q, %q: want a change at the pause and at the next one", first, paused, stamp(wakeKindRun, run))
	}
	account := stamp(wakeKindServiceAccount, "ci")
	if err := NewServiceAccounts(pool, nil).DisableToken(ctx, "ci", nil); err != nil {
		t.Fatal(err)
	}
	if stamp(wakeKindServiceAccount, "ci") == account {
		t.Error("service account stamp unchanged after it was disabled")
	}
	if _, err := s.Stamps(ctx, "user", []string{"1"}); err == nil {
		t.Error("Stamps of an unknown kind: no error")
	}
}
