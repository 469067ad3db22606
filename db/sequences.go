package db

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
type sequenceHints struct{ *memo[int64, int] }

func newSequenceHints() sequenceHints { return sequenceHints{newMemo[int64, int](maxSequenceHints)} }

// next returns and forgets run's hint; -1 when there is none.
func (h sequenceHints) next(run int64) int {
	if n, ok := h.take(run); ok {
		return n
	}
	return -1
}
