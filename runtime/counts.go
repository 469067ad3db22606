package runtime

import (
	"context"
	"sync"
	"time"
)

// countsRemembered is how many distinct queries' waiting counts are remembered at most.
const countsRemembered = 256

// Counts returns the number of waiting runs per kind under q's filters (Status and paging
// ignored), as counted at most displayFresh ago for the same filters: the inbox's tabs may lag
// a decision by that long, the list itself never does. Every actor who may read the inbox
// sees every waiting run, so the counts are shared between them; the access check comes
// first.
func (r *Runtime) Counts(ctx context.Context, actor Actor, q WaitingQuery) (WaitingCounts, error) {
	if !MayAct(actor, ActionRead, Run{}) {
		return WaitingCounts{}, newError(CodeRunAccessDenied, "", "you may not see the inbox")
	}
	key := countKey(q)
	now := r.now()
	if c, ok := r.counts.get(key, now); ok {
		return c, nil
	}
	c, err := r.store.CountWaiting(ctx, key)
	if err != nil {
		return c, storeError("", err)
	}
	r.counts.put(key, c, now)
	return c, nil
}

// countKey is q without what CountWaiting ignores (Status and paging).
func countKey(q WaitingQuery) WaitingQuery {
	q.Status, q.AfterSuspendedAt, q.AfterUID, q.Limit = "", 0, 0, 0
	return q
}

// countCache remembers recent waiting counts per query (see Counts).
type countCache struct {
	mu      sync.Mutex
	entries map[WaitingQuery]countEntry
}

type countEntry struct {
	counts WaitingCounts
	at     time.Time
}

// get returns the counts of q if they were put less than displayFresh before now.
func (c *countCache) get(q WaitingQuery, now time.Time) (WaitingCounts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[q]
	if !ok || !fresh(e.at, now) {
		return WaitingCounts{}, false
	}
	return e.counts, true
}

// put remembers the counts of q, counted at now, dropping stale entries when countsRemembered
// are held (and all of them when none is stale).
func (c *countCache) put(q WaitingQuery, counts WaitingCounts, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[WaitingQuery]countEntry{}
	}
	if len(c.entries) >= countsRemembered {
		for k, e := range c.entries {
			if !fresh(e.at, now) {
				delete(c.entries, k)
			}
		}
	}
	if len(c.entries) >= countsRemembered {
		clear(c.entries)
	}
	c.entries[q] = countEntry{counts: counts, at: now}
}
