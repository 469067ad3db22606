package reliability

import (
	"database/sql"
	"testing"
)

// runRow is the stored state of a run the tests check.
type runRow struct {
	Status, Reason, PendingEffect, ClaimedBy string
	HasRequest                               bool
	RequeueCount                             int
}

func readRun(t *testing.T, q *sql.DB, uuid string) runRow {
	t.Helper()
	var r runRow
	err := q.QueryRow(`SELECT status, termination_reason, pending_effect, claimed_by, queued_request <> '', requeue_count
		FROM tx_nrllm_agentrun WHERE uuid = ?`, uuid).Scan(&r.Status, &r.Reason, &r.PendingEffect, &r.ClaimedBy, &r.HasRequest, &r.RequeueCount)
	if err != nil {
		t.Fatalf("read run %s: %v", uuid, err)
	}
	return r
}

// countOf runs a COUNT query.
func countOf(t *testing.T, q *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := q.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// decisions counts the run's stored decisions.
func decisions(t *testing.T, q *sql.DB, uuid string) int {
	return countOf(t, q, `SELECT COUNT(*) FROM tx_runsdesk_decision d JOIN tx_nrllm_agentrun r ON r.uid = d.run WHERE r.uuid = ?`, uuid)
}

// events counts the run's events of kind.
func events(t *testing.T, q *sql.DB, uuid, kind string) int {
	return countOf(t, q, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event e JOIN tx_nrllm_agentrun r ON r.uid = e.run WHERE r.uuid = ? AND e.kind = ?`, uuid, kind)
}

// auditOf returns the run's audit rows of action as "outcome/reason" counts.
func auditOf(t *testing.T, q *sql.DB, uuid, action string) map[string]int {
	t.Helper()
	rows, err := q.Query(`SELECT outcome, reason FROM tx_runsdesk_audit WHERE run_uuid = ? AND action = ?`, uuid, action)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var outcome, reason string
		if err := rows.Scan(&outcome, &reason); err != nil {
			t.Fatal(err)
		}
		out[outcome+"/"+reason]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// invariants returns queries that return the rows breaking a rule of the data model; each must
// return none.
func invariants() []struct{ rule, query string } {
	return []struct{ rule, query string }{
		{"every run's status is one of the seven", `SELECT uuid FROM tx_nrllm_agentrun
		WHERE status NOT IN ('queued','running','waiting_for_approval','waiting_for_input','completed','failed','cancelled')`},
		{"event sequences are dense from 0", `SELECT run FROM tx_nrllm_agentrun_event GROUP BY run
		HAVING MIN(sequence) <> 0 OR MAX(sequence) <> COUNT(*) - 1`},
		{"every decision has its event", `SELECT d.run FROM tx_runsdesk_decision d GROUP BY d.run, d.kind
		HAVING COUNT(*) > (SELECT COUNT(*) FROM tx_nrllm_agentrun_event e WHERE e.run = d.run AND e.kind = d.kind)`},
		{"events belong to runs", `SELECT e.run FROM tx_nrllm_agentrun_event e LEFT JOIN tx_nrllm_agentrun r ON r.uid = e.run WHERE r.uid IS NULL`},
		{"a waiting run holds no lease and keeps its state", `SELECT uuid FROM tx_nrllm_agentrun
		WHERE status IN ('waiting_for_approval','waiting_for_input') AND (claimed_by <> '' OR suspended_state = '')`},
		{"a finished run has a reason and no lease", `SELECT uuid FROM tx_nrllm_agentrun
		WHERE status IN ('completed','failed','cancelled') AND (termination_reason = '' OR claimed_by <> '')`},
		{"a running run holds a lease", `SELECT uuid FROM tx_nrllm_agentrun WHERE status = 'running' AND claimed_by = ''`},
	}
}

// checkInvariants fails t for every broken rule.
func checkInvariants(t *testing.T, q *sql.DB) {
	t.Helper()
	for _, inv := range invariants() {
		rows, err := q.Query(inv.query)
		if err != nil {
			t.Fatalf("%s: %v", inv.rule, err)
		}
		var bad []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			bad = append(bad, v)
		}
		rows.Close()
		if len(bad) > 0 {
			t.Errorf("invariant %q broken by %v", inv.rule, bad)
		}
	}
}
