package metrics

import (
	"strings"
	"sync"
	"testing"
)

func text(t *testing.T, r *Registry) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestExpositionGolden: families sorted by name, series by label values, HELP escaped,
// label values escaped, histograms cumulative with +Inf, _sum and _count.
func TestExpositionGolden(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("app_requests_total", "Requests.\nSecond line with a \\ backslash.", "path", "code")
	g := r.Gauge("app_temperature", "Current temperature.")
	h := r.Histogram("app_latency_seconds", "Latency.", []float64{0.1, 0.5, 1}, "route")
	r.Gauge("app_empty", "No series yet.", "kind")

	c.Inc("/b", "200")
	c.Add(2, "/a", "500")
	c.Inc(`quo"te\back`+"\nnl", "200")
	c.Add(-5, "/a", "500")
	g.Set(-1.5)
	for _, x := range []float64{0.05, 0.1, 0.3, 2} {
		h.Observe(x, "/x")
	}

	want := `# HELP app_empty No series yet.
# TYPE app_empty gauge
# HELP app_latency_seconds Latency.
# TYPE app_latency_seconds histogram
app_latency_seconds_bucket{route="/x",le="0.1"} 2
app_latency_seconds_bucket{route="/x",le="0.5"} 3
app_latency_seconds_bucket{route="/x",le="1"} 3
app_latency_seconds_bucket{route="/x",le="+Inf"} 4
app_latency_seconds_sum{route="/x"} 2.45
app_latency_seconds_count{route="/x"} 4
# HELP app_requests_total Requests.\nSecond line with a \\ backslash.
# TYPE app_requests_total counter
app_requests_total{path="/a",code="500"} 2
app_requests_total{path="/b",code="200"} 1
app_requests_total{path="quo\"te\\back\nnl",code="200"} 1
# HELP app_temperature Current temperature.
# TYPE app_temperature gauge
app_temperature -1.5
`
	if got := text(t, r); got != want {
		t.Fatalf("exposition:\n%s\nwant:\n%s", got, want)
	}
}

// TestHistogramBuckets: a value equal to a bound counts in that bucket (le is ≤); values
// above every bound only in +Inf; buckets never decrease.
func TestHistogramBuckets(t *testing.T) {
	r := NewRegistry()
	h := r.Histogram("h", "h", []float64{1, 2, 5})
	for _, x := range []float64{0, 1, 1.5, 2, 5, 6, -3} {
		h.Observe(x)
	}
	want := `h_bucket{le="1"} 3
h_bucket{le="2"} 5
h_bucket{le="5"} 6
h_bucket{le="+Inf"} 7
h_sum 12.5
h_count 7
`
	if got := text(t, r); !strings.HasSuffix(got, want) {
		t.Fatalf("got:\n%s\nwant suffix:\n%s", got, want)
	}
}

func TestUnlabelledFamiliesStartAtZero(t *testing.T) {
	r := NewRegistry()
	r.Counter("c_total", "c")
	r.Histogram("h", "h", []float64{1})
	want := "# HELP c_total c\n# TYPE c_total counter\nc_total 0\n# HELP h h\n# TYPE h histogram\n" +
		"h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n"
	if got := text(t, r); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestConcurrentUpdates runs under -race: concurrent increments, observations and writes
// lose nothing.
func TestConcurrentUpdates(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("c_total", "c", "k")
	g := r.Gauge("g", "g")
	h := r.Histogram("h", "h", []float64{0.5}, "k")
	const workers, each = 16, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := []string{"a", "b"}[w%2]
			for range each {
				c.Inc(k)
				g.Add(1)
				h.Observe(1, k)
			}
			_ = r.WriteText(&strings.Builder{})
		}()
	}
	wg.Wait()
	got := text(t, r)
	for _, line := range []string{
		`c_total{k="a"} 4000`, `c_total{k="b"} 4000`, "g 8000",
		`h_bucket{k="a",le="+Inf"} 4000`, `h_count{k="b"} 4000`, `h_bucket{k="a",le="0.5"} 0`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("missing %q in:\n%s", line, got)
		}
	}
}

func TestRegistrationPanics(t *testing.T) {
	cases := map[string]func(r *Registry){
		"bad name":          func(r *Registry) { r.Counter("bad-name", "x") },
		"bad label":         func(r *Registry) { r.Counter("ok", "x", "bad-label") },
		"reserved label":    func(r *Registry) { r.Counter("ok", "x", "__name") },
		"le on histogram":   func(r *Registry) { r.Histogram("ok", "x", []float64{1}, "le") },
		"unsorted buckets":  func(r *Registry) { r.Histogram("ok", "x", []float64{2, 1}) },
		"duplicate":         func(r *Registry) { r.Counter("dup", "x"); r.Gauge("dup", "x") },
		"wrong label count": func(r *Registry) { r.Counter("ok", "x", "a").Inc() },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f(NewRegistry())
		})
	}
}
