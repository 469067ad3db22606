package db

import (
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestRunBatch: a batch's writes apply exactly when its guard changed one row; a guard that
// missed writes nothing (neither the multi-row INSERT that carries the guard nor the write
// after it), a write the server refuses rolls the whole batch back (declined) and leaves its
// connection usable, the batch pool runs in strict mode (the guard's NULL is refused in every
// row), a batch whose first write is not the INSERT that carries the guard is declined unsent,
// and the application pool still refuses multiple statements.
func TestRunBatch(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	cfg := notifyConfiguration(t, s, nil)
	r := runOf(t, s, cfg)
	audits := func() int {
		t.Helper()
		return countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit WHERE run_uuid = ?`, r.UUID)
	}
	claimBatch := func(owner, status string) *batch {
		b := &batch{guard: updateRunByUID + ` SET claimed_by = ? WHERE uid = ? AND status = ?`, guardArgs: []any{owner, r.UID, status}}
		b.insertValues(sqlInsertAudit, []string{sqlAuditRow, sqlAuditRow},
			append(auditArgs(t0, runtime.Actor{Name: "ada"}, "", "batch", r.UUID, "one", ""),
				auditArgs(t0, runtime.Actor{Name: "ada"}, "", "batch", r.UUID, "two", "")...)...)
		b.write(`UPDATE tx_nrllm_agentrun SET tstamp = tstamp + 1 WHERE uid = ?`, r.UID)
		return b
	}
	tstamp := func() int64 {
		t.Helper()
		return int64(countRows(t, s, `SELECT tstamp FROM tx_nrllm_agentrun WHERE uid = ?`, r.UID))
	}
	before := tstamp()
	res, err := s.runBatch(ctx, claimBatch("w:2", "queued"))
	if err != nil || res.held() || audits() != 0 || tstamp() != before {
		t.Fatalf("guard that missed: held %v, %v, %d audit rows, tstamp %d → %d; want nothing written", res.held(), err, audits(), before, tstamp())
	}
	res, err = s.runBatch(ctx, claimBatch("w:2", "running"))
	if err != nil || !res.held() || audits() != 2 || mustFind(t, s, r.UID).ClaimedBy != "w:2" || tstamp() != before+1 {
		t.Fatalf("guard that held: held %v, %v, %d audit rows; want both rows and the update", res.held(), err, audits())
	}
	b := claimBatch("w:3", "running")
	b.insertValues(sqlInsertEvents, []string{sqlEventRow, sqlEventRow}, r.UID, 0, "x", 0, 0, "{}", t0, r.UID, 0, "x", 0, 0, "{}", t0)
	if _, err := s.runBatch(ctx, b); !errors.Is(err, errBatchDeclined) {
		t.Fatalf("a duplicate key: %v, want errBatchDeclined", err)
	}
	if audits() != 2 || mustFind(t, s, r.UID).ClaimedBy != "w:2" {
		t.Fatalf("a declined batch left %d audit rows and claimed_by %q", audits(), mustFind(t, s, r.UID).ClaimedBy)
	}
	unguarded := &batch{guard: updateRunByUID + ` SET claimed_by = ? WHERE uid = ? AND status = ?`, guardArgs: []any{"w:4", r.UID, "queued"}}
	unguarded.write(`UPDATE tx_nrllm_agentrun SET tstamp = tstamp + 1 WHERE uid = ?`, r.UID)
	unguarded.insertValues(sqlInsertAudit, []string{sqlAuditRow}, auditArgs(t0, runtime.Actor{Name: "ada"}, "", "batch", r.UUID, "three", "")...)
	if _, err := s.runBatch(ctx, unguarded); !errors.Is(err, errBatchDeclined) || audits() != 2 || tstamp() != before+1 {
		t.Fatalf("a batch whose first write is not an INSERT: %v, %d audit rows, tstamp %d; want declined unsent", err, audits(), tstamp()-before)
	}
	for range maxOpenConns + 1 {
		if res, err := s.runBatch(ctx, claimBatch("w:2", "running")); err != nil || res.held() {
			t.Fatalf("after a declined batch: held %v, %v; want a guard that changed nothing", res.held(), err)
		}
	}
	var mode string
	if err := s.batches.QueryRowContext(ctx, `SELECT @@SESSION.sql_mode`).Scan(&mode); err != nil || !strings.Contains(mode, "STRICT_ALL_TABLES") {
		t.Fatalf("the batch pool's sql_mode %q (%v), want STRICT_ALL_TABLES in it", mode, err)
	}
	if _, err := pool.Exec(`DO 1; DO 2`); err == nil {
		t.Fatal("the application pool ran two statements in one text")
	}
	if got := s.batches.Stats().MaxOpenConnections; got != maxOpenBatchConns {
		t.Fatalf("the batch pool's MaxOpenConnections: got %d, want %d", got, maxOpenBatchConns)
	}
}
