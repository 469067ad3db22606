package main

import (
	"context"
	"testing"
	"time"

	"runsdesk/bench/benchenv"
	"runsdesk/db"
	"runsdesk/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBench is the path bench on a fresh database with two agents and the bench admin.
func testBench(t *testing.T) *pathBench {
	t.Helper()
	ctx := t.Context()
	dsn := dbtest.NewDatabase(t)
	if err := db.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	accounts, err := db.NewAccounts(pool, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.CreateUser(ctx, benchenv.Users[0].Name, benchenv.Password, benchenv.Users[0].Role); err != nil {
		t.Fatal(err)
	}
	d, err := prepare(ctx, &benchenv.Desk{DSN: dsn}, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	b, err := newPathBench(ctx, options{clients: 1, people: 1, wake: 50 * time.Millisecond}, nil, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.close)
	return b
}

// rowsOf counts what request id left: its status and reason, its events, decisions and
// audit rows.
type rowsOf struct {
	status, reason               string
	events, decisions, auditRows int
}

func (b *pathBench) rowsOf(t *testing.T, uid int64, uuid string) rowsOf {
	t.Helper()
	var r rowsOf
	err := b.d.books.QueryRow(`SELECT status, termination_reason,
		(SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = r.uid),
		(SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = r.uid),
		(SELECT COUNT(*) FROM tx_runsdesk_audit WHERE run_uuid = r.uuid)
		FROM tx_nrllm_agentrun r WHERE uid = ? AND uuid = ?`, uid, uuid).Scan(&r.status, &r.reason, &r.events, &r.decisions, &r.auditRows)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newest is the uid and uuid of the newest request.
func (b *pathBench) newest(t *testing.T) (int64, string) {
	t.Helper()
	var uid int64
	var uuid string
	if err := b.d.books.QueryRow(`SELECT uid, uuid FROM tx_nrllm_agentrun ORDER BY uid DESC LIMIT 1`).Scan(&uid, &uuid); err != nil {
		t.Fatal(err)
	}
	return uid, uuid
}

// TestPathAndFloorLeaveTheSameRows: one request through the HTTP path (its approval echoing
// the computed turn digest, which the run page would show) and one through the floor both end
// completed and decided with the same rows: two events, one decision, two audit rows.
func TestPathAndFloorLeaveTheSameRows(t *testing.T) {
	b := testBench(t)
	ctx := t.Context()
	if err := b.viaHTTP(ctx, 0); err != nil {
		t.Fatalf("http: %v", err)
	}
	uid, uuid := b.newest(t)
	path := b.rowsOf(t, uid, uuid)
	if err := b.floor(ctx, 0); err != nil {
		t.Fatalf("floor: %v", err)
	}
	uid, uuid = b.newest(t)
	floor := b.rowsOf(t, uid, uuid)
	want := rowsOf{status: "completed", reason: "decided", events: 2, decisions: 1, auditRows: 2}
	if path != want || floor != want {
		t.Errorf("the path left %+v, the floor %+v; want both %+v", path, floor, want)
	}
	if waits := b.waits.take(); len(waits) != 1 {
		t.Errorf("%d decision-to-answer times, want 1", len(waits))
	}
}

// TestHeldCallsAnswerTheirDecisions: two Go SDK clients' request_approval calls are held;
// a person approves each, and each call answers its approval.
func TestHeldCallsAnswerTheirDecisions(t *testing.T) {
	b := testBench(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	calls, err := startCalls(ctx, b.app.URL, b.d.tokens)
	if err != nil {
		t.Fatal(err)
	}
	defer calls.close()
	ids, err := waitingRequests(ctx, b.d, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		calls.expect(id)
		person := <-b.people
		err := approve(ctx, person, id)
		b.people <- person
		if err != nil {
			t.Fatal(err)
		}
	}
	got, missed := calls.await(10 * time.Second)
	if len(got) != 2 || missed != 0 || calls.errs != 0 {
		t.Fatalf("%d answered, %d missed, %d errors (%v); want 2 answered", len(got), missed, calls.errs, calls.firstErr)
	}
}
