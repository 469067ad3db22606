package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/runtime"
	"runsdesk/runtime/queue"
)

// bucketBounds closes an INTERVAL(v with one placeholder per bound of queue.Bounds, bound by
// bucketArgs (TestQueueHealth checks the count): the result is queue.Bucket(v).
const bucketBounds = `, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// bucketArgs are the arguments of bucketBounds.
func bucketArgs() []any {
	var out []any
	for _, b := range queue.Bounds() {
		out = append(out, b)
	}
	return out
}

// sqlQueueWaiting groups the waiting runs, read on KEY waiting_status (the inbox's: both pause
// kinds' ranges), by configuration, pending tools, kind and age bucket, with each group's
// earliest pause start and how many of it expire soon or were escalated. Arguments: the input
// status, now, the bounds, the "expiring soon" limit, the two waiting statuses.
const sqlQueueWaiting = `SELECT r.configuration_identifier, r.pending_tools, r.status = ? AS input,
	INTERVAL(? - CAST(r.suspended_at AS SIGNED)` + bucketBounds + ` AS bucket,
	COUNT(*), MIN(r.suspended_at), COALESCE(SUM(r.expires_at > 0 AND r.expires_at <= ?), 0), COALESCE(SUM(r.escalated = 1), 0)
	FROM tx_nrllm_agentrun r FORCE INDEX (waiting_status)
	WHERE r.status IN (?, ?) AND r.suspended_at > 0
	GROUP BY r.configuration_identifier, r.pending_tools, input, bucket`

// decisionBucket is the time-to-decision bucket of decision row d: -1 when its pause start is
// unknown (0, or after the decision).
const decisionBucket = `IF(d.paused_at = 0 OR d.paused_at > d.crdate, -1,
	INTERVAL(CAST(d.crdate AS SIGNED) - CAST(d.paused_at AS SIGNED)` + bucketBounds + `)`

// sqlQueueDecisions groups the decisions since a time, read as a range of KEY crdate, by
// configuration, pending tools, decider class (expiry, rule, person, other service account:
// queue.Class) and time-to-decision bucket, with how many fall in the last day. Arguments: the
// expiry kind and its class, the rule prefix pattern and its class, the person and service
// classes, the bounds, the day's start, the week's start.
const sqlQueueDecisions = `SELECT d.configuration_identifier, d.pending_tools,
	CASE WHEN d.kind = ? THEN ? WHEN d.decided_by_service LIKE ? THEN ? WHEN d.decided_by > 0 THEN ? ELSE ? END AS class,
	` + decisionBucket + ` AS bucket, COUNT(*), COALESCE(SUM(d.crdate >= ?), 0)
	FROM tx_runsdesk_decision d FORCE INDEX (crdate)
	WHERE d.crdate >= ?
	GROUP BY d.configuration_identifier, d.pending_tools, class, bucket`

// sqlQueuePeople groups the decisions people took since a time (a range of KEY crdate; rules
// and expiries apart) by person and time-to-decision bucket, each person named by primary key.
// Arguments: the bounds, the week's start, the rule prefix pattern, the expiry kind.
const sqlQueuePeople = `SELECT g.decided_by, COALESCE(u.username, ''), g.bucket, g.n FROM (
	SELECT d.decided_by, ` + decisionBucket + ` AS bucket, COUNT(*) AS n
	FROM tx_runsdesk_decision d FORCE INDEX (crdate)
	WHERE d.crdate >= ? AND d.decided_by > 0 AND d.decided_by_service NOT LIKE ? AND d.kind <> ?
	GROUP BY d.decided_by, bucket) g
	LEFT JOIN be_users u ON u.uid = g.decided_by`

// sqlQueueFailed counts the failed notifications created since a time (a range of KEY
// state_crdate) by configuration and tool.
const sqlQueueFailed = `SELECT configuration_identifier, tool, COUNT(*) FROM tx_runsdesk_outbox FORCE INDEX (state_crdate)
	WHERE state = ? AND crdate >= ? GROUP BY configuration_identifier, tool`

// QueueHealth reads the queue's health as of now (unix seconds) in three statements, four with
// people (the per-person figures): the waiting runs through the inbox's KEY waiting_status,
// the last week's decisions and failed notifications each through a range of an index on
// their time, every one grouped in the database so that the rows sent follow the groups, not
// the runs. Its cost follows the waiting runs and the week's decisions, never the runs stored,
// and it writes nothing (no rollup row). A decision's time is crdate - paused_at, both on its
// row (0047_queue_health.sql); one stored before that has no time and counts only in the
// decision counts. A store failure is an error.
func (s *Store) QueueHealth(ctx context.Context, now int64, people bool) (queue.Health, error) {
	b := queue.NewBuilder()
	day, week := now-queue.Day, now-queue.Week
	rule := runtime.RuleDeciderPrefix + "%"
	args := append([]any{string(runtime.StatusWaitingInput), now}, bucketArgs()...)
	args = append(args, now+queue.ExpiringSoon, string(runtime.StatusWaitingApproval), string(runtime.StatusWaitingInput))
	waiting, err := queryAll(ctx, s.db, func(rows *sql.Rows) (queue.WaitingGroup, error) {
		var g queue.WaitingGroup
		err := rows.Scan(&g.Configuration, &g.Tools, &g.Input, &g.Bucket, &g.Runs, &g.OldestSince, &g.Expiring, &g.Escalated)
		return g, err
	}, sqlQueueWaiting, args...)
	if err != nil {
		return queue.Health{}, fmt.Errorf("db: queue health: waiting runs: %w", err)
	}
	for _, g := range waiting {
		b.Waiting(g)
	}
	args = append([]any{runtime.DecisionExpiry, queue.ClassExpiry, rule, queue.ClassRule, queue.ClassPerson, queue.ClassService},
		bucketArgs()...)
	decided, err := queryAll(ctx, s.db, func(rows *sql.Rows) (queue.DecisionGroup, error) {
		var g queue.DecisionGroup
		err := rows.Scan(&g.Configuration, &g.Tools, &g.Class, &g.Bucket, &g.Week, &g.Day)
		return g, err
	}, sqlQueueDecisions, append(args, day, week)...)
	if err != nil {
		return queue.Health{}, fmt.Errorf("db: queue health: decisions: %w", err)
	}
	for _, g := range decided {
		b.Decided(g)
	}
	failed, err := queryAll(ctx, s.db, func(rows *sql.Rows) (queueFailed, error) {
		var f queueFailed
		err := rows.Scan(&f.cfg, &f.tool, &f.n)
		return f, err
	}, sqlQueueFailed, runtime.NotificationFailed, week)
	if err != nil {
		return queue.Health{}, fmt.Errorf("db: queue health: failed notifications: %w", err)
	}
	for _, f := range failed {
		b.Failed(f.cfg, f.tool, f.n)
	}
	if people {
		persons, err := queryAll(ctx, s.db, func(rows *sql.Rows) (queuePerson, error) {
			var p queuePerson
			err := rows.Scan(&p.uid, &p.name, &p.bucket, &p.n)
			return p, err
		}, sqlQueuePeople, append(bucketArgs(), week, rule, runtime.DecisionExpiry)...)
		if err != nil {
			return queue.Health{}, fmt.Errorf("db: queue health: people: %w", err)
		}
		for _, p := range persons {
			b.Person(p.uid, p.name, p.bucket, p.n)
		}
	}
	return b.Health(now), nil
}

// queueFailed is one row of sqlQueueFailed; queuePerson one of sqlQueuePeople.
type (
	queueFailed struct {
		cfg, tool string
		n         int64
	}
	queuePerson struct {
		uid    int64
		name   string
		bucket int
		n      int64
	}
)
