package seed_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"runsdesk/bench/seed"
	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/runtime"
	"runsdesk/typo3/backend/backendtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestSeedCountsAndStates(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.NewDatabase(t)
	if err := db.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	tpls, err := seed.Synthetic(1, "refunds", 2000)
	if err != nil {
		t.Fatal(err)
	}
	const now = int64(1_800_000_000)
	rep, err := seed.Seed(ctx, pool, seed.Options{Runs: 1000, Templates: tpls, Now: now, Batch: 300})
	if err != nil {
		t.Fatal(err)
	}
	want := seed.Report{Runs: 1000, Approval: 50, Input: 50, Queued: 10, Running: 10, Terminal: 880,
		Events: 300, Decisions: 176, FirstUID: 1, LastUID: 1000}
	rep.Elapsed = 0
	if rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	counts := map[string]int{}
	queryEach(t, pool, `SELECT status, COUNT(*) FROM tx_nrllm_agentrun GROUP BY status`, func(rows *sql.Rows) {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		counts[s] = n
	})
	if counts["waiting_for_approval"] != 50 || counts["waiting_for_input"] != 50 || counts["queued"] != 10 || counts["running"] != 10 {
		t.Errorf("status counts %v", counts)
	}
	var distinct, events, decisions int
	scalar(t, pool, `SELECT COUNT(DISTINCT uuid) FROM tx_nrllm_agentrun`, &distinct)
	scalar(t, pool, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event`, &events)
	scalar(t, pool, `SELECT COUNT(*) FROM tx_runsdesk_decision`, &decisions)
	if distinct != 1000 || events != 300 || decisions != 176 {
		t.Errorf("distinct uuids %d, events %d, decisions %d", distinct, events, decisions)
	}

	s := db.New(pool)
	page, err := s.ListWaiting(ctx, runtime.WaitingQuery{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 100 {
		t.Fatalf("ListWaiting returned %d runs, want 100", len(page))
	}
	for _, r := range page {
		st, err := runtime.DecodeState(r.SuspendedState)
		if err != nil {
			t.Fatalf("run %d: %v", r.UID, err)
		}
		if st.IsInputPause() != (r.Status == runtime.StatusWaitingInput) {
			t.Errorf("run %d: status %s but input pause %v", r.UID, r.Status, st.IsInputPause())
		}
		if r.SuspendedAt <= 0 || r.SuspendedAt > now || r.PendingTools == "" {
			t.Errorf("run %d: suspended_at %d, pending_tools %q", r.UID, r.SuspendedAt, r.PendingTools)
		}
	}
	stale, err := s.FindStale(ctx, now, 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != 5 {
		t.Errorf("FindStale found %d runs, want 5 (every other running run)", len(stale))
	}
}

func TestSeedIsDeterministic(t *testing.T) {
	ctx := context.Background()
	tpls, err := seed.Synthetic(1, "refunds", 100)
	if err != nil {
		t.Fatal(err)
	}
	var uuids [2][]string
	for i := range uuids {
		dsn := dbtest.NewDatabase(t)
		if err := db.Migrate(ctx, dsn); err != nil {
			t.Fatal(err)
		}
		pool, err := db.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := seed.Seed(ctx, pool, seed.Options{Runs: 50, Templates: tpls, Now: 1_800_000_000}); err != nil {
			t.Fatal(err)
		}
		queryEach(t, pool, `SELECT uuid FROM tx_nrllm_agentrun ORDER BY uid`, func(rows *sql.Rows) {
			var u string
			if err := rows.Scan(&u); err != nil {
				t.Fatal(err)
			}
			uuids[i] = append(uuids[i], u)
		})
		pool.Close()
	}
	if len(uuids[0]) != 50 || len(uuids[0]) != len(uuids[1]) {
		t.Fatalf("got %d and %d runs", len(uuids[0]), len(uuids[1]))
	}
	for i := range uuids[0] {
		if uuids[0][i] != uuids[1][i] {
			t.Fatalf("run %d: uuid %s then %s", i, uuids[0][i], uuids[1][i])
		}
	}
}

func TestSeedSharesOutAssignments(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.NewDatabase(t)
	if err := db.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	tpls, err := seed.Synthetic(1, "refunds", 100)
	if err != nil {
		t.Fatal(err)
	}
	people := []seed.Assignee{{UID: 1, Name: "ada"}, {UID: 2, Name: "alan"}}
	if _, err := seed.Seed(ctx, pool, seed.Options{Runs: 3000, Templates: tpls, Now: 1_800_000_000, Assignees: people}); err != nil {
		t.Fatal(err)
	}
	shares := map[string]int{}
	queryEach(t, pool, `SELECT CONCAT(status, ' ', assignee, ' ', assignee_name, ' ', assigned_at = suspended_at), COUNT(*)
		FROM tx_nrllm_agentrun GROUP BY 1`, func(rows *sql.Rows) {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		shares[k] = n
	})
	for _, status := range []string{"waiting_for_approval", "waiting_for_input"} {
		for _, k := range []string{status + " 0  0", status + " 1 ada 1", status + " 2 alan 1"} {
			if n := shares[k]; n < 30 || n > 70 {
				t.Errorf("%d runs %q, want about 50 (150 of each kind shared by three)", n, k)
			}
		}
	}
	for k, n := range shares {
		if !strings.HasPrefix(k, "waiting_") && !strings.Contains(k, " 0  ") {
			t.Errorf("%d runs %q: only waiting runs are assigned", n, k)
		}
	}
}

func TestSeedRefusesBadOptions(t *testing.T) {
	tpls, err := seed.Synthetic(1, "refunds", 100)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]seed.Options{
		"no runs":      {Templates: tpls},
		"no templates": {Runs: 10},
		"percent":      {Runs: 10, Templates: tpls, WaitingPercent: 101},
		"not a pause":  {Runs: 10, Templates: []seed.Template{{Status: "completed"}}},
	} {
		if _, err := seed.Seed(context.Background(), nil, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func queryEach(t *testing.T, pool *sql.DB, query string, each func(*sql.Rows)) {
	t.Helper()
	rows, err := pool.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		each(rows)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func scalar(t *testing.T, pool *sql.DB, query string, dest any) {
	t.Helper()
	if err := pool.QueryRowContext(context.Background(), query).Scan(dest); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestExtensionBesideTYPO3: beside a TYPO3 site, Seed through a renaming pool writes only
// runsdesk's tables and Extension only the site's tx_nrllm_agentrun, with Seed's mix of
// statuses and no events; runsdesk's inbox lists its own waiting runs, none of the site's.
func TestExtensionBesideTYPO3(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.NewDatabase(t)
	site, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { site.Close() })
	backendtest.Create(t, site)
	if err := db.Migrate(ctx, dsn, db.BesideTYPO3()); err != nil {
		t.Fatal(err)
	}
	own, err := db.Open(ctx, dsn, db.BesideTYPO3())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })
	tpls, err := seed.Synthetic(1, "refunds", 200)
	if err != nil {
		t.Fatal(err)
	}
	const now = int64(1_800_000_000)
	if _, err := seed.Seed(ctx, own, seed.Options{Runs: 200, Templates: tpls, Now: now}); err != nil {
		t.Fatal(err)
	}
	rep, err := seed.Extension(ctx, site, seed.Options{Runs: 1000, Templates: tpls, Now: now, Batch: 300, RandSeed: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep.Elapsed = 0
	want := seed.Report{Runs: 1000, Approval: 50, Input: 50, Queued: 10, Running: 10, Terminal: 880, FirstUID: 1, LastUID: 1000}
	if rep != want {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	counts := map[string]int{}
	queryEach(t, site, `SELECT status, COUNT(*) FROM tx_nrllm_agentrun GROUP BY status`, func(rows *sql.Rows) {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		counts[s] = n
	})
	if counts["waiting_for_approval"] != 50 || counts["waiting_for_input"] != 50 || counts["queued"] != 10 ||
		counts["running"] != 10 || counts["completed"]+counts["failed"]+counts["cancelled"] != 880 {
		t.Errorf("the site's status counts %v", counts)
	}
	var ownRuns, ownEvents int
	scalar(t, site, `SELECT COUNT(*) FROM `+db.TYPO3Table("tx_nrllm_agentrun"), &ownRuns)
	scalar(t, site, `SELECT COUNT(*) FROM `+db.TYPO3Table("tx_nrllm_agentrun_event"), &ownEvents)
	if ownRuns != 200 || ownEvents != 60 {
		t.Errorf("runsdesk's tables hold %d runs and %d events, want 200 and 60", ownRuns, ownEvents)
	}
	page, err := db.New(own).ListWaiting(ctx, runtime.WaitingQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 20 {
		t.Errorf("the inbox lists %d runs, want runsdesk's 20 waiting", len(page))
	}
}
