// Package engine is the agent runtime that acts on runs, in the vocabulary of package
// runtime: the commands (Start, Approve, SubmitInput, Cancel) with the one decision pipeline
// every decision kind goes through (decision*.go); segments, which drive the tool loop of a
// leased run and settle, suspend or hand it back (segment, loop, resume, heartbeat); the
// worker pool and the reaper (worker, reaper); and the read side that builds the read models
// pages show (read_models, counts, catalog_cache, pause_memo). Only the wiring constructs a
// Runtime (New); handlers call it through their own interfaces.
package engine
