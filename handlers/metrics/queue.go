package metrics

import (
	"context"
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"runsdesk/runtime/queue"
)

// QueueSource reads the queue's health with the snapshot (*db.Store): as of now (unix
// seconds), never the per-person figures (people false).
type QueueSource interface {
	QueueHealth(ctx context.Context, now int64, people bool) (queue.Health, error)
}

// queryQueueHealth is the query label of QueueSource's method.
const queryQueueHealth = "queue_health"

// readQueue reads the queue part of the snapshot when a QueueSource is configured (nil
// without one).
func (m *Metrics) readQueue(ctx context.Context, now int64) (*queue.Health, error) {
	if m.queue == nil {
		return nil, nil
	}
	h, err := m.queue.QueueHealth(ctx, now, false)
	if err != nil {
		return nil, m.failed(queryQueueHealth, err)
	}
	return &h, nil
}

// queueCollector exports the queue's health of the latest snapshot as gauges, one series per
// configuration and tool as the /queue page shows them (configuration "" and tool "": the whole
// desk; tool "": every tool of the configuration). No sample before the first good snapshot or
// without a QueueSource. Quantiles are the upper bounds of fixed buckets (+Inf above 7 days).
type queueCollector struct {
	snaps                                              *snapshots
	waiting, oldest, ages, expiring, escalated, failed *prometheus.Desc
	decisions, times                                   *prometheus.Desc
}

func newQueueCollector(snaps *snapshots) *queueCollector {
	row := []string{"configuration", "tool"}
	with := func(extra ...string) []string { return append(append([]string{}, row...), extra...) }
	return &queueCollector{snaps: snaps,
		waiting: prometheus.NewDesc("runsdesk_queue_waiting",
			"Runs waiting now by configuration, tool and pause kind, as of the metrics snapshot.", with("kind"), nil),
		oldest: prometheus.NewDesc("runsdesk_queue_oldest_wait_seconds",
			"How long the longest-waiting run has waited (0 when none waits), as of the metrics snapshot.", row, nil),
		ages: prometheus.NewDesc("runsdesk_queue_waiting_age_quantile_seconds",
			"Approximate waiting-age quantile of the waiting runs: the upper bound of its fixed bucket.", with("quantile"), nil),
		expiring: prometheus.NewDesc("runsdesk_queue_expiring_within_1h",
			"Waiting runs whose pause expires within an hour, as of the metrics snapshot.", row, nil),
		escalated: prometheus.NewDesc("runsdesk_queue_escalated",
			"Waiting runs that were escalated, as of the metrics snapshot.", row, nil),
		failed: prometheus.NewDesc("runsdesk_queue_failed_notifications",
			"Notifications created in the last 7 days that failed, as of the metrics snapshot.", row, nil),
		decisions: prometheus.NewDesc("runsdesk_queue_decisions",
			"Decisions in the window (24h, 7d) by who decided (person, rule, service, expiry), as of the metrics snapshot.",
			with("decided_by_kind", "window"), nil),
		times: prometheus.NewDesc("runsdesk_queue_time_to_decision_quantile_seconds",
			"Approximate time-to-decision quantile of the last 7 days' decisions: the upper bound of its fixed bucket.",
			with("decided_by_kind", "quantile"), nil),
	}
}

// Describe sends the descriptors.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.waiting, c.oldest, c.ages, c.expiring, c.escalated, c.failed, c.decisions, c.times} {
		ch <- d
	}
}

// Collect sends the figures of the latest snapshot.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	if c.snaps == nil {
		return
	}
	snap, _ := c.snaps.latest()
	if snap == nil || snap.queue == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	qs := []struct {
		q     float64
		label string
	}{{0.5, "0.5"}, {0.9, "0.9"}}
	for _, f := range snap.queue.Rows {
		cfg, tool := f.Configuration, f.Tool
		gauge(c.waiting, float64(f.WaitingApproval), cfg, tool, "approval")
		gauge(c.waiting, float64(f.WaitingInput), cfg, tool, "input")
		oldest := 0.0
		if f.OldestSince > 0 {
			oldest = max(float64(snap.queue.Now-f.OldestSince), 0)
		}
		gauge(c.oldest, oldest, cfg, tool)
		gauge(c.expiring, float64(f.ExpiringSoon), cfg, tool)
		gauge(c.escalated, float64(f.Escalated), cfg, tool)
		gauge(c.failed, float64(f.FailedNotifications), cfg, tool)
		for _, q := range qs {
			if v, ok := quantile(f.Ages, q.q); ok {
				gauge(c.ages, v, cfg, tool, q.label)
			}
		}
		for class := range queue.Classes {
			d := f.Decided[class]
			gauge(c.decisions, float64(d.Day), cfg, tool, class.String(), "24h")
			gauge(c.decisions, float64(d.Week), cfg, tool, class.String(), "7d")
			for _, q := range qs {
				if v, ok := quantile(d.Times, q.q); ok {
					gauge(c.times, v, cfg, tool, class.String(), q.label)
				}
			}
		}
	}
}

// quantile is h's q-quantile as the upper bound of its bucket (+Inf above the last bound);
// false when h counted nothing.
func quantile(h queue.Histogram, q float64) (float64, bool) {
	bound, over, ok := h.Quantile(q)
	if over {
		return math.Inf(1), ok
	}
	return float64(bound), ok
}
