package load

import (
	"context"
	"errors"
	"os"
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
