package runtime

import (
	"context"
	"time"

	"runsdesk/cache"
)

// countsRemembered is how many distinct queries' waiting counts are remembered at most.
const countsRemembered = 256

// Counts returns the number of waiting runs per kind under q's filters (Status and paging
// ignored), as counted at most displayFresh ago for the same filters: the inbox's tabs may lag
// a decision by that long, the list itself never does; callers asking while the same filters
// are counted share that count. Every actor who may read the inbox sees every waiting run, so
// the counts are shared between them; the access check comes first.
func (r *Runtime) Counts(ctx context.Context, actor Actor, q WaitingQuery) (WaitingCounts, error) {
	if !MayAct(actor, ActionRead, Run{}) {
		return WaitingCounts{}, newError(CodeRunAccessDenied, "", "you may not see the inbox")
	}
	key := countKey(q)
	c, err := r.counts.GetOrLoad(key, func() (WaitingCounts, error) { return r.store.CountWaiting(ctx, key) })
	if err != nil {
		return c, storeError("", err)
	}
	return c, nil
}

// countKey is q without what CountWaiting ignores (Status and paging).
func countKey(q WaitingQuery) WaitingQuery {
	q.Status, q.AfterSuspendedAt, q.AfterUID, q.Limit = "", 0, 0, 0
	return q
}

// newCountCache is the cache of Counts: at most countsRemembered filters, each for
// displayFresh on now's clock.
func newCountCache(now func() time.Time) *cache.Cache[WaitingQuery, WaitingCounts] {
	return cache.New[WaitingQuery, WaitingCounts](cache.Options{Max: countsRemembered, TTL: displayFresh, Now: now})
}
