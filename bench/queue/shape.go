package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
)

// benchKey starts the idempotency key of every decision the shaping writes, so a later start
// finds and replaces them.
const benchKey = "queue-bench-"

// decider is one kind of decider the shaped decisions come from, with its share in percent.
type decider struct {
	kind, service string
	people        bool
	share         int
}

// deciders are the week's deciders: people (the three bench users), a standing approval,
// a service account and the pauses' expiry.
func deciders() []decider {
	return []decider{
		{kind: "approval", people: true, share: 60},
		{kind: "approval", service: "rule:auto-refund", share: 25},
		{kind: "approval", service: "ci-bot", share: 5},
		{kind: "expiry", service: "system:expiry", share: 10},
	}
}

// queueOf is the i-th of the configurations and tools the shaped decisions and notifications
// are about (the demo desk's), in turn.
func queueOf(i int) (configuration, tools string) {
	all := [][2]string{{"refunds", "ask_refund_amount"}, {"refunds", "issue_refund"}, {"customer-care", "send_customer_email"}}
	q := all[i%len(all)]
	return q[0], q[1]
}

// shape gives the desk behind pool exactly o.waiting waiting runs (the lowest uids; every
// tenth expiring within the hour, every 25th escalated), moves the seeded decisions out of the
// week, and writes o.decisions decisions of the week and o.failed failed notifications
// afresh, so that every desk holds the same week whatever its size. It is deterministic and
// may run again on a shaped desk.
func shape(ctx context.Context, pool *sql.DB, o options, now int64) error {
	var last int64
	if err := pool.QueryRowContext(ctx, `SELECT uid FROM tx_nrllm_agentrun WHERE suspended_at > 0 ORDER BY uid LIMIT 1 OFFSET ?`,
		o.waiting-1).Scan(&last); err != nil {
		return fmt.Errorf("the %dth waiting run: %w", o.waiting, err)
	}
	steps := []struct {
		query string
		args  []any
	}{
		{`UPDATE tx_nrllm_agentrun SET status = 'completed', suspended_at = 0, pending_tools = '', finished_at = crdate + 60,
			expires_at = 0, escalated = 0 WHERE suspended_at > 0 AND uid > ?`, []any{last}},
		{`UPDATE tx_nrllm_agentrun SET expires_at = IF(uid % 10 = 0, ? + 1800, 0), escalated = (uid % 25 = 0) WHERE suspended_at > 0`, []any{now}},
		{`UPDATE tx_runsdesk_decision SET crdate = ? - 30 * 86400 - uid % 86400 WHERE crdate >= ? - 8 * 86400 AND idempotency_key NOT LIKE ?`,
			[]any{now, now, benchKey + "%"}},
		{`DELETE FROM tx_runsdesk_decision WHERE idempotency_key LIKE ?`, []any{benchKey + "%"}},
		{`DELETE FROM tx_runsdesk_outbox WHERE run_uuid LIKE ?`, []any{benchKey + "%"}},
	}
	for _, s := range steps {
		if _, err := pool.ExecContext(ctx, s.query, s.args...); err != nil {
			return fmt.Errorf("%.60s…: %w", strings.Join(strings.Fields(s.query), " "), err)
		}
	}
	if err := insertDecisions(ctx, pool, o.decisions, now); err != nil {
		return err
	}
	if err := insertFailed(ctx, pool, o.failed, now); err != nil {
		return err
	}
	for _, t := range []string{"tx_nrllm_agentrun", "tx_runsdesk_decision", "tx_runsdesk_outbox"} {
		rows, err := pool.QueryContext(ctx, "ANALYZE TABLE "+t)
		if err != nil {
			return fmt.Errorf("analyze %s: %w", t, err)
		}
		rows.Close()
	}
	return nil
}

// insertDecisions writes n decisions spread over the last week, each taken between a few
// seconds and two days after its pause started, in batches of 500.
func insertDecisions(ctx context.Context, pool *sql.DB, n int, now int64) error {
	rng := rand.New(rand.NewPCG(7, 7))
	for start := 0; start < n; start += 500 {
		var vals []string
		var args []any
		for i := start; i < min(n, start+500); i++ {
			d := pick(rng)
			cfg, tools := queueOf(rng.IntN(3))
			crdate := now - rng.Int64N(7*86400-60)
			waited := min(int64(rng.ExpFloat64()*1800), 2*86400)
			decidedBy := int64(0)
			if d.people {
				decidedBy = 1 + rng.Int64N(3)
			}
			vals = append(vals, "(?, ?, ?, 1, ?, ?, ?, '', ?, ?, ?)")
			args = append(args, 1+i%1000, fmt.Sprintf("%s%d", benchKey, i), d.kind, decidedBy, d.service, crdate,
				crdate-waited, cfg, tools)
		}
		if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, approved, decided_by,
			decided_by_service, crdate, arguments, paused_at, configuration_identifier, pending_tools) VALUES `+strings.Join(vals, ", "), args...); err != nil {
			return fmt.Errorf("insert decisions: %w", err)
		}
	}
	return nil
}

// pick draws a decider by share.
func pick(rng *rand.Rand) decider {
	n := rng.IntN(100)
	all := deciders()
	for _, d := range all {
		if n < d.share {
			return d
		}
		n -= d.share
	}
	return all[0]
}

// insertFailed writes n failed notifications of the last week.
func insertFailed(ctx context.Context, pool *sql.DB, n int, now int64) error {
	for i := range n {
		cfg, tools := queueOf(i)
		if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_outbox (run, run_uuid, event, channel, target, run_status, kind,
			tool, configuration_identifier, configuration_name, state, attempts, crdate) VALUES (1, ?, 'waiting', 'webhook', '{}',
			'waiting_for_approval', 'approval', ?, ?, ?, 'failed', 5, ?)`,
			fmt.Sprintf("%s%d", benchKey, i), tools, cfg, cfg, now-int64(i)*3600%(7*86400)); err != nil {
			return fmt.Errorf("insert failed notifications: %w", err)
		}
	}
	return nil
}
