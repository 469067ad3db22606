package engine

import (
	"testing"
	"time"
)

// TestRetryBackoff: 30 s·2ⁿ for a run requeued n times, capped at 600 s, whatever n.
func TestRetryBackoff(t *testing.T) {
	want := []time.Duration{30, 60, 120, 240, 480, 600, 600}
	for n, w := range want {
		if got := retryBackoff(n); got != w*time.Second {
			t.Errorf("retryBackoff(%d) = %s, want %s", n, got, w*time.Second)
		}
	}
	for _, n := range []int{40, 64, 1 << 30} {
		if got := retryBackoff(n); got != retryBackoffMax {
			t.Errorf("retryBackoff(%d) = %s, want the cap %s", n, got, retryBackoffMax)
		}
	}
}
