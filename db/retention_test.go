package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime/retention"
)

const day = int64(86400)

// retentionNow is the clock of the retention tests: runs finished days before it.
var retentionNow = time.Unix(t0+400*day, 0)

// insertRetentionConfiguration stores configuration uid with the given periods in days
// (0: forever) and deleted flag.
func insertRetentionConfiguration(t testing.TB, pool *sql.DB, uid int64, outputs, transcripts, runs int64, deleted bool) {
	t.Helper()
	if _, err := pool.Exec(`INSERT INTO tx_nrllm_configuration (uid, identifier, name, provider_options, system_prompt, allowed_tools, notify,
		retention_outputs, retention_transcripts, retention_runs, deleted) VALUES (?, ?, ?, '{}', '', '[]', '', ?, ?, ?, ?)`,
		uid, fmt.Sprintf("cfg-%d", uid), "Config", outputs*day, transcripts*day, runs*day, deleted); err != nil {
		t.Fatalf("insert configuration: %v", err)
	}
}

// retentionRun is a seeded run and what it holds.
type retentionRun struct {
	uid  int64
	uuid string
}

// seedRetentionRuns inserts n runs of configuration cfg in status, finished daysAgo days
// before retentionNow (finished_at 0 when daysAgo < 0), each with an output, contents content
// rows and events, a call, a draft, an outbox row, a decision with arguments and reason and an
// audit row with a reason.
func seedRetentionRuns(t testing.TB, pool *sql.DB, cfg int64, n int, status string, daysAgo int64, contents int) []retentionRun {
	t.Helper()
	finished := retentionNow.Unix() - daysAgo*day
	if daysAgo < 0 {
		finished = 0
	}
	var base int64
	if err := pool.QueryRow(`SELECT COALESCE(MAX(uid), 0) FROM tx_nrllm_agentrun`).Scan(&base); err != nil {
		t.Fatal(err)
	}
	var evBase int64
	if err := pool.QueryRow(`SELECT COALESCE(MAX(uid), 0) FROM tx_nrllm_agentrun_event`).Scan(&evBase); err != nil {
		t.Fatal(err)
	}
	runs := make([]retentionRun, n)
	const chunk = 200
	for start := 0; start < n; start += chunk {
		end := min(start+chunk, n)
		var r, o, e, c, misc []string
		var ra, oa, ea, ca []any
		for i := start; i < end; i++ {
			uid := base + int64(i) + 1
			runs[i] = retentionRun{uid, newUUID()}
			r = append(r, "(?, ?, ?, ?, ?, '', '', ?)")
			ra = append(ra, uid, runs[i].uuid, status, cfg, finished, finished)
			o = append(o, "(?, 'the answer', ?)")
			oa = append(oa, uid, finished)
			for k := 0; k < contents; k++ {
				ev := evBase + int64(i*contents+k) + 1
				e = append(e, "(?, ?, ?, 'model', '{}')")
				ea = append(ea, ev, uid, k)
				c = append(c, "(?, ?, 'full', '{\"text\":\"secret\"}')")
				ca = append(ca, ev, uid)
			}
			misc = append(misc, fmt.Sprint(uid))
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := pool.Exec(q, args...); err != nil {
				t.Fatalf("seed: %v\n%s", err, q[:min(len(q), 200)])
			}
		}
		exec(`INSERT INTO tx_nrllm_agentrun (uid, uuid, status, configuration_uid, finished_at, suspended_state, queued_request, crdate) VALUES `+strings.Join(r, ", "), ra...)
		exec(`INSERT INTO tx_runsdesk_run_output (run, output_text, finished_at) VALUES `+strings.Join(o, ", "), oa...)
		if contents > 0 {
			exec(`INSERT INTO tx_nrllm_agentrun_event (uid, run, sequence, kind, payload) VALUES `+strings.Join(e, ", "), ea...)
			exec(`INSERT INTO tx_runsdesk_event_content (event, run, privacy, content) VALUES `+strings.Join(c, ", "), ca...)
		}
		in := strings.Join(misc, ", ")
		exec(`INSERT INTO tx_runsdesk_call (run, sequence, call_id, tool, proposed, approved, effective, crdate)
			SELECT uid, 1, 'c1', 'lookup', '{"a":1}', '', '', 0 FROM tx_nrllm_agentrun WHERE uid IN (` + in + `)`)
		exec(`INSERT INTO tx_runsdesk_draft (run, be_user, form_values) SELECT uid, 1, 'a=1' FROM tx_nrllm_agentrun WHERE uid IN (` + in + `)`)
		exec(`INSERT INTO tx_runsdesk_comment (run, sequence, author, idempotency_key, body) SELECT uid, 1, 1, 'c1', 'a note' FROM tx_nrllm_agentrun WHERE uid IN (` + in + `)`)
		exec(`INSERT INTO tx_runsdesk_outbox (run, run_uuid, event, channel, target, run_status, kind, tool, configuration_identifier, configuration_name)
			SELECT uid, uuid, 'waiting', 'webhook', '{}', status, 'approval', 'lookup', 'cfg', 'Config' FROM tx_nrllm_agentrun WHERE uid IN (` + in + `)`)
		exec(`INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, arguments, reason)
			SELECT uid, 'k1', 'approval', '{"amount":5}', 'looks right' FROM tx_nrllm_agentrun WHERE uid IN (` + in + `)`)
		exec(`INSERT INTO tx_runsdesk_audit (action, run_uuid, outcome, reason)
			SELECT 'approve', uuid, 'success', 'looks right' FROM tx_nrllm_agentrun WHERE uid IN (` + in + `)`)
	}
	return runs
}

// countWhere is SELECT COUNT(*) FROM table WHERE where.
func countWhere(t testing.TB, pool *sql.DB, table, where string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE `+where, args...).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func runsIn(runs []retentionRun) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprint(r.uid)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func sweep(t testing.TB, s *Store, dryRun bool) retention.Report {
	t.Helper()
	rep, err := s.SweepRetention(context.Background(), retentionNow, dryRun)
	if err != nil {
		t.Fatalf("SweepRetention(dry %v): %v", dryRun, err)
	}
	return rep
}

func TestRetentionClearsExpiredOutputsInBatches(t *testing.T) {
	s, pool := newStore(t)
	insertRetentionConfiguration(t, pool, 1, 30, 365, 0, false)
	old := seedRetentionRuns(t, pool, 1, 2500, "completed", 31, 0)
	young := seedRetentionRuns(t, pool, 1, 3, "completed", 29, 0)
	waiting := seedRetentionRuns(t, pool, 1, 2, "waiting_for_approval", 31, 0)

	rep := sweep(t, s, false)
	if rep.Outputs != 2500 || rep.Transcripts != 0 || rep.Runs != 0 {
		t.Fatalf("report %+v, want 2500 outputs and nothing else", rep)
	}
	if rep.Statements != 3 || rep.Largest > RetentionBatch {
		t.Errorf("statements %d (largest %d rows), want 3 of at most %d", rep.Statements, rep.Largest, RetentionBatch)
	}
	if n := countWhere(t, pool, "tx_runsdesk_run_output", "output_text <> '' AND run IN "+runsIn(old)); n != 0 {
		t.Errorf("%d expired outputs kept", n)
	}
	if n := countWhere(t, pool, "tx_runsdesk_run_output", "output_text = 'the answer' AND run IN "+runsIn(append(young, waiting...))); n != 5 {
		t.Errorf("%d of the 5 young or not terminal outputs kept", n)
	}
	var reason string
	if err := pool.QueryRow(`SELECT reason FROM tx_runsdesk_audit WHERE action = 'retention'`).Scan(&reason); err != nil {
		t.Fatalf("audit row of the pass: %v", err)
	}
	if want := "outputs=2500 transcripts=0 runs=0 events=0 decisions=0 audits=0"; reason != want {
		t.Errorf("audit reason %q, want %q", reason, want)
	}
	if again := sweep(t, s, false); again.Total() != 0 || again.Statements != 0 {
		t.Errorf("second pass %+v, want nothing (the marks moved past the swept runs)", again)
	}
	if n := countWhere(t, pool, "tx_runsdesk_audit", "action = 'retention'"); n != 2 {
		t.Errorf("%d audit rows of passes, want one per pass (2)", n)
	}
}

func TestRetentionDeletesExpiredTranscriptsInBatches(t *testing.T) {
	s, pool := newStore(t)
	insertRetentionConfiguration(t, pool, 1, 365, 30, 0, false)
	old := seedRetentionRuns(t, pool, 1, 5, "failed", 40, 500)
	young := seedRetentionRuns(t, pool, 1, 1, "failed", 10, 20)

	rep := sweep(t, s, false)
	if rep.Transcripts != 2500 || rep.Outputs != 0 || rep.Runs != 0 {
		t.Fatalf("report %+v, want 2500 transcript rows only", rep)
	}
	if rep.Statements != 3 || rep.Largest != RetentionBatch {
		t.Errorf("statements %d (largest %d rows), want 3 of at most %d", rep.Statements, rep.Largest, RetentionBatch)
	}
	if n := countWhere(t, pool, "tx_runsdesk_event_content", "run IN "+runsIn(old)); n != 0 {
		t.Errorf("%d expired transcript rows kept", n)
	}
	if n := countWhere(t, pool, "tx_runsdesk_event_content", "run IN "+runsIn(young)); n != 20 {
		t.Errorf("%d of the young run's 20 transcript rows kept", n)
	}
	if n := countWhere(t, pool, "tx_nrllm_agentrun_event", "run IN "+runsIn(old)); n != 2500 {
		t.Errorf("%d events kept, want all 2500 (only the runs class removes events)", n)
	}
}

func TestRetentionRemovesTerminalRunsKeepingDecisionsAndAudit(t *testing.T) {
	s, pool := newStore(t)
	insertRetentionConfiguration(t, pool, 1, 30, 30, 365, false)
	old := seedRetentionRuns(t, pool, 1, 4, "cancelled", 366, 3)
	young := seedRetentionRuns(t, pool, 1, 2, "completed", 300, 3)
	var alive []retentionRun
	for _, st := range []string{"queued", "running", "waiting_for_approval", "waiting_for_input"} {
		alive = append(alive, seedRetentionRuns(t, pool, 1, 1, st, 366, 3)...)
		alive = append(alive, seedRetentionRuns(t, pool, 1, 1, st, -1, 3)...)
	}

	rep := sweep(t, s, false)
	if rep.Runs != 4 || rep.Events != 12 || rep.Decisions != 4 || rep.Audits != 4 {
		t.Fatalf("report %+v, want 4 runs, 12 events, 4 decisions and 4 audit rows cleared", rep)
	}
	for table, col := range map[string]string{"tx_nrllm_agentrun": "uid", "tx_nrllm_agentrun_event": "run", "tx_runsdesk_event_content": "run",
		"tx_runsdesk_run_output": "run", "tx_runsdesk_call": "run", "tx_runsdesk_draft": "run", "tx_runsdesk_outbox": "run", "tx_runsdesk_comment": "run"} {
		if n := countWhere(t, pool, table, col+" IN "+runsIn(old)); n != 0 {
			t.Errorf("%s: %d rows of removed runs kept", table, n)
		}
		if n := countWhere(t, pool, table, col+" IN "+runsIn(alive)); n == 0 {
			t.Errorf("%s: the rows of runs that are not terminal were removed", table)
		}
	}
	if n := countWhere(t, pool, "tx_nrllm_agentrun", "uid IN "+runsIn(alive)); n != int64(len(alive)) {
		t.Errorf("%d of %d runs that are not terminal kept", n, len(alive))
	}
	if n := countWhere(t, pool, "tx_nrllm_agentrun", "uid IN "+runsIn(young)); n != 2 {
		t.Errorf("%d of 2 young runs kept", n)
	}
	if n := countWhere(t, pool, "tx_runsdesk_decision", "arguments = '' AND reason = '' AND run IN "+runsIn(old)); n != 4 {
		t.Errorf("%d of 4 decision rows of removed runs kept with their content cleared", n)
	}
	uuids := make([]string, len(old))
	for i, r := range old {
		uuids[i] = "'" + r.uuid + "'"
	}
	if n := countWhere(t, pool, "tx_runsdesk_audit", "reason = '' AND run_uuid IN ("+strings.Join(uuids, ", ")+")"); n != 4 {
		t.Errorf("%d of 4 audit rows of removed runs kept with their reason cleared", n)
	}
	if n := countWhere(t, pool, "tx_runsdesk_decision", "reason = 'looks right' AND run IN "+runsIn(append(young, alive...))); n != int64(len(young)+len(alive)) {
		t.Errorf("decisions of kept runs lost their content")
	}
}

func TestRetentionOfADeletedConfigurationIsTheDefault(t *testing.T) {
	s, pool := newStore(t)
	insertRetentionConfiguration(t, pool, 1, 365, 365, 0, true)
	insertRetentionConfiguration(t, pool, 2, 365, 365, 0, false)
	insertRetentionConfiguration(t, pool, 3, 365, 365, 0, false)
	if _, err := pool.Exec(`UPDATE tx_nrllm_configuration SET hidden = 1 WHERE uid = 3`); err != nil {
		t.Fatal(err)
	}
	deleted := seedRetentionRuns(t, pool, 1, 2, "completed", 31, 2)
	deleted = append(deleted, seedRetentionRuns(t, pool, 3, 1, "completed", 31, 2)...)
	missing := seedRetentionRuns(t, pool, 99, 2, "completed", 31, 2)
	live := seedRetentionRuns(t, pool, 2, 2, "completed", 31, 2)

	rep := sweep(t, s, false)
	if rep.Outputs != 5 || rep.Transcripts != 10 || rep.Runs != 0 {
		t.Fatalf("report %+v, want the 5 outputs and 10 transcript rows of runs without a live configuration", rep)
	}
	if n := countWhere(t, pool, "tx_runsdesk_run_output", "output_text = '' AND run IN "+runsIn(append(deleted, missing...))); n != 5 {
		t.Errorf("%d of 5 outputs under the default cleared", n)
	}
	if n := countWhere(t, pool, "tx_runsdesk_run_output", "output_text <> '' AND run IN "+runsIn(live)); n != 2 {
		t.Errorf("%d of 2 outputs of the live configuration (365 days) kept", n)
	}
}

func TestRetentionDryRunReportsThePassAndRemovesNothing(t *testing.T) {
	s, pool := newStore(t)
	insertRetentionConfiguration(t, pool, 1, 30, 60, 365, false)
	seedRetentionRuns(t, pool, 1, 1200, "completed", 400, 2)
	seedRetentionRuns(t, pool, 1, 30, "completed", 45, 2)
	seedRetentionRuns(t, pool, 1, 30, "failed", 90, 2)
	seedRetentionRuns(t, pool, 1, 5, "waiting_for_input", 400, 2)
	rows := func() string {
		var parts []string
		for _, table := range []string{"tx_nrllm_agentrun", "tx_nrllm_agentrun_event", "tx_runsdesk_event_content", "tx_runsdesk_call", "tx_runsdesk_outbox"} {
			parts = append(parts, fmt.Sprint(countWhere(t, pool, table, "1")))
		}
		parts = append(parts, fmt.Sprint(countWhere(t, pool, "tx_runsdesk_run_output", "output_text <> ''")),
			fmt.Sprint(countWhere(t, pool, "tx_runsdesk_decision", "reason <> ''")), fmt.Sprint(countWhere(t, pool, "tx_runsdesk_audit", "1")))
		return strings.Join(parts, " ")
	}
	before := rows()
	dry := sweep(t, s, true)
	if after := rows(); after != before {
		t.Fatalf("a dry run changed the rows: %s → %s", before, after)
	}
	if !dry.DryRun || dry.Statements != 0 || dry.Total() == 0 {
		t.Fatalf("dry run report %+v", dry)
	}
	real := sweep(t, s, false)
	dry.DryRun, dry.Statements, dry.Largest = false, real.Statements, real.Largest
	if dry != real {
		t.Errorf("dry run reported %+v, the pass did %+v", dry, real)
	}
}

func TestRetentionRunsOnePassAtATime(t *testing.T) {
	s, pool := newStore(t)
	insertRetentionConfiguration(t, pool, 1, 30, 30, 0, false)
	seedRetentionRuns(t, pool, 1, 3000, "completed", 31, 0)
	if _, err := pool.Exec(`INSERT INTO schema_migrations_lock (id, owner, expires) VALUES (?, 'other:1:x', UNIX_TIMESTAMP() + 60)`, retentionLease); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SweepRetention(context.Background(), retentionNow, false); !errors.Is(err, retention.ErrBusy) {
		t.Fatalf("SweepRetention while another process holds the lease: %v, want ErrBusy", err)
	}
	if n := countWhere(t, pool, "tx_runsdesk_run_output", "output_text = ''"); n != 0 {
		t.Fatalf("a refused pass cleared %d outputs", n)
	}
	if _, err := pool.Exec(`DELETE FROM schema_migrations_lock WHERE id = ?`, retentionLease); err != nil {
		t.Fatal(err)
	}

	other := New(pool)
	var wg sync.WaitGroup
	reps := make([]retention.Report, 2)
	errs := make([]error, 2)
	for i, st := range []*Store{s, other} {
		wg.Go(func() { reps[i], errs[i] = st.SweepRetention(context.Background(), retentionNow, false) })
	}
	wg.Wait()
	var total int64
	for i := range reps {
		if errs[i] != nil && !errors.Is(errs[i], retention.ErrBusy) {
			t.Fatalf("pass %d: %v", i, errs[i])
		}
		total += reps[i].Outputs
	}
	if total != 3000 {
		t.Errorf("the two passes cleared %d outputs between them, want each of the 3000 once", total)
	}
	if n := countWhere(t, pool, "tx_runsdesk_audit", "action = 'retention'"); n != int64(2-countBusy(errs)) {
		t.Errorf("%d audit rows of passes for %d passes that ran", n, 2-countBusy(errs))
	}
	t.Logf("busy: %d of 2", countBusy(errs))
}

func countBusy(errs []error) int {
	n := 0
	for _, err := range errs {
		if errors.Is(err, retention.ErrBusy) {
			n++
		}
	}
	return n
}
