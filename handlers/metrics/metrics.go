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

// Source is what the metrics read from the database at every scrape. Implementations run
// one cheap query per method and return store failures as errors, never as zeros.
type Source interface {
	// CountByStatus returns the number of runs per stored status value
	// (SELECT status, COUNT(*) FROM tx_nrllm_agentrun GROUP BY status).
	CountByStatus(ctx context.Context) (map[string]int, error)
	// WaitingSince returns suspended_at (unix seconds) of every waiting run
	// (SELECT suspended_at FROM tx_nrllm_agentrun WHERE status IN (waiting…) ).
	WaitingSince(ctx context.Context) ([]int64, error)
	// CountLeased returns the number of running runs holding a lease
	// (status = 'running' AND lease_expires > 0).
	CountLeased(ctx context.Context) (int, error)
}

// Buckets of the desk's histograms (read-only tables).
var (
	// httpBuckets are request durations in seconds, Prometheus' defaults.
	httpBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// waitingBuckets are waiting ages in seconds: 1 min, 5 min, 15 min, 30 min, 1 h, 4 h,
	// 12 h, 1 d, 3 d, 7 d.
	waitingBuckets = []float64{60, 300, 900, 1800, 3600, 14400, 43200, 86400, 259200, 604800}
)

// Config wires Metrics. Source is required for the scrape-time metrics; the rest default.
type Config struct {
	Source Source
	Logger *slog.Logger
	// Now is the clock used for waiting ages (default time.Now).
	Now func() time.Time
	// ScrapeTimeout bounds the Source queries of one scrape (default 5 s).
	ScrapeTimeout time.Duration
}

// Metrics is runsdesk's metric set:
//   - runsdesk_runs{status}: gauge, runs per status, read from Source at scrape time; every
//     known status is present (0 when none);
//   - runsdesk_waiting_age_seconds: histogram of how long the currently waiting runs have
//     waited, rebuilt from Source at every scrape (a snapshot, not cumulative);
//   - runsdesk_worker_leases: gauge, running runs holding a lease, at scrape time;
//   - runsdesk_decisions_total{kind,outcome}: counter, see ObserveDecision;
//   - runsdesk_http_request_duration_seconds{route,method,code}: histogram, see Middleware;
//   - runsdesk_metrics_source_errors_total{query}: counter of failed scrape-time queries.
//
// A scrape-time query that fails leaves its family without samples for that scrape. Safe for
// concurrent use.
type Metrics struct {
	reg       *Registry
	src       Source
	log       *slog.Logger
	now       func() time.Time
	timeout   time.Duration
	scrape    sync.Mutex
	runs      *GaugeVec
	waiting   *HistogramVec
	leases    *GaugeVec
	decisions *CounterVec
	http      *HistogramVec
	srcErrors *CounterVec
}

// New builds the desk's metric set on a fresh registry.
func New(cfg Config) *Metrics {
	m := &Metrics{reg: NewRegistry(), src: cfg.Source, log: cfg.Logger, now: cfg.Now, timeout: cfg.ScrapeTimeout}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.timeout <= 0 {
		m.timeout = 5 * time.Second
	}
	m.runs = m.reg.Gauge("runsdesk_runs", "Runs per status, counted at scrape time.", "status")
	m.waiting = m.reg.Histogram("runsdesk_waiting_age_seconds",
		"How long the currently waiting runs have waited, rebuilt at every scrape.", waitingBuckets)
	m.leases = m.reg.Gauge("runsdesk_worker_leases", "Running runs holding a worker lease, at scrape time.")
	m.decisions = m.reg.Counter("runsdesk_decisions_total", "Approval and input decisions by outcome.", "kind", "outcome")
	m.http = m.reg.Histogram("runsdesk_http_request_duration_seconds",
		"HTTP request duration by route pattern, method and status code.", httpBuckets, "route", "method", "code")
	m.srcErrors = m.reg.Counter("runsdesk_metrics_source_errors_total", "Scrape-time queries that failed.", "query")
	return m
}

// Registry returns the underlying registry, for metrics that belong to other packages.
func (m *Metrics) Registry() *Registry { return m.reg }

// ObserveDecision counts one decision attempt. kind is "approval" or "input"; outcome is
// "approved", "denied" or "submitted" for an accepted decision, "replayed" for an idempotent
// repeat, or the runtime.Code of a refusal. Both must come from such bounded sets, never from
// request data. See Outcome.
func (m *Metrics) ObserveDecision(kind, outcome string) { m.decisions.Inc(kind, outcome) }

// Outcome is the outcome label ObserveDecision expects for the result of runtime.Approve
// (approved is the verdict asked for) or runtime.SubmitInput (approved is ignored).
func Outcome(kind string, approved bool, out runtime.Outcome, err error) string {
	var re *runtime.Error
	switch {
	case err == nil && out.Replayed:
		return "replayed"
	case err == nil && kind == "input":
		return "submitted"
	case err == nil && approved:
		return "approved"
	case err == nil:
		return "denied"
	case errors.As(err, &re):
		return string(re.Code)
	}
	return "error"
}

// collect refreshes the scrape-time families from the Source. The caller holds m.scrape.
func (m *Metrics) collect(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	m.runs.Reset()
	m.waiting.Reset()
	m.leases.Reset()
	if m.src == nil {
		m.waiting.f.clear()
		m.leases.f.clear()
		return
	}
	if counts, err := m.src.CountByStatus(ctx); m.ok("count_by_status", err) {
		for _, s := range allStatuses {
			m.runs.Set(float64(counts[string(s)]), string(s))
		}
		for s, n := range counts {
			if !runtime.Status(s).Valid() {
				m.runs.Add(float64(n), "unknown")
			}
		}
	}
	if since, err := m.src.WaitingSince(ctx); m.ok("waiting_since", err) {
		now := m.now().Unix()
		for _, t := range since {
			m.waiting.Observe(float64(max(now-t, 0)))
		}
	} else {
		m.waiting.f.clear()
	}
	if n, err := m.src.CountLeased(ctx); m.ok("count_leased", err) {
		m.leases.Set(float64(n))
	} else {
		m.leases.f.clear()
	}
}

func (m *Metrics) ok(query string, err error) bool {
	if err == nil {
		return true
	}
	m.srcErrors.Inc(query)
	m.log.Error("metrics query failed", "query", query, "err", fmt.Errorf("metrics: %s: %w", query, err))
	return false
}

var allStatuses = []runtime.Status{
	runtime.StatusQueued, runtime.StatusRunning, runtime.StatusWaitingApproval, runtime.StatusWaitingInput,
	runtime.StatusCompleted, runtime.StatusFailed, runtime.StatusCancelled,
}
