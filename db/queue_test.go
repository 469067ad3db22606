package db

import (
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/queue"
	"runsdesk/runtime/wait"
)

// TestDecisionRowKeepsItsPause: a decision committed on a pause (Commit) and one an expiry
// took (ExpirePause) keep the pause's start, configuration and tools on their row, as read.
func TestDecisionRowKeepsItsPause(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0, "refund", "lookup")
	if _, _, err := s.Commit(ctx, resumeClaim(r, "resume:h:1", "key-1")); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	e := deadlineRun(t, s, t0+10, wait.Deadline{ExpiresAt: t0 + 400, Action: wait.Deny})
	expire := step(e, t0+400, 0, runtime.EventExpiry)
	expire.Decision = &runtime.Decision{IdempotencyKey: "expiry:deny:1", Kind: runtime.DecisionExpiry, DecidedByService: "system:expiry"}
	if err := s.ExpirePause(ctx, expire); err != nil {
		t.Fatalf("ExpirePause: %v", err)
	}
	for _, c := range []struct {
		run            int64
		crdate, paused int64
		tools          string
	}{{r.UID, now1, t0, "refund,lookup"}, {e.UID, t0 + 400, t0 + 10, ""}} {
		var crdate, paused int64
		var cfg, tools string
		if err := pool.QueryRowContext(ctx, `SELECT crdate, paused_at, configuration_identifier, pending_tools
			FROM tx_runsdesk_decision WHERE run = ?`, c.run).Scan(&crdate, &paused, &cfg, &tools); err != nil {
			t.Fatal(err)
		}
		if crdate != c.crdate || paused != c.paused || cfg != "cfg" || tools != c.tools {
			t.Errorf("run %d decision: crdate %d paused_at %d configuration %q tools %q; want %d %d cfg %q",
				c.run, crdate, paused, cfg, tools, c.crdate, c.paused, c.tools)
		}
	}
}

// TestQueueHealth: the waiting runs count by kind under the desk, their configuration and
// each of their tools, with the oldest wait, ages, expiring and escalated; the week's
// decisions by class with times from their own row; failed notifications of the week; people
// only when asked, rules and expiries apart.
func TestQueueHealth(t *testing.T) {
	if n := strings.Count(bucketBounds, "?"); n != len(queue.Bounds()) {
		t.Fatalf("bucketBounds has %d placeholders for %d bounds", n, len(queue.Bounds()))
	}
	s, pool := newStore(t)
	ctx := t.Context()
	now := t0 + 10*queue.Day
	a := waitingRun(t, s, runtime.StatusWaitingApproval, now-100, "refund", "lookup")
	b := waitingRun(t, s, runtime.StatusWaitingApproval, now-5000, "refund")
	waitingRun(t, s, runtime.StatusWaitingInput, now-20, "ask")
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET expires_at = ?, escalated = 1 WHERE uid = ?`, now+600, b.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET expires_at = ? WHERE uid = ?`, now+2*queue.ExpiringSoon, a.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO be_users (uid, username) VALUES (9, 'ada')`); err != nil {
		t.Fatal(err)
	}
	decide := func(key string, d runtime.Decision, pausedAt, at int64, cfg, tools string) {
		t.Helper()
		d.IdempotencyKey = key
		read := runtime.Run{UID: a.UID, SuspendedAt: pausedAt, ConfigurationIdentifier: cfg, PendingTools: tools}
		if _, err := pool.ExecContext(ctx, sqlInsertDecision, decisionArgs(read, d, at, "", "")...); err != nil {
			t.Fatal(err)
		}
	}
	person := runtime.Decision{Kind: "approval", Approved: true, DecidedBy: 9}
	decide("p1", person, now-3000, now-2900, "cfg", "refund")                  // 100 s, today
	decide("p2", person, now-2*queue.Day-50, now-2*queue.Day, "cfg", "refund") // 50 s, this week
	decide("p3", person, 0, now-3*queue.Day, "cfg", "refund")                  // unknown pause start
	decide("old", person, now-9*queue.Day-5, now-9*queue.Day, "cfg", "refund") // before the week
	decide("r1", runtime.Decision{Kind: "approval", Approved: true, DecidedBy: 9, DecidedByService: runtime.RuleDeciderPrefix + "auto"}, now-60, now-59, "cfg", "refund")
	decide("s1", runtime.Decision{Kind: "approval", DecidedByService: "ci-bot"}, now-40, now-10, "other", "")
	decide("x1", runtime.Decision{Kind: runtime.DecisionExpiry, DecidedByService: "system:expiry"}, now-7200, now-3600, "cfg", "lookup")
	if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_outbox (run, run_uuid, event, channel, target, run_status, kind, tool,
		configuration_identifier, configuration_name, state, crdate) VALUES
		(1, 'u', 'waiting', 'webhook', '{}', 'waiting_for_approval', 'approval', 'refund', 'cfg', 'Cfg', 'failed', ?),
		(1, 'u', 'waiting', 'webhook', '{}', 'waiting_for_approval', 'approval', 'refund', 'cfg', 'Cfg', 'failed', ?),
		(1, 'u', 'waiting', 'webhook', '{}', 'waiting_for_approval', 'approval', 'refund', 'cfg', 'Cfg', 'sent', ?)`,
		now-100, now-8*queue.Day, now-100); err != nil {
		t.Fatal(err)
	}

	h, err := s.QueueHealth(ctx, now, false)
	if err != nil {
		t.Fatalf("QueueHealth: %v", err)
	}
	if len(h.People) != 0 {
		t.Errorf("people read without being asked: %+v", h.People)
	}
	desk := h.Row(queue.Key{})
	if desk.WaitingApproval != 2 || desk.WaitingInput != 1 || desk.OldestSince != now-5000 || desk.ExpiringSoon != 1 || desk.Escalated != 1 {
		t.Errorf("desk waiting: %+v", desk)
	}
	if p50, _, _ := desk.Ages.Quantile(0.5); p50 != 300 {
		t.Errorf("desk waiting p50 bound %d, want 300 (ages 20, 100, 5000)", p50)
	}
	refund := h.Row(queue.Key{Configuration: "cfg", Tool: "refund"})
	if refund.WaitingApproval != 2 || refund.Escalated != 1 || refund.FailedNotifications != 1 {
		t.Errorf("cfg/refund: %+v", refund)
	}
	if lookup := h.Row(queue.Key{Configuration: "cfg", Tool: "lookup"}); lookup.WaitingApproval != 1 || lookup.OldestSince != now-100 ||
		lookup.Decided[queue.ClassExpiry].Week != 1 {
		t.Errorf("cfg/lookup: %+v", lookup)
	}
	people := refund.Decided[queue.ClassPerson]
	if people.Day != 1 || people.Week != 3 || people.Times.Total() != 2 {
		t.Errorf("cfg/refund people: %+v", people)
	}
	if p90, _, _ := people.Times.Quantile(0.9); p90 != 300 {
		t.Errorf("cfg/refund people p90 bound %d, want 300 (50 s and 100 s)", p90)
	}
	if rules := refund.Decided[queue.ClassRule]; rules.Week != 1 || rules.Day != 1 {
		t.Errorf("cfg/refund rules: %+v", rules)
	}
	if svc := h.Row(queue.Key{Configuration: "other"}).Decided[queue.ClassService]; svc.Week != 1 {
		t.Errorf("other services: %+v", svc)
	}
	if exp := desk.Decided[queue.ClassExpiry]; exp.Week != 1 || exp.Times[queue.Bucket(3600)] != 1 {
		t.Errorf("desk expiries: %+v", exp)
	}
	if desk.Decisions(false) != 6 || desk.Decisions(true) != 4 {
		t.Errorf("desk decisions week %d day %d, want 6 and 4", desk.Decisions(false), desk.Decisions(true))
	}

	h, err = s.QueueHealth(ctx, now, true)
	if err != nil {
		t.Fatalf("QueueHealth with people: %v", err)
	}
	if len(h.People) != 1 || h.People[0].Name != "ada" || h.People[0].Decisions != 3 || h.People[0].Times.Total() != 2 {
		t.Errorf("people: %+v (the rule's decision made for ada is not hers)", h.People)
	}
}

// TestMigrationBackfillsDecisionConfiguration: 0047 gives the last week's decisions their
// run's configuration (so the queue's health is whole from the start), older ones none, and
// leaves the pause start unknown (0).
func TestMigrationBackfillsDecisionConfiguration(t *testing.T) {
	dsn := newDatabase(t)
	ctx := t.Context()
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	r := waitingRun(t, New(pool), runtime.StatusWaitingApproval, t0, "refund")
	for _, q := range []string{
		`ALTER TABLE tx_runsdesk_decision DROP KEY crdate, DROP COLUMN paused_at, DROP COLUMN configuration_identifier, DROP COLUMN pending_tools`,
		`DELETE FROM schema_migrations WHERE version = 47`,
	} {
		if _, err := pool.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Unix()
	if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, crdate, arguments)
		VALUES (?, 'recent', 'approval', ?, ''), (?, 'old', 'approval', ?, '')`, r.UID, now-queue.Day, r.UID, now-9*queue.Day); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	for key, want := range map[string]string{"recent": "cfg", "old": ""} {
		var cfg, tools string
		var paused int64
		if err := pool.QueryRowContext(ctx, `SELECT configuration_identifier, pending_tools, paused_at FROM tx_runsdesk_decision
			WHERE idempotency_key = ?`, key).Scan(&cfg, &tools, &paused); err != nil {
			t.Fatal(err)
		}
		if cfg != want || tools != "" || paused != 0 {
			t.Errorf("decision %s: configuration %q tools %q paused_at %d; want %q, '', 0", key, cfg, tools, paused, want)
		}
	}
}
