package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// OutboxSource is what the metrics read of the notification outbox, with the snapshot.
type OutboxSource interface {
	// OldestUndelivered returns when the oldest pending or sending notification was written
	// (unix seconds), false when there is none.
	OldestUndelivered(ctx context.Context) (int64, bool, error)
}

// queryOldestUndelivered is the query label of OutboxSource's method.
const queryOldestUndelivered = "oldest_undelivered"

// notificationOutcomes are the outcomes ObserveNotification counts, each present from the start.
var notificationOutcomes = []string{"sent", "retried", "failed"}

func newNotificationCounter() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "runsdesk_notifications_total",
		Help: "Notification delivery attempts by outcome: sent, retried (failed, to be tried again) or failed (given up)."},
		[]string{"outcome"})
	for _, o := range notificationOutcomes {
		c.WithLabelValues(o)
	}
	return c
}

// ObserveNotification counts one delivery attempt of this process's dispatcher: outcome is
// "sent", "retried" or "failed".
func (m *Metrics) ObserveNotification(outcome string) {
	m.notifications.WithLabelValues(outcome).Inc()
}

// outboxAge is the outbox part of a snapshot: when the oldest undelivered notification was
// written (any false: none).
type outboxAge struct {
	read   bool
	any    bool
	oldest int64
}

// readOutbox reads the outbox part of the snapshot when an OutboxSource is configured.
func (m *Metrics) readOutbox(ctx context.Context) (outboxAge, error) {
	if m.outbox == nil {
		return outboxAge{}, nil
	}
	oldest, any, err := m.outbox.OldestUndelivered(ctx)
	if err != nil {
		return outboxAge{}, m.failed(queryOldestUndelivered, err)
	}
	return outboxAge{read: true, any: any, oldest: oldest}, nil
}

// outboxCollector exports runsdesk_notifications_oldest_undelivered_age_seconds from the
// latest snapshot: how long the oldest pending or sending notification has waited (0 when
// none); no sample before the first good snapshot or without an OutboxSource.
type outboxCollector struct {
	snaps *snapshots
	desc  *prometheus.Desc
}

func newOutboxCollector(snaps *snapshots) *outboxCollector {
	return &outboxCollector{snaps: snaps, desc: prometheus.NewDesc("runsdesk_notifications_oldest_undelivered_age_seconds",
		"Age of the oldest notification not yet delivered nor given up, as of the metrics snapshot (0 when none).", nil, nil)}
}

// Describe sends the one descriptor.
func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect sends the age as of the snapshot.
func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	if c.snaps == nil {
		return
	}
	snap, _ := c.snaps.latest()
	if snap == nil || !snap.outbox.read {
		return
	}
	age := 0.0
	if snap.outbox.any {
		age = max(float64(snap.at.Unix()-snap.outbox.oldest), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, age)
}
