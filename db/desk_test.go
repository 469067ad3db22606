package db

import (
	"testing"
)

// Every insert and every update that changes a value moves a run's changed_at, and RunChanges
// reads the runs changed after a cursor, oldest first, with a stamp that moves with status and
// assignee but not with other columns.
func TestRunChangesFollowEveryWrite(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	start, err := s.DeskCursor(ctx)
	if err != nil || start != 0 {
		t.Fatalf("DeskCursor on an empty table: %d, %v, want 0", start, err)
	}
	for _, uuid := range []string{"a", "b"} {
		if _, err := pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request) VALUES (?, 'queued', '', '')`, uuid); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.RunChanges(ctx, 0, 10)
	if err != nil || len(all) != 2 || all[0].Run.UUID != "a" || all[1].Run.UUID != "b" {
		t.Fatalf("RunChanges(0): %+v, %v, want a then b", all, err)
	}
	cursor, err := s.DeskCursor(ctx)
	if err != nil || cursor != all[1].At {
		t.Fatalf("DeskCursor: %d, %v, want %d", cursor, err, all[1].At)
	}
	if got, err := s.RunChanges(ctx, cursor, 10); err != nil || len(got) != 0 {
		t.Fatalf("RunChanges(cursor) with nothing new: %+v, %v", got, err)
	}
	if _, err := pool.Exec(`UPDATE tx_nrllm_agentrun SET lease_expires = 99 WHERE uuid = 'a'`); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunChanges(ctx, cursor, 10)
	if err != nil || len(got) != 1 || got[0].Run.UUID != "a" || got[0].Stamp != all[0].Stamp || got[0].At <= cursor {
		t.Fatalf("after a lease write: %+v, %v, want a with its stamp unchanged", got, err)
	}
	if _, err := pool.Exec(`UPDATE tx_nrllm_agentrun SET status = 'running', assignee = 3 WHERE uuid = 'b'`); err != nil {
		t.Fatal(err)
	}
	got, err = s.RunChanges(ctx, got[0].At, 10)
	if err != nil || len(got) != 1 || got[0].Run.UUID != "b" || got[0].Run.Status != "running" || got[0].Run.Assignee != 3 || got[0].Stamp == all[1].Stamp {
		t.Fatalf("after a status change: %+v, %v, want b running with a new stamp", got, err)
	}
	if limited, err := s.RunChanges(ctx, 0, 1); err != nil || len(limited) != 1 {
		t.Fatalf("RunChanges limit 1: %+v, %v", limited, err)
	}
}
