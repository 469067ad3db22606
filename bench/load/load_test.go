package load

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunCountsCallsAndErrors(t *testing.T) {
	var calls atomic.Int64
	boom := errors.New("boom")
	r := Run(context.Background(), 4, 200*time.Millisecond, func(ctx context.Context, c int) error {
		if c < 0 || c >= 4 {
			t.Errorf("client index %d", c)
		}
		n := calls.Add(1)
		time.Sleep(time.Millisecond)
		if n%10 == 0 {
			return boom
		}
		return nil
	})
	if r.Requests == 0 || int64(r.Requests) > calls.Load() {
		t.Fatalf("requests %d, calls %d", r.Requests, calls.Load())
	}
	if r.Errors == 0 || !errors.Is(r.FirstError, boom) {
		t.Errorf("errors %d, first %v", r.Errors, r.FirstError)
	}
	if !(r.P50 <= r.P99 && r.P99 <= r.Max) || r.P50 <= 0 || r.PerSecond <= 0 {
		t.Errorf("summary out of order: %+v", r)
	}
}

func TestRunWithoutCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Run(ctx, 2, time.Second, func(context.Context, int) error { return nil })
	if r.Requests != 0 || r.P99 != 0 {
		t.Errorf("cancelled run: %+v", r)
	}
}

func TestRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	n, err := RSS(0)
	if err != nil || n <= 0 {
		t.Fatalf("RSS(0) = %d, %v", n, err)
	}
	if m, err := RSS(os.Getpid()); err != nil || m <= 0 {
		t.Fatalf("RSS(pid) = %d, %v", m, err)
	}
	s := SamplePeak(0, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if p := s.Stop(); p <= 0 {
		t.Errorf("peak %d", p)
	}
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS of a missing process: no error")
	}
}

func TestCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	before, err := CPU(0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after < before {
		t.Errorf("CPU went back from %s to %s", before, after)
	}
}

// fakeClock is one client's virtual time: sleeping jumps to the wake-up time, and the test's
// op advances it by the call's duration.
type fakeClock struct{ now time.Time }

func (f *fakeClock) Now() time.Time { return f.now }

func (f *fakeClock) SleepUntil(_ context.Context, t time.Time) {
	if t.After(f.now) {
		f.now = t
	}
}

func fakeClocks(start time.Time, n int) ([]clock, []*fakeClock) {
	cs, fs := make([]clock, n), make([]*fakeClock, n)
	for i := range n {
		fs[i] = &fakeClock{now: start}
		cs[i] = fs[i]
	}
	return cs, fs
}

// TestPacedChargesScheduleDelay: one client due every 100 ms for 1 s whose calls take
// 250 ms falls behind; each latency runs from the call's due time (250, 400, 550, 700 ms),
// and the six calls due but not started by the end are missed.
func TestPacedChargesScheduleDelay(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	cs, fs := fakeClocks(start, 1)
	r := paced(context.Background(), start, cs, 100*time.Millisecond, time.Second, func(context.Context, int) error {
		fs[0].now = fs[0].now.Add(250 * time.Millisecond)
		return nil
	})
	ms := time.Millisecond
	if r.Requests != 4 || r.Missed != 6 || r.P50 != 550*ms || r.P99 != 700*ms || r.Max != 700*ms {
		t.Fatalf("paced behind schedule: %+v", r)
	}
	if r.Offered != 10 || r.Elapsed != time.Second || r.PerSecond != 4 {
		t.Errorf("rates: %+v", r)
	}
}

// TestPacedKeepsSchedule: fast calls are made exactly on schedule, offsets spread the
// clients over the interval, and each latency is the call's own duration.
func TestPacedKeepsSchedule(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	const clients = 4
	cs, fs := fakeClocks(start, clients)
	var mu sync.Mutex
	due := map[time.Duration]int{}
	boom := errors.New("boom")
	r := paced(context.Background(), start, cs, 100*time.Millisecond, 450*time.Millisecond, func(_ context.Context, c int) error {
		mu.Lock()
		due[fs[c].now.Sub(start)]++
		mu.Unlock()
		fs[c].now = fs[c].now.Add(time.Duration(c+1) * time.Millisecond)
		if c == 3 {
			return boom
		}
		return nil
	})
	// client c is due at c·25 ms + k·100 ms while < 450 ms: 5, 5, 4, 4 calls.
	if r.Requests != 18 || r.Missed != 0 || len(due) != 18 || r.Offered != 40 {
		t.Fatalf("schedule: %+v, due %v", r, due)
	}
	for at := range due {
		if at%(25*time.Millisecond) != 0 || at >= 450*time.Millisecond {
			t.Errorf("call at %s is off schedule", at)
		}
	}
	if r.Max != 4*time.Millisecond || r.Errors != 4 || !errors.Is(r.FirstError, boom) {
		t.Errorf("latencies and errors: %+v", r)
	}
}

// TestPacedWallClock: on the real clock, calls that sleep 30 ms on a 10 ms schedule are
// charged their queueing: the k-th call's latency is at least 30 ms + k·20 ms. Only lower
// bounds that follow from the sleeps are checked, never the machine's speed.
func TestPacedWallClock(t *testing.T) {
	r := Paced(context.Background(), 1, 10*time.Millisecond, 100*time.Millisecond, func(context.Context, int) error {
		time.Sleep(30 * time.Millisecond)
		return nil
	})
	if r.Requests < 1 || r.Requests > 4 || r.Requests+r.Missed != 10 {
		t.Fatalf("calls: %+v", r)
	}
	if want := 30*time.Millisecond + time.Duration(r.Requests-1)*20*time.Millisecond; r.Max < want {
		t.Errorf("max %s < %s: schedule delay not counted (%+v)", r.Max, want, r)
	}
}

func TestPacedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Paced(ctx, 3, time.Millisecond, time.Second, func(context.Context, int) error { return nil })
	if r.Requests != 0 || r.Missed != 3000 {
		t.Errorf("cancelled run: %+v", r)
	}
}
