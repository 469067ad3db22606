// Package metrics exposes runsdesk's Prometheus metrics on client_golang (a private registry,
// the Go and process collectors, a collector for the database snapshot) and the process probes
// /healthz and /readyz: the desk's metric set (Metrics), an echo middleware timing every
// request by route pattern, and the handlers. It has no global state: cmd/web builds one
// Metrics and passes it to whoever observes decisions.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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
	waitingBounds = []int64{60, 300, 900, 1800, 3600, 14400, 43200, 86400, 259200, 604800}
	// decisionBuckets are times to decision in seconds: 1 s, 10 s and 30 s (rules, quick
	// people), then waitingBounds.
	decisionBuckets = []float64{1, 10, 30, 60, 300, 900, 1800, 3600, 14400, 43200, 86400, 259200, 604800}
)

// Config wires Metrics. Source is required for the scrape-time metrics; the rest default.
type Config struct {
	Source Source
	// Outbox, when set, is read with the snapshot for the outbox age.
	Outbox OutboxSource
	Logger *slog.Logger
	// Now is the clock used for waiting ages and snapshot ages (default time.Now).
	Now func() time.Time
	// ScrapeTimeout bounds the Source queries of one snapshot refresh, and so how long a
	// scrape waits for it (default 5 s).
	ScrapeTimeout time.Duration
	// Interval is how old the snapshot of the Source's values may get before a scrape
	// refreshes it (default 15 s): scrapes within it run no query.
	Interval time.Duration
	// Rules, when set, adds the standing approvals' uses to the snapshot.
	Rules RuleUses
	// Queue, when set, adds the queue's health to the snapshot (the runsdesk_queue_* gauges).
	Queue QueueSource
}

// Metrics is runsdesk's metric set, on a private Prometheus registry:
//   - runsdesk_runs{status}: gauge, runs per status, from the snapshot; every known status
//     is present (0 when none);
//   - runsdesk_waiting_age_seconds: histogram of how long the waiting runs had waited when
//     the snapshot was read (a snapshot, not cumulative);
//   - runsdesk_worker_leases: gauge, running runs holding a lease, from the snapshot;
//   - runsdesk_decisions_total{kind,outcome}: counter, see ObserveDecision;
//   - runsdesk_time_to_decision_seconds{kind,configuration,decided_by_kind}: histogram, see
//     ObserveTimeToDecision;
//   - runsdesk_notifications_total{outcome}: counter, see ObserveNotification;
//   - runsdesk_notifications_oldest_undelivered_age_seconds: gauge, from the snapshot (Outbox);
//   - runsdesk_expiries_total{action}, runsdesk_reminders_total, runsdesk_escalations_total:
//     counters of the deadline steps this process took, see ObserveExpiry;
//   - runsdesk_http_request_duration_seconds{route,method,code}: histogram, see Middleware;
//   - runsdesk_metrics_source_errors_total{query}: counter of failed snapshot queries;
//   - runsdesk_metrics_snapshot_age_seconds: gauge, how old the served snapshot is;
//   - runsdesk_metrics_snapshot_refresh_failed: gauge, 1 when the last refresh failed;
//   - runsdesk_standing_approval_uses_total{rule}: counter, the automatic approvals each
//     standing approval made (stored with each approval, so every process counts them all),
//     from the snapshot, with Config.Rules;
//   - runsdesk_queue_waiting{configuration,tool,kind}, runsdesk_queue_oldest_wait_seconds,
//     runsdesk_queue_waiting_age_quantile_seconds{…,quantile}, runsdesk_queue_expiring_within_1h,
//     runsdesk_queue_escalated, runsdesk_queue_failed_notifications,
//     runsdesk_queue_decisions{…,decided_by_kind,window} and
//     runsdesk_queue_time_to_decision_quantile_seconds{…,decided_by_kind,quantile}: gauges of the
//     queue's health (the /queue page's figures without the people), from the snapshot, with
//     Config.Queue (queue.go);
//   - the Go runtime's go_* and the process's process_* metrics (client_golang's collectors).
//
// The first three are read from the Source together, as a snapshot that a scrape refreshes
// when it is older than Config.Interval; concurrent scrapes share one refresh. A refresh whose
// query fails keeps the previous snapshot (or, before the first good one, these families have
// no samples). Safe for concurrent use.
type Metrics struct {
	src       Source
	log       *slog.Logger
	now       func() time.Time
	snaps     *snapshots
	exposer   http.Handler
	decisions *prometheus.CounterVec
	decided   *prometheus.HistogramVec
	expiries  *prometheus.CounterVec
	reminders prometheus.Counter
	escalated prometheus.Counter
	// outbox and notifications: see notifications.go.
	outbox        OutboxSource
	notifications *prometheus.CounterVec
	http          *prometheus.HistogramVec
	srcErrors     *prometheus.CounterVec
	rules         RuleUses
	queue         QueueSource
}

// RuleUses reads how many automatic approvals each standing approval made; *db.Store
// implements it.
type RuleUses interface {
	StandingApprovalUses(ctx context.Context) (map[string]int64, error)
}

// New builds the desk's metric set on a fresh registry of its own.
func New(cfg Config) *Metrics {
	m := &Metrics{src: cfg.Source, log: cfg.Logger, now: cfg.Now, rules: cfg.Rules, outbox: cfg.Outbox, queue: cfg.Queue, notifications: newNotificationCounter()}
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
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "runsdesk_decisions_total",
		Help: "Decision attempts by kind and outcome."}, []string{"kind", "outcome"})
	m.decided = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "runsdesk_time_to_decision_seconds",
		Help:    "Time from a pause's start to its decision, decided by this process, by the pause's kind, configuration and who decided.",
		Buckets: decisionBuckets}, []string{"kind", "configuration", "decided_by_kind"})
	m.expiries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "runsdesk_expiries_total",
		Help: "Pauses expired by this process, by the expiry's action."}, []string{"action"})
	for _, a := range []string{"deny", "answer", "cancel"} {
		m.expiries.WithLabelValues(a)
	}
	m.reminders = prometheus.NewCounter(prometheus.CounterOpts{Name: "runsdesk_reminders_total",
		Help: "Reminders of waiting runs recorded by this process."})
	m.escalated = prometheus.NewCounter(prometheus.CounterOpts{Name: "runsdesk_escalations_total",
		Help: "Waiting runs escalated by this process."})
	m.http = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "runsdesk_http_request_duration_seconds",
		Help: "HTTP request duration by route pattern, method and status code.", Buckets: httpBuckets},
		[]string{"route", "method", "code"})
	m.srcErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "runsdesk_metrics_source_errors_total",
		Help: "Metrics snapshot queries that failed."}, []string{"query"})
	if m.src != nil {
		for _, q := range []string{queryCountByStatus, queryWaitingAges, queryCountLeased} {
			m.srcErrors.WithLabelValues(q)
		}
		if m.outbox != nil {
			m.srcErrors.WithLabelValues(queryOldestUndelivered)
		}
		if m.queue != nil {
			m.srcErrors.WithLabelValues(queryQueueHealth)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.decisions, m.decided, m.expiries, m.reminders, m.escalated, m.http, m.srcErrors, newSnapshotCollector(m.snaps, m.now),
		m.notifications, newOutboxCollector(m.snaps), newQueueCollector(m.snaps),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.exposer = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		ErrorLog: slogPrinter{m.log}})
	return m
}

// ObserveDecision counts one decision attempt. kind is "approval", "input", "expiry" or
// "elicitation_expiry"; outcome is "approved", "denied", "submitted", "deny", "answer" or
// "cancel" for an accepted decision, "replayed"
// for an idempotent repeat, or the runtime.Code of a refusal. Both come from such bounded sets
// (the runtime's), never from request data.
func (m *Metrics) ObserveDecision(kind, outcome string) {
	m.decisions.WithLabelValues(kind, outcome).Inc()
}

// ObserveTimeToDecision records one pause's time to decision: kind is approval, input or
// elicitation, configuration its configuration's identifier, decidedBy person, service, rule
// or expiry (bounded sets the runtime supplies, never request data).
func (m *Metrics) ObserveTimeToDecision(kind, configuration, decidedBy string, seconds float64) {
	m.decided.WithLabelValues(kind, configuration, decidedBy).Observe(seconds)
}

// ObserveExpiry counts one expiry by its action (deny, answer, cancel: the runtime's bounded
// set).
func (m *Metrics) ObserveExpiry(action string) { m.expiries.WithLabelValues(action).Inc() }

// ObserveReminder counts one reminder recorded.
func (m *Metrics) ObserveReminder() { m.reminders.Inc() }

// ObserveEscalation counts one waiting run escalated.
func (m *Metrics) ObserveEscalation() { m.escalated.Inc() }

// read queries the Source for a snapshot; the first failing query ends it.
func (m *Metrics) read(ctx context.Context) (*snapshot, error) {
	snap := &snapshot{at: m.now()}
	var err error
	if snap.runs, err = m.src.CountByStatus(ctx); err != nil {
		return nil, m.failed(queryCountByStatus, err)
	}
	if snap.waiting, err = m.readWaiting(ctx, snap.at.Unix()); err != nil {
		return nil, err
	}
	if snap.leased, err = m.src.CountLeased(ctx); err != nil {
		return nil, m.failed(queryCountLeased, err)
	}
	if m.rules != nil {
		if snap.ruleUses, err = m.rules.StandingApprovalUses(ctx); err != nil {
			return nil, m.failed(queryRuleUses, err)
		}
	}
	if snap.outbox, err = m.readOutbox(ctx); err != nil {
		return nil, err
	}
	if snap.queue, err = m.readQueue(ctx, snap.at.Unix()); err != nil {
		return nil, err
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
		return ageHistogram{}, m.failed(queryWaitingAges, err)
	}
	return ageHistogram{cumulative: cumulative, sum: sum}, nil
}

// failed counts and logs a failed snapshot query and returns it wrapped.
func (m *Metrics) failed(query string, err error) error {
	err = fmt.Errorf("metrics: %s: %w", query, err)
	m.srcErrors.WithLabelValues(query).Inc()
	m.log.Error("metrics query failed", "query", query, "err", err)
	return err
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// The query label values of runsdesk_metrics_source_errors_total, one per Source method.
const (
	queryCountByStatus = "count_by_status"
	queryWaitingAges   = "waiting_ages"
	queryCountLeased   = "count_leased"
	queryRuleUses      = "standing_approval_uses"
)

// slogPrinter logs promhttp's gathering errors.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	p.log.Error("metrics exposition", "err", strings.TrimSpace(fmt.Sprintln(v...)))
}

var allStatuses = []runtime.Status{
	runtime.StatusQueued, runtime.StatusRunning, runtime.StatusWaitingApproval, runtime.StatusWaitingInput,
	runtime.StatusCompleted, runtime.StatusFailed, runtime.StatusCancelled,
}
