package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"runsdesk/runtime"
)

// Source is what the metrics read from the database for a snapshot (see Config.Interval).
// Implementations run one query per method and return store failures as errors, never as
// zeros.
type Source interface {
	// CountByStatus returns the number of runs per stored status value
	// (SELECT status, COUNT(*) FROM tx_nrllm_agentrun GROUP BY status).
	CountByStatus(ctx context.Context) (map[string]int, error)
	// WaitingAges returns, as of now (unix seconds), cumulative[i] = the number of waiting
	// runs whose age max(now - suspended_at, 0) is at most bounds[i] seconds, then
	// cumulative[len(bounds)] = the number of waiting runs, and the sum of their ages.
	WaitingAges(ctx context.Context, now int64, bounds []int64) (cumulative []int64, sum int64, err error)
	// CountLeased returns the number of running runs holding a lease
	// (status = 'running' AND lease_expires > 0).
	CountLeased(ctx context.Context) (int, error)
}

// Buckets of the desk's histograms (read-only tables).
var (
	// httpBuckets are request durations in seconds, Prometheus' defaults.
	httpBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// waitingBounds are waiting ages in seconds: 1 min, 5 min, 15 min, 30 min, 1 h, 4 h,
	// 12 h, 1 d, 3 d, 7 d.
	waitingBounds  = []int64{60, 300, 900, 1800, 3600, 14400, 43200, 86400, 259200, 604800}
	waitingBuckets = floats(waitingBounds)
)

func floats(xs []int64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// Config wires Metrics. Source is required for the scrape-time metrics; the rest default.
type Config struct {
	Source Source
	Logger *slog.Logger
	// Now is the clock used for waiting ages and snapshot ages (default time.Now).
	Now func() time.Time
	// ScrapeTimeout bounds the Source queries of one snapshot refresh, and so how long a
	// scrape waits for it (default 5 s).
	ScrapeTimeout time.Duration
	// Interval is how old the snapshot of the Source's values may get before a scrape
	// refreshes it (default 15 s): scrapes within it run no query.
	Interval time.Duration
}

// Metrics is runsdesk's metric set:
//   - runsdesk_runs{status}: gauge, runs per status, from the snapshot; every known status
//     is present (0 when none);
//   - runsdesk_waiting_age_seconds: histogram of how long the waiting runs had waited when
//     the snapshot was read (a snapshot, not cumulative);
//   - runsdesk_worker_leases: gauge, running runs holding a lease, from the snapshot;
//   - runsdesk_decisions_total{kind,outcome}: counter, see ObserveDecision;
//   - runsdesk_http_request_duration_seconds{route,method,code}: histogram, see Middleware;
//   - runsdesk_metrics_source_errors_total{query}: counter of failed snapshot queries;
//   - runsdesk_metrics_snapshot_age_seconds: gauge, how old the served snapshot is;
//   - runsdesk_metrics_snapshot_refresh_failed: gauge, 1 when the last refresh failed.
//
// The first three are read from the Source together, as a snapshot that a scrape refreshes
// when it is older than Config.Interval; concurrent scrapes share one refresh. A refresh whose
// query fails keeps the previous snapshot (or, before the first good one, these families have
// no samples). Safe for concurrent use.
type Metrics struct {
	reg        *Registry
	src        Source
	log        *slog.Logger
	now        func() time.Time
	snaps      *snapshots
	scrape     sync.Mutex
	runs       *GaugeVec
	waiting    *HistogramVec
	leases     *GaugeVec
	decisions  *CounterVec
	http       *HistogramVec
	srcErrors  *CounterVec
	snapAge    *GaugeVec
	snapFailed *GaugeVec
}

// New builds the desk's metric set on a fresh registry.
func New(cfg Config) *Metrics {
	m := &Metrics{reg: NewRegistry(), src: cfg.Source, log: cfg.Logger, now: cfg.Now}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.src != nil {
		m.snaps = &snapshots{read: m.read, now: m.now, interval: orDefault(cfg.Interval, 15*time.Second),
			timeout: orDefault(cfg.ScrapeTimeout, 5*time.Second)}
	}
	m.runs = m.reg.Gauge("runsdesk_runs", "Runs per status, as of the metrics snapshot.", "status")
	m.waiting = m.reg.Histogram("runsdesk_waiting_age_seconds",
		"How long the waiting runs had waited, as of the metrics snapshot.", waitingBuckets)
	m.leases = m.reg.Gauge("runsdesk_worker_leases", "Running runs holding a worker lease, as of the metrics snapshot.")
	m.decisions = m.reg.Counter("runsdesk_decisions_total", "Approval and input decisions by outcome.", "kind", "outcome")
	m.http = m.reg.Histogram("runsdesk_http_request_duration_seconds",
		"HTTP request duration by route pattern, method and status code.", httpBuckets, "route", "method", "code")
	m.srcErrors = m.reg.Counter("runsdesk_metrics_source_errors_total", "Metrics snapshot queries that failed.", "query")
	m.snapAge = m.reg.Gauge("runsdesk_metrics_snapshot_age_seconds", "Age of the metrics snapshot served (no sample before the first).")
	m.snapFailed = m.reg.Gauge("runsdesk_metrics_snapshot_refresh_failed", "1 when the last refresh of the metrics snapshot failed and an older one is served.")
	return m
}

// Registry returns the underlying registry, for metrics that belong to other packages.
func (m *Metrics) Registry() *Registry { return m.reg }

// ObserveDecision counts one decision attempt. kind is "approval" or "input"; outcome is
// "approved", "denied" or "submitted" for an accepted decision, "replayed" for an idempotent
// repeat, or the runtime.Code of a refusal. Both must come from such bounded sets, never from
// request data. See Outcome.
func (m *Metrics) ObserveDecision(kind, outcome string) { m.decisions.Inc(kind, outcome) }

// Verdict is the outcome word of an accepted approval: "approved" or "denied".
func Verdict(approved bool) string {
	if approved {
		return "approved"
	}
	return "denied"
}

// Outcome is the outcome label ObserveDecision expects for the result of runtime.Approve
// (approved is the verdict asked for) or runtime.SubmitInput (approved is ignored).
func Outcome(kind string, approved bool, out runtime.Outcome, err error) string {
	var re *runtime.Error
	switch {
	case err == nil && out.Replayed:
		return "replayed"
	case err == nil && kind == "input":
		return "submitted"
	case err == nil:
		return Verdict(approved)
	case errors.As(err, &re):
		return string(re.Code)
	}
	return "error"
}

// snapshot returns the snapshot to serve and whether its last refresh failed; nil without a
// Source or before the first good refresh.
func (m *Metrics) snapshot(ctx context.Context) (*snapshot, bool) {
	if m.snaps == nil {
		return nil, false
	}
	return m.snaps.get(ctx)
}

// read queries the Source for a snapshot; the first failing query ends it.
func (m *Metrics) read(ctx context.Context) (*snapshot, error) {
	snap := &snapshot{at: m.now()}
	var err error
	if snap.runs, err = m.src.CountByStatus(ctx); err != nil {
		return nil, m.failed("count_by_status", err)
	}
	if snap.waiting, err = m.readWaiting(ctx, snap.at.Unix()); err != nil {
		return nil, err
	}
	if snap.leased, err = m.src.CountLeased(ctx); err != nil {
		return nil, m.failed("count_leased", err)
	}
	return snap, nil
}

// readWaiting reads the waiting-age histogram; a Source answering with another number of
// buckets fails the refresh.
func (m *Metrics) readWaiting(ctx context.Context, now int64) (ageHistogram, error) {
	cumulative, sum, err := m.src.WaitingAges(ctx, now, waitingBounds)
	if err == nil && len(cumulative) != len(waitingBounds)+1 {
		err = fmt.Errorf("%d bucket counts for %d bounds", len(cumulative), len(waitingBounds))
	}
	if err != nil {
		return ageHistogram{}, m.failed("waiting_ages", err)
	}
	return ageHistogram{cumulative: cumulative, sum: sum}, nil
}

// failed counts and logs a failed snapshot query and returns it wrapped.
func (m *Metrics) failed(query string, err error) error {
	err = fmt.Errorf("metrics: %s: %w", query, err)
	m.srcErrors.Inc(query)
	m.log.Error("metrics query failed", "query", query, "err", err)
	return err
}

// apply sets the snapshot families from snap (none without one). The caller holds m.scrape.
func (m *Metrics) apply(snap *snapshot, failed bool) {
	m.runs.Reset()
	m.snapFailed.Set(boolGauge(failed))
	if snap == nil {
		m.waiting.f.clear()
		m.leases.f.clear()
		m.snapAge.f.clear()
		return
	}
	for _, s := range allStatuses {
		m.runs.Set(float64(snap.runs[string(s)]), string(s))
	}
	for s, n := range snap.runs {
		if !runtime.Status(s).Valid() {
			m.runs.Add(float64(n), "unknown")
		}
	}
	m.waiting.set(snap.waiting.cumulative, float64(snap.waiting.sum))
	m.leases.Set(float64(snap.leased))
	m.snapAge.Set(max(m.now().Sub(snap.at).Seconds(), 0))
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var allStatuses = []runtime.Status{
	runtime.StatusQueued, runtime.StatusRunning, runtime.StatusWaitingApproval, runtime.StatusWaitingInput,
	runtime.StatusCompleted, runtime.StatusFailed, runtime.StatusCancelled,
}
