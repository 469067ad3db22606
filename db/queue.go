package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

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

// sqlQueueDecisions reads the decisions since a time, a range of KEY crdate, each as its
// configuration, pending tools, decider class (expiry, rule, person, other service account:
// queue.Class), time-to-decision bucket, whether it falls in the last day, and who decided.
// They are grouped in Go (QueueHealth): grouping by pending_tools, a varchar(1024), made the
// server's temporary table cost three times the read. Arguments: the expiry kind and its class,
// the rule prefix pattern and its class, the person and service classes, the bounds, the day's
// start, the week's start.
const sqlQueueDecisions = `SELECT d.configuration_identifier, d.pending_tools,
	CASE WHEN d.kind = ? THEN ? WHEN d.decided_by_service LIKE ? THEN ? WHEN d.decided_by > 0 THEN ? ELSE ? END AS class,
	` + decisionBucket + ` AS bucket, d.crdate >= ?, d.decided_by
	FROM tx_runsdesk_decision d FORCE INDEX (crdate)
	WHERE d.crdate >= ?`

// sqlQueueNames reads the usernames of people by uid (primary key); the IN list's placeholders
// follow.
const sqlQueueNames = `SELECT uid, username FROM be_users WHERE uid IN (`

// sqlQueueFailed counts the failed notifications created since a time (a range of KEY
// state_crdate) by configuration and tool.
const sqlQueueFailed = `SELECT configuration_identifier, tool, COUNT(*) FROM tx_runsdesk_outbox FORCE INDEX (state_crdate)
	WHERE state = ? AND crdate >= ? GROUP BY configuration_identifier, tool`

// QueueHealth reads the queue's health as of now (unix seconds) in three statements, four with
// people who decided (their names): the waiting runs through the inbox's KEY waiting_status,
// grouped in the database; the last week's decisions through a range of KEY crdate, each with
// its class and bucket computed by the server and grouped here (the people's figures from the
// same rows); the week's failed notifications through a range of KEY state_crdate, grouped in
// the database. Its cost follows the waiting runs and the week's decisions, never the runs
// stored, and it writes nothing (no rollup row). A decision's time is crdate - paused_at, both
// on its row (0047_queue_health.sql); one stored before that has no time and counts only in the
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
	groups := map[queue.DecisionGroup]*queue.DecisionGroup{}
	persons := map[queuePerson]int64{}
	_, err = queryAll(ctx, s.db, func(rows *sql.Rows) (struct{}, error) {
		var k queue.DecisionGroup
		var inDay bool
		var by int64
		if err := rows.Scan(&k.Configuration, &k.Tools, &k.Class, &k.Bucket, &inDay, &by); err != nil {
			return struct{}{}, err
		}
		g, ok := groups[k]
		if !ok {
			g = &queue.DecisionGroup{Configuration: k.Configuration, Tools: k.Tools, Class: k.Class, Bucket: k.Bucket}
			groups[k] = g
		}
		g.Week++
		if inDay {
			g.Day++
		}
		if people && k.Class == queue.ClassPerson {
			persons[queuePerson{uid: by, bucket: k.Bucket}]++
		}
		return struct{}{}, nil
	}, sqlQueueDecisions, append(args, day, week)...)
	if err != nil {
		return queue.Health{}, fmt.Errorf("db: queue health: decisions: %w", err)
	}
	for _, g := range groups {
		b.Decided(*g)
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
	if len(persons) > 0 {
		names, err := s.queueNames(ctx, persons)
		if err != nil {
			return queue.Health{}, fmt.Errorf("db: queue health: people: %w", err)
		}
		for p, n := range persons {
			b.Person(p.uid, names[p.uid], p.bucket, n)
		}
	}
	return b.Health(now), nil
}

// queueFailed is one row of sqlQueueFailed; queuePerson a person's time-to-decision bucket.
type (
	queueFailed struct {
		cfg, tool string
		n         int64
	}
	queuePerson struct {
		uid    int64
		bucket int
	}
)

// queueNames reads the usernames of the people in persons in one statement (a deleted
// person's row stays, so history keeps its names; a uid without a row has none).
func (s *Store) queueNames(ctx context.Context, persons map[queuePerson]int64) (map[int64]string, error) {
	var uids []any
	seen := map[int64]bool{}
	for p := range persons {
		if !seen[p.uid] {
			seen[p.uid] = true
			uids = append(uids, p.uid)
		}
	}
	names := make(map[int64]string, len(uids))
	_, err := queryAll(ctx, s.db, func(rows *sql.Rows) (struct{}, error) {
		var uid int64
		var name string
		err := rows.Scan(&uid, &name)
		names[uid] = name
		return struct{}{}, err
	}, sqlQueueNames+strings.Repeat(`?, `, len(uids)-1)+`?)`, uids...)
	return names, err
}
