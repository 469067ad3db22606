package metrics

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestGoAndProcessCollectors: the exposition carries the Go runtime's and, on Linux, the
// process's standard metrics next to the desk's.
func TestGoAndProcessCollectors(t *testing.T) {
	got := scrape(t, newEcho(newTestMetrics(&fakeSource{counts: map[string]int{}})))
	want := []string{"# TYPE go_goroutines gauge", "go_goroutines ", "go_memstats_heap_alloc_bytes ", "go_info{version="}
	if goruntime.GOOS == "linux" {
		want = append(want, "# TYPE process_cpu_seconds_total counter", "process_cpu_seconds_total ",
			"process_resident_memory_bytes ", "process_open_fds ")
	}
	for _, prefix := range want {
		if !strings.Contains(got, "\n"+prefix) {
			t.Errorf("no line starting %q in:\n%s", prefix, got)
		}
	}
}

// timed matches the samples of the request-duration histogram that depend on how long the
// requests took: _sum and the finite buckets.
var timed = regexp.MustCompile(`(?m)^(runsdesk_http_request_duration_seconds_(?:sum\{[^}]*\}|bucket\{[^}]*le="[0-9.]+"\})) .*$`)

// TestDeskExposition: the desk's families, exactly as written in the text format: names,
// help, types, labels (pairs sorted by name), every bucket with +Inf, _sum and _count; series
// sorted by label values; a refresh that failed after a good one keeps the good snapshot.
func TestDeskExposition(t *testing.T) {
	src := &fakeSource{counts: map[string]int{"waiting_for_approval": 2, "bogus": 1}, since: []int64{now - 30, now - 400}, leased: 3}
	m, clk := newClockedMetrics(src)
	e := newEcho(m)
	e.GET("/runs/:uuid", func(c echo.Context) error { return c.String(http.StatusOK, "x") })
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/runs/x", nil))
	m.ObserveDecision("input", "submitted")
	scrape(t, e)
	src.set(func(f *fakeSource) { f.err = errors.New("db down") })
	clk.advance(20 * time.Second)

	var desk strings.Builder
	for line := range strings.SplitSeq(scrape(t, e), "\n") {
		if strings.HasPrefix(line, "runsdesk_") || strings.HasPrefix(line, "# HELP runsdesk_") || strings.HasPrefix(line, "# TYPE runsdesk_") {
			desk.WriteString(line + "\n")
		}
	}
	got := timed.ReplaceAllString(desk.String(), "$1 T")
	var want strings.Builder
	want.WriteString(`# HELP runsdesk_decisions_total Decision attempts by kind and outcome.
# TYPE runsdesk_decisions_total counter
runsdesk_decisions_total{kind="input",outcome="submitted"} 1
# HELP runsdesk_escalations_total Waiting runs escalated by this process.
# TYPE runsdesk_escalations_total counter
runsdesk_escalations_total 0
# HELP runsdesk_expiries_total Pauses expired by this process, by the expiry's action.
# TYPE runsdesk_expiries_total counter
runsdesk_expiries_total{action="answer"} 0
runsdesk_expiries_total{action="cancel"} 0
runsdesk_expiries_total{action="deny"} 0
# HELP runsdesk_http_request_duration_seconds HTTP request duration by route pattern, method and status code.
# TYPE runsdesk_http_request_duration_seconds histogram
`)
	for _, route := range []string{"/metrics", "/runs/:uuid"} {
		labels := `code="200",method="GET",route="` + route + `"`
		for _, le := range []string{"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"} {
			want.WriteString("runsdesk_http_request_duration_seconds_bucket{" + labels + `,le="` + le + `"} T` + "\n")
		}
		want.WriteString("runsdesk_http_request_duration_seconds_bucket{" + labels + `,le="+Inf"} 1` + "\n")
		want.WriteString("runsdesk_http_request_duration_seconds_sum{" + labels + "} T\n")
		want.WriteString("runsdesk_http_request_duration_seconds_count{" + labels + "} 1\n")
	}
	want.WriteString(`# HELP runsdesk_metrics_snapshot_age_seconds Age of the metrics snapshot served (no sample before the first).
# TYPE runsdesk_metrics_snapshot_age_seconds gauge
runsdesk_metrics_snapshot_age_seconds 20
# HELP runsdesk_metrics_snapshot_refresh_failed 1 when the last refresh of the metrics snapshot failed and an older one is served.
# TYPE runsdesk_metrics_snapshot_refresh_failed gauge
runsdesk_metrics_snapshot_refresh_failed 1
# HELP runsdesk_metrics_source_errors_total Metrics snapshot queries that failed.
# TYPE runsdesk_metrics_source_errors_total counter
runsdesk_metrics_source_errors_total{query="count_by_status"} 1
runsdesk_metrics_source_errors_total{query="count_leased"} 0
runsdesk_metrics_source_errors_total{query="waiting_ages"} 0
# HELP runsdesk_notifications_total Notification delivery attempts by outcome: sent, retried (failed, to be tried again) or failed (given up).
# TYPE runsdesk_notifications_total counter
runsdesk_notifications_total{outcome="failed"} 0
runsdesk_notifications_total{outcome="retried"} 0
runsdesk_notifications_total{outcome="sent"} 0
# HELP runsdesk_reminders_total Reminders of waiting runs recorded by this process.
# TYPE runsdesk_reminders_total counter
runsdesk_reminders_total 0
# HELP runsdesk_runs Runs per status, as of the metrics snapshot.
# TYPE runsdesk_runs gauge
runsdesk_runs{status="cancelled"} 0
runsdesk_runs{status="completed"} 0
runsdesk_runs{status="failed"} 0
runsdesk_runs{status="queued"} 0
runsdesk_runs{status="running"} 0
runsdesk_runs{status="unknown"} 1
runsdesk_runs{status="waiting_for_approval"} 2
runsdesk_runs{status="waiting_for_input"} 0
# HELP runsdesk_waiting_age_seconds How long the waiting runs had waited, as of the metrics snapshot.
# TYPE runsdesk_waiting_age_seconds histogram
runsdesk_waiting_age_seconds_bucket{le="60"} 1
runsdesk_waiting_age_seconds_bucket{le="300"} 1
runsdesk_waiting_age_seconds_bucket{le="900"} 2
runsdesk_waiting_age_seconds_bucket{le="1800"} 2
runsdesk_waiting_age_seconds_bucket{le="3600"} 2
runsdesk_waiting_age_seconds_bucket{le="14400"} 2
runsdesk_waiting_age_seconds_bucket{le="43200"} 2
runsdesk_waiting_age_seconds_bucket{le="86400"} 2
runsdesk_waiting_age_seconds_bucket{le="259200"} 2
runsdesk_waiting_age_seconds_bucket{le="604800"} 2
runsdesk_waiting_age_seconds_bucket{le="+Inf"} 2
runsdesk_waiting_age_seconds_sum 430
runsdesk_waiting_age_seconds_count 2
# HELP runsdesk_worker_leases Running runs holding a worker lease, as of the metrics snapshot.
# TYPE runsdesk_worker_leases gauge
runsdesk_worker_leases 3
`)
	if got != want.String() {
		t.Fatalf("exposition:\n%s\nwant:\n%s", got, want.String())
	}
}
