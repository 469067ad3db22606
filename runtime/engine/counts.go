package engine

import (
	"context"
	"time"

	"runsdesk/cache"
	"runsdesk/runtime"
)

// countsRemembered is how many distinct queries' waiting counts are remembered at most.
const countsRemembered = 256

// Counts returns the number of waiting runs per kind under q's filters (Status and paging
// ignored), as counted at most displayFresh ago for the same filters: the inbox's tabs may lag
// a decision by that long, the list itself never does; callers asking while the same filters
// are counted share that count. Every actor who may read the inbox sees every waiting run, so
// the counts are shared between them; the access check comes first.
func (r *Runtime) Counts(ctx context.Context, actor runtime.Actor, q runtime.WaitingQuery) (runtime.WaitingCounts, error) {
	if !runtime.MayAct(actor, runtime.ActionRead, runtime.Run{}) {
		return runtime.WaitingCounts{}, newError(runtime.CodeRunAccessDenied, "", "you may not see the inbox")
	}
	key := countKey(q)
	c, err := r.counts.GetOrLoad(key, func() (runtime.WaitingCounts, error) { return r.store.CountWaiting(ctx, key) })
	if err != nil {
		return c, storeError("", err)
	}
	return c, nil
}

// countKey is q without what CountWaiting ignores (Status and paging).
func countKey(q runtime.WaitingQuery) runtime.WaitingQuery {
	q.Status, q.AfterSuspendedAt, q.AfterExpiresAt, q.AfterUID, q.Limit = "", 0, 0, 0, 0
	return q
}

// newCountCache is the cache of Counts: at most countsRemembered filters, each for
// displayFresh on now's clock.
func newCountCache(now func() time.Time) *cache.Cache[runtime.WaitingQuery, runtime.WaitingCounts] {
	return cache.New[runtime.WaitingQuery, runtime.WaitingCounts](cache.Options{Max: countsRemembered, TTL: displayFresh, Now: now})
}
