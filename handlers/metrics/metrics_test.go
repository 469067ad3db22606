package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

type fakeSource struct {
	mu     sync.Mutex
	counts map[string]int
	since  []int64
	leased int
	err    error
	// calls counts CountByStatus calls; gate, when set, holds each of them until it closes
	// or the call's context ends.
	calls int
	gate  chan struct{}
}

func (f *fakeSource) CountByStatus(ctx context.Context) (map[string]int, error) {
	f.mu.Lock()
	f.calls++
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts, f.err
}

func (f *fakeSource) set(update func(f *fakeSource)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	update(f)
}

func (f *fakeSource) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeSource) WaitingAges(_ context.Context, now int64, bounds []int64) ([]int64, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cumulative, sum := histogramOf(f.since, now, bounds)
	return cumulative, sum, f.err
}

// histogramOf buckets waiting times (suspended_at, unix seconds) by their age at now, as
// Source.WaitingAges counts them.
func histogramOf(since []int64, now int64, bounds []int64) ([]int64, int64) {
	cumulative := make([]int64, len(bounds)+1)
	var sum int64
	for _, at := range since {
		age := max(now-at, 0)
		sum += age
		for i, b := range bounds {
			if age <= b {
				cumulative[i]++
			}
		}
		cumulative[len(bounds)]++
	}
	return cumulative, sum
}

func (f *fakeSource) CountLeased(context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leased, f.err
}

const now = 1_800_000_000

// testClock is a settable clock, starting at now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestMetrics(src Source) *Metrics {
	m, _ := newClockedMetrics(src)
	return m
}

func newClockedMetrics(src Source) (*Metrics, *testClock) {
	clk := &testClock{t: time.Unix(now, 0)}
	return New(Config{Source: src, Now: clk.Now}), clk
}

// mustContain fails t for each line missing from the exposition got.
func mustContain(t *testing.T, got string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}
}

func scrape(t *testing.T, e *echo.Echo) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.RemoteAddr = "127.0.0.1:4000"
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != TextContentType {
		t.Fatalf("content type %q", ct)
	}
	return rec.Body.String()
}

func newEcho(m *Metrics) *echo.Echo {
	e := echo.New()
	e.Use(m.Middleware(nil))
	e.GET("/metrics", m.Handler(), LoopbackOnly())
	return e
}

// TestDeskMetrics: every status is present (unknown stored values as "unknown"), waiting ages
// come from suspended_at and the clock, leases and decisions are exported.
func TestDeskMetrics(t *testing.T) {
	src := &fakeSource{
		counts: map[string]int{"waiting_for_approval": 2, "completed": 5, "bogus": 1},
		since:  []int64{now - 30, now - 400, now - 90000, now + 5},
		leased: 3,
	}
	m, clk := newClockedMetrics(src)
	m.ObserveDecision("approval", "approved")
	m.ObserveDecision("approval", "approved")
	m.ObserveDecision("approval", "stale_approval_turn")
	e := newEcho(m)
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/nowhere", nil))
	got := scrape(t, e)
	for _, line := range []string{
		`runsdesk_runs{status="queued"} 0`,
		`runsdesk_runs{status="waiting_for_approval"} 2`,
		`runsdesk_runs{status="completed"} 5`,
		`runsdesk_runs{status="cancelled"} 0`,
		`runsdesk_runs{status="unknown"} 1`,
		`runsdesk_waiting_age_seconds_bucket{le="60"} 2`,
		`runsdesk_waiting_age_seconds_bucket{le="900"} 3`,
		`runsdesk_waiting_age_seconds_bucket{le="86400"} 3`,
		`runsdesk_waiting_age_seconds_bucket{le="259200"} 4`,
		`runsdesk_waiting_age_seconds_count 4`,
		`runsdesk_waiting_age_seconds_sum 90430`,
		`runsdesk_worker_leases 3`,
		`runsdesk_decisions_total{kind="approval",outcome="approved"} 2`,
		`runsdesk_decisions_total{kind="approval",outcome="stale_approval_turn"} 1`,
		"# TYPE runsdesk_http_request_duration_seconds histogram",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}

	src.set(func(f *fakeSource) { f.counts, f.since, f.leased = map[string]int{}, nil, 0 })
	clk.advance(15 * time.Second)
	got = scrape(t, newEcho(m))
	mustContain(t, got, `runsdesk_runs{status="waiting_for_approval"} 0`, "runsdesk_waiting_age_seconds_count 0",
		"runsdesk_worker_leases 0", "runsdesk_metrics_snapshot_age_seconds 0", "runsdesk_metrics_snapshot_refresh_failed 0")
	if strings.Contains(got, `status="unknown"`) {
		t.Errorf("a stale series survived the scrape:\n%s", got)
	}
}

// TestSourceFailure: before any good snapshot, a failing query leaves the snapshot families
// without samples and is counted; the scrape still succeeds.
func TestSourceFailure(t *testing.T) {
	m := newTestMetrics(&fakeSource{err: errors.New("db down")})
	got := scrape(t, newEcho(m))
	for _, bad := range []string{"runsdesk_runs{", "runsdesk_worker_leases ", "runsdesk_waiting_age_seconds_count", "runsdesk_metrics_snapshot_age_seconds "} {
		if strings.Contains(got, "\n"+bad) {
			t.Errorf("sample %q written although its query failed:\n%s", bad, got)
		}
	}
	mustContain(t, got, `runsdesk_metrics_source_errors_total{query="count_by_status"} 1`,
		"runsdesk_metrics_snapshot_refresh_failed 1")
}

// TestSnapshotInterval: scrapes within the interval share one snapshot (one query); the first
// scrape after it refreshes, and the age gauge tells how old the served values are.
func TestSnapshotInterval(t *testing.T) {
	src := &fakeSource{counts: map[string]int{"queued": 1}}
	m, clk := newClockedMetrics(src)
	e := newEcho(m)
	scrape(t, e)
	clk.advance(14 * time.Second)
	src.set(func(f *fakeSource) { f.counts = map[string]int{"queued": 2} })
	got := scrape(t, e)
	mustContain(t, got, `runsdesk_runs{status="queued"} 1`, "runsdesk_metrics_snapshot_age_seconds 14")
	if n := src.callCount(); n != 1 {
		t.Fatalf("two scrapes within the interval ran %d refreshes", n)
	}
	clk.advance(time.Second)
	got = scrape(t, e)
	mustContain(t, got, `runsdesk_runs{status="queued"} 2`, "runsdesk_metrics_snapshot_age_seconds 0")
	if n := src.callCount(); n != 2 {
		t.Fatalf("a scrape after the interval: %d refreshes in all, want 2", n)
	}
}

// TestSnapshotKeptOnFailure: a failed refresh keeps serving the previous snapshot, marked
// failed and aging, and is retried once per interval, not at every scrape.
func TestSnapshotKeptOnFailure(t *testing.T) {
	src := &fakeSource{counts: map[string]int{"running": 3}, leased: 2}
	m, clk := newClockedMetrics(src)
	e := newEcho(m)
	scrape(t, e)
	src.set(func(f *fakeSource) { f.err = errors.New("db down") })
	clk.advance(20 * time.Second)
	got := scrape(t, e)
	mustContain(t, got, `runsdesk_runs{status="running"} 3`, "runsdesk_worker_leases 2",
		"runsdesk_metrics_snapshot_age_seconds 20", "runsdesk_metrics_snapshot_refresh_failed 1",
		`runsdesk_metrics_source_errors_total{query="count_by_status"} 1`)
	clk.advance(time.Second)
	scrape(t, e)
	if n := src.callCount(); n != 2 {
		t.Fatalf("%d refreshes, want 2: a failed one is retried once per interval", n)
	}
	src.set(func(f *fakeSource) { f.err = nil })
	clk.advance(15 * time.Second)
	mustContain(t, scrape(t, e), "runsdesk_metrics_snapshot_age_seconds 0", "runsdesk_metrics_snapshot_refresh_failed 0")
}

// TestScrapesShareOneRefresh: scrapes arriving while a refresh runs wait for it instead of
// starting their own; a scrape whose context ends first gets the previous snapshot at once
// and does not cancel the refresh the others wait for.
func TestScrapesShareOneRefresh(t *testing.T) {
	gate := make(chan struct{})
	src := &fakeSource{counts: map[string]int{"queued": 1}, gate: gate}
	m, _ := newClockedMetrics(src)
	e := newEcho(m)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/metrics", nil)
	req.RemoteAddr = "127.0.0.1:4000"
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "\nrunsdesk_runs{") {
		t.Fatalf("scrape that gave up: %d\n%s", rec.Code, rec.Body)
	}

	var wg sync.WaitGroup
	bodies := make([]string, 8)
	for i := range bodies {
		wg.Go(func() { bodies[i] = scrape(t, e) })
	}
	close(gate)
	wg.Wait()
	for _, got := range bodies {
		mustContain(t, got, `runsdesk_runs{status="queued"} 1`)
	}
	if n := src.callCount(); n != 1 {
		t.Fatalf("%d refreshes for 9 scrapes within the interval, want 1", n)
	}
}

// TestMiddlewareUsesRoutePattern: the route label is the pattern, never the URL; unmatched
// requests, odd methods and error statuses are bounded labels.
func TestMiddlewareUsesRoutePattern(t *testing.T) {
	m := newTestMetrics(&fakeSource{counts: map[string]int{}})
	e := newEcho(m)
	e.GET("/runs/:uuid", func(c echo.Context) error { return c.String(http.StatusOK, "x") })
	e.POST("/runs/:uuid/cancel", func(c echo.Context) error { return echo.NewHTTPError(http.StatusConflict) })
	e.GET("/boom", func(c echo.Context) error { return errors.New("boom") })
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/runs/0b7f6f0e-secret-1"}, {http.MethodGet, "/runs/other"},
		{http.MethodPost, "/runs/abc/cancel"}, {http.MethodGet, "/boom"},
		{http.MethodGet, "/nowhere/at/all"}, {"BREW", "/runs/x"},
	} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(r.method, r.path, nil))
	}
	got := scrape(t, e)
	for _, line := range []string{ // label pairs written sorted by name
		`runsdesk_http_request_duration_seconds_count{code="200",method="GET",route="/runs/:uuid"} 2`,
		`runsdesk_http_request_duration_seconds_count{code="409",method="POST",route="/runs/:uuid/cancel"} 1`,
		`runsdesk_http_request_duration_seconds_count{code="500",method="GET",route="/boom"} 1`,
		`method="OTHER"`,
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}
	for _, leak := range []string{"secret", "/runs/other", "/runs/abc", "/nowhere"} {
		if strings.Contains(got, leak) {
			t.Errorf("raw URL %q leaked into labels:\n%s", leak, got)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	e := newEcho(newTestMetrics(nil))
	cases := []struct {
		remote string
		header string
		want   int
	}{
		{"127.0.0.1:5000", "", http.StatusOK},
		{"[::1]:5000", "", http.StatusOK},
		{"10.0.0.7:5000", "", http.StatusNotFound},
		{"127.0.0.1:5000", "X-Forwarded-For", http.StatusNotFound},
		{"127.0.0.1:5000", "Forwarded", http.StatusNotFound},
		{"127.0.0.1:5000", "X-Real-Ip", http.StatusNotFound},
	}
	for _, c := range cases {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.RemoteAddr = c.remote
		if c.header != "" {
			req.Header.Set(c.header, "203.0.113.9")
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.remote, c.header, rec.Code, c.want)
		}
	}
}

// TestConcurrentScrapes runs under -race: scrapes, decisions and requests at once.
func TestConcurrentScrapes(t *testing.T) {
	m, clk := newClockedMetrics(&fakeSource{counts: map[string]int{"queued": 1}, since: []int64{now - 10}})
	e := newEcho(m)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				m.ObserveDecision("approval", "approved")
				clk.advance(5 * time.Second)
				scrape(t, e)
			}
		}()
	}
	wg.Wait()
	if got := scrape(t, e); !strings.Contains(got, `runsdesk_decisions_total{kind="approval",outcome="approved"} 400`) ||
		!strings.Contains(got, "runsdesk_waiting_age_seconds_count 1\n") {
		t.Fatalf("after concurrent scrapes:\n%s", got)
	}
}

// TestExpiryMetrics: expiries by action, reminders and escalations are counted; every action
// is present from the start.
func TestExpiryMetrics(t *testing.T) {
	m, _ := newClockedMetrics(&fakeSource{})
	e := newEcho(m)
	mustContain(t, scrape(t, e), `runsdesk_expiries_total{action="answer"} 0`, `runsdesk_reminders_total 0`, `runsdesk_escalations_total 0`)
	m.ObserveExpiry("deny")
	m.ObserveExpiry("deny")
	m.ObserveExpiry("cancel")
	m.ObserveReminder()
	m.ObserveEscalation()
	mustContain(t, scrape(t, e),
		`runsdesk_expiries_total{action="deny"} 2`,
		`runsdesk_expiries_total{action="cancel"} 1`,
		`runsdesk_expiries_total{action="answer"} 0`,
		`runsdesk_reminders_total 1`,
		`runsdesk_escalations_total 1`,
	)
}

// TestTimeToDecisionMetric: each time to decision is a sample of the histogram under its
// pause kind, configuration and who decided.
func TestTimeToDecisionMetric(t *testing.T) {
	m, _ := newClockedMetrics(&fakeSource{})
	e := newEcho(m)
	m.ObserveTimeToDecision("approval", "refunds", "person", 90)
	m.ObserveTimeToDecision("approval", "refunds", "rule", 0)
	m.ObserveTimeToDecision("input", "refunds", "expiry", 3600)
	mustContain(t, scrape(t, e),
		`runsdesk_time_to_decision_seconds_bucket{configuration="refunds",decided_by_kind="person",kind="approval",le="60"} 0`,
		`runsdesk_time_to_decision_seconds_bucket{configuration="refunds",decided_by_kind="person",kind="approval",le="300"} 1`,
		`runsdesk_time_to_decision_seconds_sum{configuration="refunds",decided_by_kind="person",kind="approval"} 90`,
		`runsdesk_time_to_decision_seconds_count{configuration="refunds",decided_by_kind="rule",kind="approval"} 1`,
		`runsdesk_time_to_decision_seconds_count{configuration="refunds",decided_by_kind="expiry",kind="input"} 1`,
	)
}
