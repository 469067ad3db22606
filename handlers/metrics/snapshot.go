package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"runsdesk/runtime"
	"runsdesk/runtime/queue"
)

// snapshot is what one refresh read from the Source: the values of the scrape-time families
// as of at.
type snapshot struct {
	at      time.Time
	runs    map[string]int
	waiting ageHistogram
	leased  int
	// ruleUses are the standing approvals' uses by name (nil without Config.Rules).
	ruleUses map[string]int64
	outbox   outboxAge
	// queue is the queue's health (nil without Config.Queue).
	queue *queue.Health
}

// ageHistogram is a waiting-age histogram: cumulative[i] runs waited at most bound i,
// cumulative[len(bounds)] is every waiting run, sum their ages in seconds.
type ageHistogram struct {
	cumulative []int64
	sum        int64
}

// snapshots keeps the latest good snapshot and refreshes it at most once per interval,
// whatever the number of scrapes: one refresh at a time, which every scrape arriving meanwhile
// waits for instead of starting its own. A failed refresh keeps the previous snapshot.
type snapshots struct {
	read     func(ctx context.Context) (*snapshot, error)
	now      func() time.Time
	interval time.Duration
	timeout  time.Duration

	mu      sync.Mutex
	cur     *snapshot
	tried   time.Time
	failed  bool
	pending chan struct{}
}

// await makes the snapshot fresh: when no refresh was started within the interval, it starts
// one, detached from ctx so that a scrape giving up does not cancel what others wait for, and
// bounded by the timeout; it then waits for the running refresh until ctx ends.
func (s *snapshots) await(ctx context.Context) {
	s.mu.Lock()
	if s.pending == nil && (s.tried.IsZero() || s.now().Sub(s.tried) >= s.interval) {
		s.tried = s.now()
		s.pending = make(chan struct{})
		go s.refresh(context.WithoutCancel(ctx), s.pending)
	}
	wait := s.pending
	s.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
		}
	}
}

// latest returns the snapshot to serve (nil before the first good refresh) and whether the
// last finished refresh failed.
func (s *snapshots) latest() (*snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.failed
}

// refresh reads a snapshot, keeps it when the read succeeded, and closes done.
func (s *snapshots) refresh(ctx context.Context, done chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := s.read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.cur = snap
	}
	s.failed = err != nil
	s.pending = nil
	close(done)
}

// snapshotCollector exports the latest snapshot: runsdesk_runs, runsdesk_waiting_age_seconds,
// runsdesk_worker_leases and runsdesk_metrics_snapshot_age_seconds (none of them before the
// first good refresh), and runsdesk_metrics_snapshot_refresh_failed. Collect never queries:
// Metrics.Handler refreshes the snapshot, when due, before gathering.
type snapshotCollector struct {
	snaps                              *snapshots // nil without a Source
	now                                func() time.Time
	runs, waiting, leases, age, failed *prometheus.Desc
	ruleUses                           *prometheus.Desc
}

func newSnapshotCollector(snaps *snapshots, now func() time.Time) *snapshotCollector {
	return &snapshotCollector{snaps: snaps, now: now,
		runs: prometheus.NewDesc("runsdesk_runs", "Runs per status, as of the metrics snapshot.",
			[]string{"status"}, nil),
		waiting: prometheus.NewDesc("runsdesk_waiting_age_seconds",
			"How long the waiting runs had waited, as of the metrics snapshot.", nil, nil),
		leases: prometheus.NewDesc("runsdesk_worker_leases",
			"Running runs holding a worker lease, as of the metrics snapshot.", nil, nil),
		age: prometheus.NewDesc("runsdesk_metrics_snapshot_age_seconds",
			"Age of the metrics snapshot served (no sample before the first).", nil, nil),
		failed: prometheus.NewDesc("runsdesk_metrics_snapshot_refresh_failed",
			"1 when the last refresh of the metrics snapshot failed and an older one is served.", nil, nil),
		ruleUses: prometheus.NewDesc("runsdesk_standing_approval_uses_total",
			"Turns each standing approval approved automatically, as of the metrics snapshot.", []string{"rule"}, nil),
	}
}

// Describe sends the descriptors of every family Collect may send.
func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.runs, c.waiting, c.leases, c.age, c.failed, c.ruleUses} {
		ch <- d
	}
}

// Collect sends the latest snapshot's samples: every known status (0 when none), stored
// values that are no status summed as "unknown".
func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	var snap *snapshot
	var failed bool
	if c.snaps != nil {
		snap, failed = c.snaps.latest()
	}
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.GaugeValue, boolGauge(failed))
	if snap == nil {
		return
	}
	unknown := 0
	for s, n := range snap.runs {
		if !runtime.Status(s).Valid() {
			unknown += n
		}
	}
	for _, s := range allStatuses {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(snap.runs[string(s)]), string(s))
	}
	if unknown > 0 {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(unknown), "unknown")
	}
	ch <- snap.waiting.metric(c.waiting)
	ch <- prometheus.MustNewConstMetric(c.leases, prometheus.GaugeValue, float64(snap.leased))
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, max(c.now().Sub(snap.at).Seconds(), 0))
	for name, n := range snap.ruleUses {
		ch <- prometheus.MustNewConstMetric(c.ruleUses, prometheus.CounterValue, float64(n), name)
	}
}

// metric is the histogram as a sample of desc, on waitingBounds.
func (h ageHistogram) metric(desc *prometheus.Desc) prometheus.Metric {
	buckets := make(map[float64]uint64, len(waitingBounds))
	for i, b := range waitingBounds {
		buckets[float64(b)] = uint64(h.cumulative[i])
	}
	return prometheus.MustNewConstHistogram(desc, uint64(h.cumulative[len(waitingBounds)]), float64(h.sum), buckets)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
