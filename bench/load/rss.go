package load

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RSS returns the resident set size of process pid (0: this process) in bytes, from
// /proc/<pid>/status (VmRSS).
func RSS(pid int) (int64, error) {
	path := "/proc/self/status"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("load: rss: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "VmRSS:") {
			continue
		}
		fields := strings.Fields(strings.TrimPrefix(line, "VmRSS:"))
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("load: rss: %w", err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("load: rss: no VmRSS in %s", path)
}

// PeakSampler records the largest RSS of a process seen every interval until Stop.
type PeakSampler struct {
	mu     sync.Mutex
	peak   int64
	cancel context.CancelFunc
	done   chan struct{}
}

// SamplePeak starts sampling pid's RSS (0: this process) every interval.
func SamplePeak(pid int, interval time.Duration) *PeakSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &PeakSampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if n, err := RSS(pid); err == nil {
				s.mu.Lock()
				s.peak = max(s.peak, n)
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak in bytes.
func (s *PeakSampler) Stop() int64 {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// MiB formats a byte count in MiB.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// CPUOrZero is CPU(pid), 0 when it cannot be read or pid is negative (no process): what a
// measurement reports for a process it cannot see.
func CPUOrZero(pid int) time.Duration {
	if pid < 0 {
		return 0
	}
	d, err := CPU(pid)
	if err != nil {
		return 0
	}
	return d
}

// CPU returns the user plus system CPU time process pid (0: this process) has used, from
// /proc/<pid>/stat, assuming the usual 100 clock ticks per second.
func CPU(pid int) (time.Duration, error) {
	path := "/proc/self/stat"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/stat", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("load: cpu: %w", err)
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("load: cpu: %s is not a stat line", path)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("load: cpu: %s is too short", path)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("load: cpu: %s: bad utime/stime", path)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// CPUOver is the CPU time process pid uses over the next d (0 when it cannot be read).
func CPUOver(pid int, d time.Duration) time.Duration {
	c0 := CPUOrZero(pid)
	time.Sleep(d)
	return CPUOrZero(pid) - c0
}

// PerSecond is cpu used over a span of over, per second of it.
func PerSecond(cpu, over time.Duration) time.Duration {
	return time.Duration(float64(cpu) / over.Seconds())
}
