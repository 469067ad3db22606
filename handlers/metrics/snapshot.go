package metrics

import (
	"context"
	"sync"
	"time"
)

// snapshot is what one refresh read from the Source: the values of the scrape-time families
// as of at.
type snapshot struct {
	at      time.Time
	runs    map[string]int
	waiting ageHistogram
	leased  int
}

// ageHistogram is a waiting-age histogram: cumulative[i] runs waited at most bound i,
// cumulative[len(bounds)] is every waiting run, sum their ages in seconds.
type ageHistogram struct {
	cumulative []int64
	sum        int64
}

// snapshots keeps the latest good snapshot and refreshes it at most once per interval,
// whatever the number of scrapes: one refresh at a time, which every scrape arriving meanwhile
// waits for instead of starting its own. A failed refresh keeps the previous snapshot.
type snapshots struct {
	read     func(ctx context.Context) (*snapshot, error)
	now      func() time.Time
	interval time.Duration
	timeout  time.Duration

	mu      sync.Mutex
	cur     *snapshot
	tried   time.Time
	failed  bool
	pending chan struct{}
}

// get returns the snapshot to serve (nil before the first good refresh) and whether the last
// finished refresh failed. When no refresh was started within the interval, it starts one,
// detached from ctx so that a scrape giving up does not cancel what others wait for, and
// bounded by the timeout; it then waits for the running refresh until ctx ends, and returns
// the previous snapshot if ctx ends first.
func (s *snapshots) get(ctx context.Context) (*snapshot, bool) {
	s.mu.Lock()
	if s.pending == nil && (s.tried.IsZero() || s.now().Sub(s.tried) >= s.interval) {
		s.tried = s.now()
		s.pending = make(chan struct{})
		go s.refresh(context.WithoutCancel(ctx), s.pending)
	}
	wait := s.pending
	s.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.failed
}

// refresh reads a snapshot, keeps it when the read succeeded, and closes done.
func (s *snapshots) refresh(ctx context.Context, done chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	snap, err := s.read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.cur = snap
	}
	s.failed = err != nil
	s.pending = nil
	close(done)
}
