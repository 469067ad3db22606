// Package metrics exposes runsdesk's Prometheus metrics (text exposition format 0.0.4) and
// the process probes /healthz and /readyz. It holds a small registry of counters, gauges and
// histograms with labels, the desk's own metric set (Metrics), an echo middleware timing
// every request by route pattern, and the handlers. It has no global state: cmd/web builds
// one Metrics and passes it to whoever observes decisions.
package metrics

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// TextContentType is the Content-Type of the Prometheus text exposition format 0.0.4.
const TextContentType = "text/plain; version=0.0.4; charset=utf-8"

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

type kind string

const (
	kindCounter   kind = "counter"
	kindGauge     kind = "gauge"
	kindHistogram kind = "histogram"
)

// Registry holds metric families and writes them in the text exposition format. Families are
// registered once, at construction; all methods are safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{families: map[string]*family{}}
}

// family is one metric name with its series, keyed by the joined label values.
type family struct {
	name    string
	help    string
	kind    kind
	labels  []string
	buckets []float64

	mu     sync.Mutex
	series map[string]*series
}

type series struct {
	values []string
	value  float64
	counts []uint64
	count  uint64
	sum    float64
}

// register adds a family. It panics on an invalid or duplicate name, an invalid label name,
// or (for histograms) a label named "le" or buckets that are not strictly increasing: these
// are programming errors caught by the first test that builds the registry.
func (r *Registry) register(f *family) *family {
	if !metricName.MatchString(f.name) {
		panic(fmt.Sprintf("metrics: invalid metric name %q", f.name))
	}
	for _, l := range f.labels {
		if !labelName.MatchString(l) || strings.HasPrefix(l, "__") || (f.kind == kindHistogram && l == "le") {
			panic(fmt.Sprintf("metrics: invalid label name %q on %s", l, f.name))
		}
	}
	for i, b := range f.buckets {
		if math.IsNaN(b) || math.IsInf(b, 0) || (i > 0 && b <= f.buckets[i-1]) {
			panic(fmt.Sprintf("metrics: buckets of %s must be finite and strictly increasing", f.name))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.families[f.name]; dup {
		panic(fmt.Sprintf("metrics: %s registered twice", f.name))
	}
	f.series = map[string]*series{}
	if len(f.labels) == 0 {
		f.get(nil)
	}
	r.families[f.name] = f
	return f
}

// get returns the series for values, creating it. The caller holds f.mu, or f is not yet
// shared. It panics when the number of values differs from the number of labels.
func (f *family) get(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", f.name, len(f.labels), len(values)))
	}
	key := strings.Join(values, "\xff")
	s, ok := f.series[key]
	if !ok {
		s = &series{values: slices.Clone(values)}
		if f.kind == kindHistogram {
			s.counts = make([]uint64, len(f.buckets))
		}
		f.series[key] = s
	}
	return s
}

// clear removes every series, including an unlabelled family's single series, so the
// family is written without samples.
func (f *family) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.series = map[string]*series{}
}

func (f *family) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.series = map[string]*series{}
	if len(f.labels) == 0 {
		f.get(nil)
	}
}

// WriteText writes every family, sorted by name, its series sorted by label values, in the
// text exposition format 0.0.4. A family with labels and no series is written as its HELP
// and TYPE lines only.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	fams := make([]*family, 0, len(r.families))
	for _, f := range r.families {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	var b strings.Builder
	for _, f := range fams {
		f.write(&b)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("metrics: write exposition: %w", err)
	}
	return nil
}

func (f *family) write(b *strings.Builder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.kind)
	keys := make([]string, 0, len(f.series))
	for k := range f.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := f.series[k]
		if f.kind != kindHistogram {
			fmt.Fprintf(b, "%s%s %s\n", f.name, f.labelText(s.values, ""), formatFloat(s.value))
			continue
		}
		for i, le := range f.buckets {
			fmt.Fprintf(b, "%s_bucket%s %d\n", f.name, f.labelText(s.values, formatFloat(le)), s.counts[i])
		}
		fmt.Fprintf(b, "%s_bucket%s %d\n", f.name, f.labelText(s.values, "+Inf"), s.count)
		fmt.Fprintf(b, "%s_sum%s %s\n", f.name, f.labelText(s.values, ""), formatFloat(s.sum))
		fmt.Fprintf(b, "%s_count%s %d\n", f.name, f.labelText(s.values, ""), s.count)
	}
}

// labelText renders {a="x",le="0.5"}; le is added when non-empty; "" when there is nothing.
func (f *family) labelText(values []string, le string) string {
	if len(values) == 0 && le == "" {
		return ""
	}
	parts := make([]string, 0, len(values)+1)
	for i, v := range values {
		parts = append(parts, f.labels[i]+`="`+escapeLabel(v)+`"`)
	}
	if le != "" {
		parts = append(parts, `le="`+le+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
