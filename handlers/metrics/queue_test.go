package metrics

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQueueGauges on the real database: with Config.Queue the scrape carries the queue's
// health as gauges, the desk's waiting runs per kind as seeded, one series per configuration
// and tool, quantiles as bucket bounds; without it there is none.
func TestQueueGauges(t *testing.T) {
	store, pool, rep := seededStore(t)
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_decision (run, idempotency_key, kind, approved, decided_by, crdate, arguments,
		paused_at, configuration_identifier, pending_tools) VALUES (1, 'k', 'approval', 1, 7, ?, '', ?, 'refunds', 'lookup')`, now-60, now-100); err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return time.Unix(now, 0) }
	got := scrape(t, newEcho(New(Config{Source: store, Queue: store, Now: clock})))
	mustContain(t, got,
		`runsdesk_queue_waiting{configuration="",kind="approval",tool=""} `+strconv.Itoa(rep.Approval),
		`runsdesk_queue_waiting{configuration="",kind="input",tool=""} `+strconv.Itoa(rep.Input),
		`runsdesk_queue_decisions{configuration="refunds",decided_by_kind="person",tool="lookup",window="24h"} 1`,
		`runsdesk_queue_decisions{configuration="",decided_by_kind="rule",tool="",window="7d"} 0`,
		`runsdesk_queue_time_to_decision_quantile_seconds{configuration="refunds",decided_by_kind="person",quantile="0.5",tool="lookup"} 60`,
		`runsdesk_metrics_source_errors_total{query="queue_health"} 0`,
	)
	if !strings.Contains(got, `runsdesk_queue_waiting_age_quantile_seconds{configuration="",quantile="0.9",tool=""} `) ||
		!strings.Contains(got, `runsdesk_queue_oldest_wait_seconds{configuration="refunds",tool=""} `) {
		t.Errorf("no waiting-age quantile or oldest wait in:\n%s", got)
	}
	if without := scrape(t, newEcho(New(Config{Source: store, Now: clock}))); strings.Contains(without, "runsdesk_queue_") {
		t.Error("the queue's gauges are exported without Config.Queue")
	}
}
