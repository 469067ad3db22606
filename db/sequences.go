package db

import "runsdesk/cache"

// maxSequenceHints bounds the runs a Store remembers a next event sequence for; past it the
// least recently used hints are dropped (their runs' next appends read MAX(sequence) again).
const maxSequenceHints = 4096

// sequenceHints remembers, per run this Store is writing (claimed for a continuation or
// checkpointed, not yet paused or settled), the next event sequence after its own last
// committed append, so that run's next append needs no MAX(sequence) read.
//
// A hint is never ahead of the table: it comes from a committed append and events are never
// deleted. It may be behind when another writer appended meanwhile (a guarded write of a run
// whose lease this process lost fails first, so in practice only after a lease is lost); the
// insert then hits UNIQUE(run, sequence) and the transaction is retried without the hint.
type sequenceHints struct{ hints *cache.Cache[int64, int] }

func newSequenceHints() sequenceHints {
	return sequenceHints{cache.New[int64, int](cache.Options{Max: maxSequenceHints})}
}

// next returns and forgets run's hint; -1 when there is none.
func (h sequenceHints) next(run int64) int {
	if n, ok := h.hints.Take(run); ok {
		return n
	}
	return -1
}

// peek returns run's hint without forgetting it; -1 when there is none.
func (h sequenceHints) peek(run int64) int {
	if n, ok := h.hints.Get(run); ok {
		return n
	}
	return -1
}

// put keeps n as run's next event sequence.
func (h sequenceHints) put(run int64, n int) { h.hints.Put(run, n) }

// forget drops run's hint.
func (h sequenceHints) forget(run int64) { h.hints.Delete(run) }

// maxPauseHints bounds the waiting runs a Store remembers a pauseHint for.
const maxPauseHints = 4096

// pauseHint is what a decision's read of a waiting run brought for its claim: the next event
// sequence as the pause recorded it (-1: not known) and whether the pause may have drafts.
type pauseHint struct {
	next   int
	drafts bool
}

// pauseHints remembers, per waiting run FindByUUID or FindForDecision read, its pauseHint;
// the claim that follows takes it. Apart from the writers' sequenceHints, so reading pages
// never evicts a writer's hints.
type pauseHints struct {
	hints *cache.Cache[int64, pauseHint]
}

func newPauseHints() pauseHints {
	return pauseHints{cache.New[int64, pauseHint](cache.Options{Max: maxPauseHints})}
}

// take returns and forgets run's hint; without one, an unknown sequence and drafts possible.
func (h pauseHints) take(run int64) pauseHint {
	if p, ok := h.hints.Take(run); ok {
		return p
	}
	return pauseHint{next: -1, drafts: true}
}

// put keeps p as run's hint.
func (h pauseHints) put(run int64, p pauseHint) { h.hints.Put(run, p) }
