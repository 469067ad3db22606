package engine

import (
	"testing"
	"time"

	"runsdesk/runtime"
)

// TestCountCacheStaysBounded: however many distinct filters are counted, at most
// countsRemembered are held, stale ones dropped first.
func TestCountCacheStaysBounded(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	now := at
	c := newCountCache(func() time.Time { return now })
	c.Put(runtime.WaitingQuery{Tool: "old"}, runtime.WaitingCounts{Approval: 1})
	now = at.Add(displayFresh)
	for i := range 3 * countsRemembered {
		c.Put(runtime.WaitingQuery{ConfigurationUID: int64(i + 1)}, runtime.WaitingCounts{Input: i})
		if c.Len() > countsRemembered {
			t.Fatalf("%d entries held after %d puts", c.Len(), i+1)
		}
		if i == countsRemembered-1 {
			for j := range countsRemembered {
				if _, ok := c.Get(runtime.WaitingQuery{ConfigurationUID: int64(j + 1)}); !ok || c.Len() != countsRemembered {
					t.Fatal("a stale entry survived a full cache")
				}
			}
		}
	}
	last := runtime.WaitingQuery{ConfigurationUID: 3 * countsRemembered}
	if got, ok := c.Get(last); !ok || got.Input != 3*countsRemembered-1 {
		t.Errorf("the latest entry reads %+v, %v", got, ok)
	}
}
