package gc_test

import (
	"math"
	"runtime/debug"
	"testing"

	"runsdesk/cmd/web/gc"
)

// TestTune: without GOGC and GOMEMLIMIT the desk's settings apply; each variable that is set
// leaves its setting to Go.
func TestTune(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })

	gc.Tune(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != gc.DefaultPercent {
		t.Errorf("GC percent %d, want %d", got, gc.DefaultPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != gc.DefaultMemoryLimit {
		t.Errorf("memory limit %d, want %d", got, gc.DefaultMemoryLimit)
	}

	env := map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}
	gc.Tune(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: memory limit %d, want it left alone", got)
	}
}
