package runtime

import (
	"testing"
	"time"
)

// TestCountCacheStaysBounded: however many distinct filters are counted, at most
// countsRemembered are held, stale ones dropped first.
func TestCountCacheStaysBounded(t *testing.T) {
	var c countCache
	at := time.Unix(1_800_000_000, 0)
	c.put(WaitingQuery{Tool: "old"}, WaitingCounts{Approval: 1}, at)
	later := at.Add(displayFresh)
	for i := range 3 * countsRemembered {
		c.put(WaitingQuery{ConfigurationUID: int64(i + 1)}, WaitingCounts{Input: i}, later)
		if len(c.entries) > countsRemembered {
			t.Fatalf("%d entries held after %d puts", len(c.entries), i+1)
		}
		if i == countsRemembered-1 {
			if _, ok := c.entries[WaitingQuery{Tool: "old"}]; ok {
				t.Fatal("a stale entry survived a full cache")
			}
		}
	}
	last := WaitingQuery{ConfigurationUID: 3 * countsRemembered}
	if got, ok := c.get(last, later); !ok || got.Input != 3*countsRemembered-1 {
		t.Errorf("the latest entry reads %+v, %v", got, ok)
	}
}
