// Package gc tunes the garbage collector of a runsdesk process that serves or executes runs.
package gc

import "runtime/debug"

// The garbage collector settings of a runsdesk process that serves or executes runs (serve,
// worker): collect when the heap has grown to five times what was live after the last
// collection (Go's default is twice), within a soft limit of 128 MiB. A desk's live heap is
// small (about 10 MiB) while every page view and decision allocates a few hundred KiB, so with
// Go's default the collector ran hundreds of times a second and cost about a third of the web
// process's CPU under load; with these the inbox serves ~1.5× the pages per second and peaks
// at ~50 MiB RSS (bench/README, sections 3 and 4).
const (
	DefaultPercent     = 400
	DefaultMemoryLimit = 128 << 20
)

// Tune applies DefaultPercent and DefaultMemoryLimit to this process, each unless getenv sets
// its Go variable (GOGC, GOMEMLIMIT), which Go applies itself and which wins.
func Tune(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
}
