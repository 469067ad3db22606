package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/bench/seed"
	"runsdesk/runtime"
)

// explainRuns is the size of the seeded table: large enough that the optimizer prefers an
// index over a scan wherever one serves the query.
const explainRuns = 4000

// TestExplainUsesIndexes runs every inbox, run-list, run-page, reaper, expirer and outbox query the Store issues (each
// ListWaiting and CountWaiting filter combination, keyset pages included) on a seeded and
// analysed table, captures the SQL text and arguments the Store sends through a recording
// connector, and EXPLAINs each one: every table access must go through an index (type not
// ALL, key not NULL, or an aggregate the optimizer answers from an index alone), and a call of
// plannedKeys through its range.
func TestExplainUsesIndexes(t *testing.T) {
	ctx := context.Background()
	dsn := newMigrated(t)
	plain, err := Open(ctx, dsn, testLayout()...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { plain.Close() })
	fx := seedForExplain(t, plain)
	if len(testLayout()) > 0 {
		checkSeededBesideSite(t, dsn)
	}

	rec := &recorder{}
	recPool := openRecording(t, dsn, rec)
	s := New(recPool)
	for _, c := range explainCalls(fx) {
		rec.reset()
		if err := c.call(ctx, s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sent := rec.take()
		if strings.HasPrefix(c.name, "ListRuns(") && len(sent) != 1 {
			t.Errorf("%s sent %d statements, want 1 (a page of the API's run list)", c.name, len(sent))
		}
		if want := auditStatements(c.name); strings.HasPrefix(c.name, "ListAudit(") && len(sent) != want {
			t.Errorf("%s sent %d statements, want %d (a page of the audit trail)", c.name, len(sent), want)
		}
		if c.name == "AppliedDesk" && len(sent) != 5 {
			t.Errorf("%s sent %d statements, want 5 (configurations, tools, standing approvals, failed and sent notifications)", c.name, len(sent))
		}
		if c.name == "QueueHealth" {
			if len(sent) != 4 {
				t.Errorf("%s sent %d statements, want 4 (waiting runs, decisions, failed notifications, people; at most 8)", c.name, len(sent))
			}
			for _, q := range sent {
				if !strings.HasPrefix(strings.TrimSpace(q.query), "SELECT") {
					t.Errorf("%s writes (it keeps no rollup row): %.80s", c.name, q.query)
				}
			}
		}
		for i, q := range sent {
			name := c.name
			if i > 0 {
				name = fmt.Sprintf("%s#%d", c.name, i)
			}
			if wholeTableReads[q.query] || insertsValues(q.query) {
				continue
			}
			plan := checkPlan(t, plain, name, q)
			if want, ok := plannedKeys[name]; ok && (len(plan) != 1 || plan[0]["key"] != want || plan[0]["type"] != "range") {
				t.Errorf("%s: plan %v, want a range on KEY %s", name, plan, want)
			}
		}
	}
}

// plannedKeys names the index a call's one statement must read as a range: the expirer's scan,
// which finds due reminders, escalations, expiries and remote requests for input alike, reads
// only due rows on KEY wait_due however many pauses wait.
// The live desk's feed reads the runs changed since its cursor as one range of KEY changed.
// The queue's health reads its waiting runs, its window's decisions and its failed
// notifications each as one range.
var plannedKeys = map[string]string{"FindDue": "wait_due", "RunChanges#1": "changed",
	"QueueHealth": "waiting_status", "QueueHealth#1": "crdate", "QueueHealth#2": "state_crdate"}

// wholeTableReads are the statements that read a small table whole by design: the retention
// pass reads the stored policies (one row per configuration) and its marks (three per
// configuration) before it removes anything; the applied desk reads every configuration,
// tool and standing approval (one row per item an apply file holds).
var wholeTableReads = map[string]bool{sqlRetentionPolicies: true, sqlRetentionMarks: true,
	sqlConfigurations: true, sqlToolDefinitions: true, sqlStandingApprovals: true}

// insertsValues reports whether query inserts a row of values, reading no table.
func insertsValues(query string) bool {
	return strings.HasPrefix(strings.TrimSpace(query), "INSERT") && !strings.Contains(query, "SELECT")
}

// explainFixture holds values taken from the seeded rows, so that each lookup finds data.
type explainFixture struct {
	cfgUID                  int64
	uuid, prefix            string
	waitingUID, decidedRun  int64
	decisionKey             string
	since, afterAt, afterID int64
	finishedAt, finishedUID int64
	now                     int64
	auditRun                string
	auditUID                int64
}

// auditFilters are the audit trail's filters EXPLAINed: each alone, combined, and with the
// keyset cursor.
func auditFilters(fx explainFixture) []runtime.AuditFilter {
	day := int64(86400)
	return []runtime.AuditFilter{
		{Limit: 51},
		{Before: fx.auditUID, Limit: 51},
		{Actor: "person7", Limit: 51},
		{Action: "login", Limit: 51},
		{RunUUID: fx.auditRun, Limit: 51},
		{Outcome: "denied", Limit: 51},
		{Since: fx.now - day, Limit: 51},
		{Since: fx.now - 2*day, Until: fx.now - day, Limit: 51},
		{Actor: "person7", Action: "login", Before: fx.auditUID, Limit: 51},
		{Actor: "person3", Outcome: "denied", Since: fx.now - 3*day, Limit: 51},
	}
}

// auditStatements is how many statements the ListAudit call named name sends: the page, and
// before it the uid range of a time range.
func auditStatements(name string) int {
	if strings.Contains(name, "since") || strings.Contains(name, "until") {
		return 2
	}
	return 1
}

// describeAudit names an audit filter for test output: its set fields.
func describeAudit(f runtime.AuditFilter) string {
	var parts []string
	for _, p := range []struct {
		name string
		set  bool
	}{{"actor", f.Actor != ""}, {"action", f.Action != ""}, {"run", f.RunUUID != ""}, {"outcome", f.Outcome != ""},
		{"since", f.Since > 0}, {"until", f.Until > 0}, {"before", f.Before > 0}} {
		if p.set {
			parts = append(parts, p.name)
		}
	}
	return "(" + strings.Join(parts, ",") + ")"
}

func seedForExplain(t *testing.T, pool *sql.DB) explainFixture {
	t.Helper()
	ctx := context.Background()
	var tpls []seed.Template
	for _, cfg := range []struct {
		uid   int64
		ident string
	}{{1, "refunds"}, {2, "customer-care"}, {3, "billing"}} {
		ts, err := seed.Synthetic(cfg.uid, cfg.ident, 1500)
		if err != nil {
			t.Fatal(err)
		}
		tpls = append(tpls, ts...)
	}
	if _, err := seed.Seed(ctx, pool, seed.Options{Runs: explainRuns, Templates: tpls, Now: t0}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	for uid := int64(1); uid <= 20; uid++ {
		if _, err := pool.ExecContext(ctx, `INSERT INTO be_users (uid, username) VALUES (?, ?)`, uid, fmt.Sprintf("person%d", uid)); err != nil {
			t.Fatalf("seed people: %v", err)
		}
	}
	for uid, ident := range map[int64]string{1: "refunds", 2: "customer-care", 3: "billing"} {
		if _, err := pool.ExecContext(ctx, `INSERT INTO tx_nrllm_configuration (uid, identifier, name, provider_options, system_prompt, allowed_tools, notify)
			VALUES (?, ?, ?, '{}', '', '[]', '')`, uid, ident, "Desk "+ident); err != nil {
			t.Fatalf("seed configurations: %v", err)
		}
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET expires_at = suspended_at + 3600, wait_due = suspended_at + 3600
		WHERE suspended_at > 0 AND uid % 10 = 0`); err != nil {
		t.Fatalf("seed deadlines: %v", err)
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET elicitation_expires = suspended_at + 900,
		wait_due = IF(wait_due = 0, suspended_at + 900, LEAST(wait_due, suspended_at + 900))
		WHERE status = 'waiting_for_input' AND uid % 7 = 0`); err != nil {
		t.Fatalf("seed requests for input: %v", err)
	}
	seedOutbox(t, pool)
	for _, q := range []string{`UPDATE tx_nrllm_configuration SET retention_runs = 30 * 86400 WHERE uid = 3`,
		`INSERT INTO tx_runsdesk_run_output (run, output_text, finished_at) SELECT uid, 'answer', finished_at FROM tx_nrllm_agentrun WHERE finished_at > 0`,
		`INSERT INTO tx_runsdesk_event_content (event, run, privacy, content) SELECT uid, run, 'full', '{}' FROM tx_nrllm_agentrun_event`,
		`INSERT INTO tx_runsdesk_call (run, sequence, call_id, tool, proposed, approved, effective, crdate)
			SELECT uid, 1, 'c', 'lookup_order', '{}', '', '', 0 FROM tx_nrllm_agentrun`,
		`INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, arguments, reason)
			SELECT uid, CONCAT('retention-', uid), 'approval', '{}', 'ok' FROM tx_nrllm_agentrun`,
		`INSERT INTO tx_runsdesk_audit (action, run_uuid, outcome, reason) SELECT 'approve', uuid, 'success', 'ok' FROM tx_nrllm_agentrun`,
		`UPDATE tx_runsdesk_audit SET actor_name = CONCAT('person', uid % 20), crdate = ` + strconv.FormatInt(t0, 10) + ` - 60 * (5000 - uid),
			action = ELT(1 + uid % 4, 'approval', 'login', 'assign', 'comment'), outcome = IF(uid % 9 = 0, 'denied', 'success')`,
		`INSERT INTO tx_runsdesk_draft (run, be_user, form_values) SELECT uid, 1, 'a=1' FROM tx_nrllm_agentrun`,
		`INSERT INTO tx_runsdesk_comment (run, sequence, author, idempotency_key, body) SELECT uid, 1, 1, CONCAT('c-', uid), 'a note' FROM tx_nrllm_agentrun`} {
		if _, err := pool.ExecContext(ctx, q); err != nil {
			t.Fatalf("seed retention: %v", err)
		}
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_runsdesk_decision SET crdate = ? - uid * 600, paused_at = ? - uid * 600 - uid % 7 * 60,
		configuration_identifier = 'refunds', pending_tools = 'lookup_order', decided_by = uid % 20 WHERE uid % 4 = 0`, t0, t0); err != nil {
		t.Fatalf("seed decision times: %v", err)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_session (session_id, be_user, crdate, last_seen, expires_at)
		SELECT CONCAT('session-', u.uid, '-', r.uid), u.uid, ?, ? - r.uid, ? + 1800 - r.uid * 100
		FROM be_users u JOIN tx_nrllm_agentrun r ON r.uid <= 50`, t0-7200, t0, t0); err != nil {
		t.Fatalf("seed the session index: %v", err)
	}
	for _, table := range []string{"tx_nrllm_agentrun", "tx_nrllm_agentrun_event", "tx_runsdesk_decision", "be_users", "tx_nrllm_configuration", "tx_runsdesk_outbox", "tx_runsdesk_session",
		"tx_runsdesk_run_output", "tx_runsdesk_event_content", "tx_runsdesk_call", "tx_runsdesk_audit", "tx_runsdesk_draft", "tx_runsdesk_comment"} {
		rows, err := pool.QueryContext(ctx, "ANALYZE TABLE "+table)
		if err != nil {
			t.Fatalf("analyze %s: %v", table, err)
		}
		rows.Close()
	}
	fx := explainFixture{cfgUID: 2, now: t0}
	q := func(query string, dest ...any) {
		t.Helper()
		if err := pool.QueryRowContext(ctx, query).Scan(dest...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	q(`SELECT uid, uuid FROM tx_nrllm_agentrun WHERE suspended_at > 0 ORDER BY uid LIMIT 1`, &fx.waitingUID, &fx.uuid)
	fx.prefix = fx.uuid[:4]
	q(`SELECT suspended_at, uid FROM tx_nrllm_agentrun WHERE suspended_at > 0 ORDER BY suspended_at, uid LIMIT 1 OFFSET 100`, &fx.afterAt, &fx.afterID)
	q(`SELECT suspended_at FROM tx_nrllm_agentrun WHERE suspended_at > 0 ORDER BY suspended_at LIMIT 1 OFFSET 300`, &fx.since)
	q(`SELECT finished_at, uid FROM tx_nrllm_agentrun WHERE finished_at > 0 ORDER BY finished_at DESC, uid DESC LIMIT 1 OFFSET 500`, &fx.finishedAt, &fx.finishedUID)
	q(`SELECT run, idempotency_key FROM tx_runsdesk_decision ORDER BY uid LIMIT 1`, &fx.decidedRun, &fx.decisionKey)
	q(`SELECT run_uuid, uid FROM tx_runsdesk_audit ORDER BY uid LIMIT 1 OFFSET 2000`, &fx.auditRun, &fx.auditUID)
	if _, _, err := New(pool).AppendChain(ctx, t0-60*2500, t0); err != nil { // about half the audit rows chained
		t.Fatalf("seed the audit chain: %v", err)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_chain_checkpoint (seq, hash, crdate, note) SELECT seq, hash, crdate, '' FROM tx_runsdesk_chain WHERE seq % 500 = 0`); err != nil {
		t.Fatalf("seed checkpoints: %v", err)
	}
	for _, table := range []string{"tx_runsdesk_chain", "tx_runsdesk_chain_checkpoint"} {
		if _, err := pool.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
			t.Fatalf("analyze %s: %v", table, err)
		}
	}
	return fx
}

// checkSeededBesideSite fails t unless the seeded runs are in runsdesk's own table and the
// site's tx_nrllm_agentrun is still empty: the plans are then those of the TYPO3 layout.
func checkSeededBesideSite(t *testing.T, dsn string) {
	t.Helper()
	site, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer site.Close()
	for table, want := range map[string]int{"tx_nrllm_agentrun": 0, TYPO3Table("tx_nrllm_agentrun"): explainRuns} {
		var n int
		if err := site.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		if n != want {
			t.Fatalf("%s holds %d runs, want %d", table, n, want)
		}
	}
}

// explainCall is one Store call whose statements are explained.
type explainCall struct {
	name string
	call func(context.Context, *Store) error
}

func explainCalls(fx explainFixture) []explainCall {
	var out []explainCall
	for _, q := range waitingQueries(fx) {
		out = append(out, explainCall{"ListWaiting" + describe(q), func(ctx context.Context, s *Store) error {
			_, err := s.ListWaiting(ctx, q)
			return err
		}})
		if q.Status == "" && q.AfterUID == 0 {
			out = append(out, explainCall{"CountWaiting" + describe(q), func(ctx context.Context, s *Store) error {
				_, err := s.CountWaiting(ctx, q)
				return err
			}})
		}
	}
	one := func(name string, f func(context.Context, *Store) error) {
		out = append(out, explainCall{name, f})
	}
	for _, f := range auditFilters(fx) {
		one("ListAudit"+describeAudit(f), func(ctx context.Context, s *Store) error {
			_, err := NewAudit(s.db, nil).ListAudit(ctx, f)
			return err
		})
	}
	one("DeskCursor", func(ctx context.Context, s *Store) error {
		_, err := s.DeskCursor(ctx)
		return err
	})
	one("RunChanges", func(ctx context.Context, s *Store) error {
		at, err := s.DeskCursor(ctx)
		if err == nil {
			_, err = s.RunChanges(ctx, at-2_000_000, 1000)
		}
		return err
	})
	one("AppendChain", func(ctx context.Context, s *Store) error {
		_, _, err := s.AppendChain(ctx, fx.now, fx.now)
		return err
	})
	one("ChainEntries", func(ctx context.Context, s *Store) error {
		_, err := s.ChainEntries(ctx, 100, 1000)
		return err
	})
	one("ChainHash", func(ctx context.Context, s *Store) error {
		_, _, err := s.ChainHash(ctx, 100)
		return err
	})
	one("Strays", func(ctx context.Context, s *Store) error {
		_, err := s.Strays(ctx, fx.now)
		return err
	})
	one("LastCheckpoint", func(ctx context.Context, s *Store) error {
		_, _, err := s.LastCheckpoint(ctx)
		return err
	})
	one("QueueHealth", func(ctx context.Context, s *Store) error {
		_, err := s.QueueHealth(ctx, fx.now, true)
		return err
	})
	one("ListRecent", func(ctx context.Context, s *Store) error {
		_, err := s.ListRecent(ctx, runtime.RecentQuery{Limit: 50})
		return err
	})
	one("ListRecent(before)", func(ctx context.Context, s *Store) error {
		_, err := s.ListRecent(ctx, runtime.RecentQuery{BeforeFinishedAt: fx.finishedAt, BeforeUID: fx.finishedUID, Limit: 50})
		return err
	})
	for _, q := range listRunsQueries(fx) {
		one("ListRuns("+string(q.Group)+describe(q.Filter)+fmt.Sprint(len(q.Statuses))+")", func(ctx context.Context, s *Store) error {
			_, err := s.ListRuns(ctx, q)
			return err
		})
	}
	one("ListQueued", func(ctx context.Context, s *Store) error { _, err := s.ListQueued(ctx, fx.now, 4); return err })
	for _, keys := range []runtime.RequestKeys{{ExternalID: "ticket-1"}, {IdempotencyKey: "key-1"}} {
		one("FindRequest"+describeKeys(keys), func(ctx context.Context, s *Store) error {
			_, _, err := s.FindRequest(ctx, fx.cfgUID, "ci", keys)
			if errors.Is(err, runtime.ErrNotFound) {
				return nil
			}
			return err
		})
	}
	one("AssignmentLoads", func(ctx context.Context, s *Store) error { _, err := s.AssignmentLoads(ctx, []int64{3, 7}); return err })
	one("Seen", func(ctx context.Context, s *Store) error {
		_, err := s.Seen(ctx, fx.waitingUID, 3, fx.now, fx.now-30)
		return err
	})
	sessions := func(s *Store) *SessionIndex { return NewSessionIndex(s.db) }
	one("SessionIndex.Find", func(ctx context.Context, s *Store) error { _, err := sessions(s).Find(ctx, "session-7-3"); return err })
	one("SessionIndex.Touch", func(ctx context.Context, s *Store) error {
		return sessions(s).Touch(ctx, "session-7-3", fx.now, fx.now-59, "192.0.2.1", fx.now+1800)
	})
	one("SessionIndex.List", func(ctx context.Context, s *Store) error { _, err := sessions(s).List(ctx, 7, 0, fx.now); return err })
	one("SessionIndex.End", func(ctx context.Context, s *Store) error {
		if err := sessions(s).End(ctx, 7, "session-7-3", 1, fx.now); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			return err
		}
		return nil
	})
	one("SessionIndex.EndOthers", func(ctx context.Context, s *Store) error {
		_, err := sessions(s).EndOthers(ctx, 7, "session-7-3", fx.now)
		return err
	})
	one("SessionIndex.Forget", func(ctx context.Context, s *Store) error { return sessions(s).Forget(ctx, "session-8-1") })
	one("SessionStore.FindCtx(user, index)", func(ctx context.Context, s *Store) error {
		store := NewSessionStore(s.db, DefaultSessionExpirySlack)
		if err := store.CommitCtx(ctx, "explain-token", []byte("data"), time.Unix(fx.now, 0).Add(24*365*time.Hour)); err != nil {
			return err
		}
		store.users.Put("explain-token", 7)
		store.indexIDs.Put("explain-token", "session-7-3")
		_, _, err := store.FindCtx(WithSessionAccount(ctx), "explain-token")
		return err
	})
	one("DeleteExpiredSessionIndex", func(ctx context.Context, s *Store) error {
		_, err := DeleteExpiredSessionIndex(ctx, s.db)
		return err
	})
	one("FindStale", func(ctx context.Context, s *Store) error { _, err := s.FindStale(ctx, fx.now, 50); return err })
	for _, q := range []runtime.WaitingQuery{
		{ByExpiry: true, Limit: 50},
		{ByExpiry: true, Status: runtime.StatusWaitingApproval, Limit: 50},
		{ByExpiry: true, Status: runtime.StatusWaitingInput, AfterExpiresAt: fx.now - 86400, AfterUID: 1, Limit: 50},
		{ExpiringBefore: fx.now + 3600, Limit: 50},
		{ExpiringBefore: fx.now + 3600, Status: runtime.StatusWaitingInput, Limit: 50},
		{Escalated: true, Limit: 50},
	} {
		one(fmt.Sprintf("ListWaiting(deadline %+v)", q), func(ctx context.Context, s *Store) error {
			_, err := s.ListWaiting(ctx, q)
			return err
		})
	}
	one("FindDue", func(ctx context.Context, s *Store) error { _, err := s.FindDue(ctx, fx.now, 100); return err })
	one("FindLapsedHolds", func(ctx context.Context, s *Store) error { _, err := s.FindLapsedHolds(ctx, fx.now, 100); return err })
	one("FindHolds", func(ctx context.Context, s *Store) error {
		_, err := s.FindHolds(ctx, []int64{fx.waitingUID, fx.decidedRun})
		return err
	})
	one("FindByUUID", func(ctx context.Context, s *Store) error { _, err := s.FindByUUID(ctx, fx.uuid); return err })
	one("FindByUID", func(ctx context.Context, s *Store) error { _, err := s.FindByUID(ctx, fx.waitingUID); return err })
	one("Events", func(ctx context.Context, s *Store) error { _, err := s.Events(ctx, fx.waitingUID, -1); return err })
	one("Events(after)", func(ctx context.Context, s *Store) error { _, err := s.Events(ctx, fx.waitingUID, 1); return err })
	one("MaxSequence", func(ctx context.Context, s *Store) error { _, err := s.MaxSequence(ctx, fx.waitingUID); return err })
	one("GovernanceEvents", func(ctx context.Context, s *Store) error {
		_, err := s.GovernanceEvents(ctx, fx.waitingUID, fx.uuid)
		return err
	})
	one("ExecutedCalls", func(ctx context.Context, s *Store) error { _, err := s.ExecutedCalls(ctx, fx.waitingUID); return err })
	one("Comments", func(ctx context.Context, s *Store) error { _, err := s.Comments(ctx, fx.waitingUID, ""); return err })
	one("FindComment", func(ctx context.Context, s *Store) error {
		_, err := s.FindComment(ctx, fx.waitingUID, "", fmt.Sprintf("c-%d", fx.waitingUID))
		return err
	})
	one("FindDecision", func(ctx context.Context, s *Store) error {
		_, err := s.FindDecision(ctx, fx.decidedRun, fx.decisionKey)
		return err
	})
	one("LatestDecision", func(ctx context.Context, s *Store) error { _, err := s.LatestDecision(ctx, fx.decidedRun); return err })
	one("CountByStatus", func(ctx context.Context, s *Store) error { _, err := s.CountByStatus(ctx); return err })
	one("WaitingAges", func(ctx context.Context, s *Store) error {
		_, _, err := s.WaitingAges(ctx, fx.now, []int64{60, 3600, 86400})
		return err
	})
	one("CountLeased", func(ctx context.Context, s *Store) error { _, err := s.CountLeased(ctx); return err })
	one("enqueueNotifications", func(ctx context.Context, s *Store) error {
		return enqueueNotifications(ctx, s.db, fx.waitingUID, notice{Event: runtime.NotifyWaiting, Now: fx.now}, nil)
	})
	one("ClaimNotifications", func(ctx context.Context, s *Store) error {
		_, err := s.ClaimNotifications(ctx, "explain", fx.now, fx.now+30, 1, runtime.NotifyReach{})
		return err
	})
	one("RunNotifications", func(ctx context.Context, s *Store) error { _, err := s.RunNotifications(ctx, 5, 50); return err })
	one("Notifications", func(ctx context.Context, s *Store) error { _, err := s.Notifications(ctx, false, 50); return err })
	one("Notifications(failed)", func(ctx context.Context, s *Store) error { _, err := s.Notifications(ctx, true, 50); return err })
	one("AppliedDesk", func(ctx context.Context, s *Store) error { _, err := s.AppliedDesk(ctx); return err })
	one("OldestUndelivered", func(ctx context.Context, s *Store) error { _, _, err := s.OldestUndelivered(ctx); return err })
	one("SweepRetention(dry)", func(ctx context.Context, s *Store) error {
		_, err := s.SweepRetention(ctx, time.Unix(fx.now+18*86400, 0), true)
		return err
	})
	one("SweepRetention", func(ctx context.Context, s *Store) error {
		_, err := s.SweepRetention(ctx, time.Unix(fx.now+18*86400, 0), false)
		return err
	})
	return out
}

// seedOutbox writes 4000 outbox rows, mostly sent, some pending (a few due), some failed.
func seedOutbox(t *testing.T, pool *sql.DB) {
	t.Helper()
	const rows = 4000
	for start := 0; start < rows; start += 500 {
		var vals []string
		var args []any
		for i := start; i < start+500; i++ {
			state, due := runtime.NotificationSent, t0-int64(i)
			switch {
			case i%100 == 0:
				state, due = runtime.NotificationPending, t0-1
			case i%50 == 0:
				state, due = runtime.NotificationPending, t0+3600
			case i%37 == 0:
				state = runtime.NotificationFailed
			}
			vals = append(vals, "(?, ?, 'waiting', 'webhook', '{}', 'waiting_for_input', 'input', 'ask', 'refunds', 'Refunds', ?, ?, ?, ?)")
			args = append(args, i%explainRuns+1, newUUID(), state, due, t0-int64(rows-i), t0)
		}
		if _, err := pool.Exec(`INSERT INTO tx_runsdesk_outbox (run, run_uuid, event, channel, target, run_status, kind, tool,
			configuration_identifier, configuration_name, state, due_at, crdate, occurred_at) VALUES `+strings.Join(vals, ", "), args...); err != nil {
			t.Fatalf("seed outbox: %v", err)
		}
	}
}

// waitingQueries returns every combination of the inbox filters, each as a first page and as
// a keyset page.
func waitingQueries(fx explainFixture) []runtime.WaitingQuery {
	var out []runtime.WaitingQuery
	for mask := range 1 << 7 {
		q := runtime.WaitingQuery{Limit: 50}
		if mask&1 != 0 {
			q.Status = runtime.StatusWaitingInput
		}
		if mask&2 != 0 {
			q.ConfigurationUID = fx.cfgUID
		}
		if mask&4 != 0 {
			q.Tool = "issue_refund"
		}
		if mask&8 != 0 {
			q.WaitingSince = fx.since
		}
		if mask&16 != 0 {
			q.UUIDPrefix = fx.prefix
		}
		if mask&32 != 0 {
			q.AfterSuspendedAt, q.AfterUID = fx.afterAt, fx.afterID
		}
		if mask&64 != 0 {
			q.Search = "refund"
		}
		out = append(out, q)
	}
	for _, status := range []runtime.Status{"", runtime.StatusWaitingApproval} {
		out = append(out, runtime.WaitingQuery{Status: status, Assignee: 7, Limit: 50}, runtime.WaitingQuery{Status: status, Unassigned: true, Limit: 50},
			runtime.WaitingQuery{Status: status, Assignee: 7, AfterSuspendedAt: fx.afterAt, AfterUID: fx.afterID, Limit: 50},
			runtime.WaitingQuery{Status: status, Unassigned: true, AfterSuspendedAt: fx.afterAt, AfterUID: fx.afterID, Limit: 50})
	}
	return out
}

// listRunsQueries are API run-list pages of each group: all its statuses and one, first and
// later pages, with and without each filter.
func listRunsQueries(fx explainFixture) []runtime.RunsQuery {
	var out []runtime.RunsQuery
	for _, g := range []runtime.RunGroup{runtime.GroupWaiting, runtime.GroupActive, runtime.GroupFinished} {
		after := map[runtime.RunGroup][2]int64{runtime.GroupWaiting: {fx.afterAt, fx.afterID}, runtime.GroupActive: {fx.now - 86400, 1},
			runtime.GroupFinished: {fx.finishedAt, fx.finishedUID}}[g]
		for _, statuses := range [][]runtime.Status{g.Statuses(), g.Statuses()[:1]} {
			for _, f := range []runtime.WaitingQuery{{}, {ConfigurationUID: fx.cfgUID}, {Search: "refund"}, {UUIDPrefix: fx.prefix}} {
				out = append(out, runtime.RunsQuery{Group: g, Statuses: statuses, Filter: f, Limit: 51},
					runtime.RunsQuery{Group: g, Statuses: statuses, Filter: f, AfterAt: after[0], AfterUID: after[1], Limit: 51})
			}
		}
	}
	return out
}

func describe(q runtime.WaitingQuery) string {
	var parts []string
	if q.Status != "" {
		parts = append(parts, "status")
	}
	if q.ConfigurationUID > 0 {
		parts = append(parts, "configuration")
	}
	if q.Tool != "" {
		parts = append(parts, "tool")
	}
	if q.WaitingSince > 0 {
		parts = append(parts, "since")
	}
	if q.UUIDPrefix != "" {
		parts = append(parts, "prefix")
	}
	if q.AfterUID > 0 {
		parts = append(parts, "after")
	}
	if q.Search != "" {
		parts = append(parts, "search")
	}
	switch {
	case q.Assignee > 0:
		parts = append(parts, "mine")
	case q.Unassigned:
		parts = append(parts, "unassigned")
	}
	return "(" + strings.Join(parts, ",") + ")"
}

// indexOnlyExtras are EXPLAIN notes of plans that read no table rows at all: an aggregate
// answered from an index (MAX(sequence) WHERE run = ?).
// A row reading no table at all ("No tables used": the outer SELECT of subqueries) passes too,
// and a primary-key lookup of a row that is not there (the retention lease, released before
// the statement is explained).
var indexOnlyExtras = []string{"Select tables optimized away", "No matching min/max row", "No tables used",
	"Impossible WHERE noticed after reading const tables"}

// checkPlan EXPLAINs q, fails t for any table access without an index and returns the plan.
func checkPlan(t *testing.T, pool *sql.DB, name string, q recordedQuery) []map[string]string {
	t.Helper()
	plan, err := explain(pool, q)
	if err != nil {
		t.Errorf("%s: EXPLAIN: %v\n%s", name, err, q.query)
		return nil
	}
	for _, row := range plan {
		t.Logf("%-45s table=%s type=%s key=%s rows=%s extra=%s", name, row["table"], row["type"], row["key"], row["rows"], row["Extra"])
		if slices.ContainsFunc(indexOnlyExtras, func(s string) bool { return strings.Contains(row["Extra"], s) }) {
			continue
		}
		if strings.HasPrefix(row["table"], "<derived") || strings.HasPrefix(row["table"], "<union") {
			continue // a bounded subquery result (the capped count) or the result of a UNION; each table access is checked on its row
		}
		if row["type"] == "ALL" || row["key"] == "" {
			t.Errorf("%s: table %s is read without an index (type=%s key=%q extra=%q)\n%s",
				name, row["table"], row["type"], row["key"], row["Extra"], q.query)
		}
		if keysetPage(name) && strings.Contains(row["Extra"], "filesort") {
			t.Errorf("%s: a keyset page is sorted instead of read in list order (key=%q extra=%q)\n%s",
				name, row["key"], row["Extra"], q.query)
		}
	}
	return plan
}

// keysetPage reports whether the call named name lists a page that must be read in list order
// from an index: every ListWaiting but the uuid-prefix search (a prefix selects few rows, which
// are sorted).
func keysetPage(name string) bool {
	ordered := strings.HasPrefix(name, "ListWaiting(") || strings.HasPrefix(name, "ListAudit(") || strings.HasPrefix(name, "ListRuns(waiting") || strings.HasPrefix(name, "ListRuns(finished")
	return ordered && !strings.Contains(name, "prefix")
}

// explain returns the rows of EXPLAIN q, each keyed by column name (NULL as "").
func explain(pool *sql.DB, q recordedQuery) ([]map[string]string, error) {
	rows, err := pool.QueryContext(context.Background(), "EXPLAIN "+q.query, q.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].String
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// recordedQuery is one statement the Store sent, with its arguments.
type recordedQuery struct {
	query string
	args  []any
	// prepared: it ran as a prepared statement.
	prepared bool
}

// recorder keeps the statements sent through a recording connector.
type recorder struct {
	mu      sync.Mutex
	queries []recordedQuery
	// prepares counts the statement texts prepared on the server, by text.
	prepares map[string]int
}

func (r *recorder) prepared(query string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prepares == nil {
		r.prepares = map[string]int{}
	}
	r.prepares[query]++
}

// preparesOf returns how often query was prepared.
func (r *recorder) preparesOf(query string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prepares[query]
}

func (r *recorder) add(query string, args []driver.NamedValue) { r.addRun(query, args, false) }

func (r *recorder) addRun(query string, args []driver.NamedValue, prepared bool) {
	vals := make([]any, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries = append(r.queries, recordedQuery{query: query, args: vals, prepared: prepared})
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries = nil
}

func (r *recorder) take() []recordedQuery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.queries
	r.queries = nil
	return out
}

// openRecording returns a pool on dsn whose connections record every query and statement
// as the Store wrote it, before the test layout renames its tables and the MySQL driver runs
// it.
func openRecording(t *testing.T, dsn string, rec *recorder) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := newConnector(cfg, applyOpenOptions(testLayout()))
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(recordingConnector{inner: inner, rec: rec})
	t.Cleanup(func() { pool.Close() })
	return pool
}

type recordingConnector struct {
	inner driver.Connector
	rec   *recorder
}

func (c recordingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: conn, rec: c.rec}, nil
}

func (c recordingConnector) Driver() driver.Driver { return c.inner.Driver() }

// recordingConn records every statement the server runs: in QueryContext and ExecContext,
// which database/sql always tries first, and in each execution of a prepared statement (the
// Store's prepared statements, and the text database/sql prepares when the driver answers
// driver.ErrSkip, which QueryContext and ExecContext then leave to it).
type recordingConn struct {
	driver.Conn
	rec *recorder
}

func (c *recordingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != driver.ErrSkip {
		c.rec.add(query, args)
	}
	return rows, err
}

func (c *recordingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	if err != driver.ErrSkip {
		c.rec.add(query, args)
	}
	return res, err
}

func (c *recordingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	c.rec.prepared(query)
	return &recordingStmt{Stmt: st, query: query, rec: c.rec}, nil
}

// recordingStmt records each execution of a prepared statement.
type recordingStmt struct {
	driver.Stmt
	query string
	rec   *recorder
}

func (s *recordingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.rec.addRun(s.query, args, true)
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return nil, fmt.Errorf("driver statement does not support ExecContext")
}

func (s *recordingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.rec.addRun(s.query, args, true)
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return nil, fmt.Errorf("driver statement does not support QueryContext")
}

func (s *recordingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *recordingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, fmt.Errorf("driver does not support BeginTx")
}

func (c *recordingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *recordingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *recordingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// describeKeys names which request key a FindRequest looks up.
func describeKeys(k runtime.RequestKeys) string {
	if k.ExternalID != "" {
		return "(external_id)"
	}
	return "(idempotency_key)"
}
