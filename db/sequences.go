package db

import "sync"

// maxSequenceHints bounds the runs a Store remembers a next event sequence for; past it the
// hints are dropped (the next appends read MAX(sequence) again).
const maxSequenceHints = 4096

// sequenceHints remembers, per run this Store is writing (claimed for a continuation or
// checkpointed, not yet paused or settled), the next event sequence after its own last
// committed append, so that run's next append needs no MAX(sequence) read.
//
// A hint is never ahead of the table: it comes from a committed append and events are never
// deleted. It may be behind when another writer appended meanwhile (a guarded write of a run
// whose lease this process lost fails first, so in practice only after a lease is lost); the
// insert then hits UNIQUE(run, sequence) and the transaction is retried without the hint.
type sequenceHints struct {
	mu   sync.Mutex
	next map[int64]int
}

// take returns and forgets run's hint; -1 when there is none.
func (h *sequenceHints) take(run int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	next, ok := h.next[run]
	if !ok {
		return -1
	}
	delete(h.next, run)
	return next
}

// put remembers next as run's next event sequence.
func (h *sequenceHints) put(run int64, next int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next == nil || len(h.next) >= maxSequenceHints {
		h.next = make(map[int64]int)
	}
	h.next[run] = next
}

// forget drops run's hint.
func (h *sequenceHints) forget(run int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.next, run)
}
