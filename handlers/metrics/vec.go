package metrics

import (
	"fmt"
	"sort"
)

// CounterVec is a counter family. Label values are passed positionally, in the order of the
// label names given at registration; a wrong count panics.
type CounterVec struct{ f *family }

// Counter registers a counter family; see Registry.register for what panics.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	return &CounterVec{r.register(&family{name: name, help: help, kind: kindCounter, labels: labels})}
}

// Inc adds 1 to the series with the given label values.
func (v *CounterVec) Inc(values ...string) { v.Add(1, values...) }

// Add adds d to the series with the given label values; a negative or NaN d is ignored, since
// counters only go up.
func (v *CounterVec) Add(d float64, values ...string) {
	if !(d >= 0) {
		return
	}
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	v.f.get(values).value += d
}

// GaugeVec is a gauge family. Label values are passed positionally.
type GaugeVec struct{ f *family }

// Gauge registers a gauge family; see Registry.register for what panics.
func (r *Registry) Gauge(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{r.register(&family{name: name, help: help, kind: kindGauge, labels: labels})}
}

// Set sets the series with the given label values to x.
func (v *GaugeVec) Set(x float64, values ...string) {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	v.f.get(values).value = x
}

// Add adds d (possibly negative) to the series with the given label values.
func (v *GaugeVec) Add(d float64, values ...string) {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	v.f.get(values).value += d
}

// Reset removes every series (an unlabelled gauge goes back to 0).
func (v *GaugeVec) Reset() { v.f.reset() }

// HistogramVec is a histogram family with fixed upper bounds; +Inf is implicit.
type HistogramVec struct{ f *family }

// Histogram registers a histogram family with the given bucket upper bounds, which must be
// finite and strictly increasing; see Registry.register for what else panics.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	b := append([]float64(nil), buckets...)
	return &HistogramVec{r.register(&family{name: name, help: help, kind: kindHistogram, labels: labels, buckets: b})}
}

// Observe records x in the series with the given label values: every bucket whose upper bound
// is ≥ x counts it (buckets are cumulative), and sum and count grow. NaN is ignored.
func (v *HistogramVec) Observe(x float64, values ...string) {
	if x != x {
		return
	}
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	s := v.f.get(values)
	for i := sort.SearchFloat64s(v.f.buckets, x); i < len(s.counts); i++ {
		s.counts[i]++
	}
	s.count++
	s.sum += x
}

// Reset removes every series.
func (v *HistogramVec) Reset() { v.f.reset() }

// set replaces the series with the given label values by a histogram counted elsewhere:
// cumulative holds one count per bucket bound, then the total (the +Inf bucket); sum is the
// sum of the observations. It panics when cumulative does not have one count per bound plus
// the total.
func (v *HistogramVec) set(cumulative []int64, sum float64, values ...string) {
	if len(cumulative) != len(v.f.buckets)+1 {
		panic(fmt.Sprintf("metrics: %s has %d buckets, got %d counts", v.f.name, len(v.f.buckets)+1, len(cumulative)))
	}
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	s := v.f.get(values)
	for i := range s.counts {
		s.counts[i] = uint64(cumulative[i])
	}
	s.count = uint64(cumulative[len(v.f.buckets)])
	s.sum = sum
}
