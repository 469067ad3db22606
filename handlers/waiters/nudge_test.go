package waiters

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/internal/testdb"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const nudgedRun = "22222222-2222-4222-8222-222222222222"

// countedSource is the store as a hall's Source, counting its reads of run stamps (one per
// poll while a run is watched) and, while hold is set, keeping each poll after its read
// until hold is closed.
type countedSource struct {
	Source
	polls atomic.Int64
	read  chan struct{}
	hold  atomic.Pointer[chan struct{}]
}

func (s *countedSource) Stamps(ctx context.Context, kind string, ids []string) (map[string]string, error) {
	stamps, err := s.Source.Stamps(ctx, kind, ids)
	if kind == KindRun {
		s.polls.Add(1)
		if hold := s.hold.Load(); hold != nil {
			s.read <- struct{}{}
			<-*hold
		}
	}
	return stamps, err
}

// nudgedHall is a hall on a real database whose periodic poll never comes in a test (an hour
// apart), holding one waiter on run nudgedRun, and the pool and the counted source under it.
func nudgedHall(t *testing.T) (*Hall, *Waiter, *countedSource, func(status string)) {
	pool, _ := testdb.New(t)
	if _, err := pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request)
		VALUES (?, 'running', '', '')`, nudgedRun); err != nil {
		t.Fatal(err)
	}
	set := func(status string) {
		if _, err := pool.Exec(`UPDATE tx_nrllm_agentrun SET status = ? WHERE uuid = ?`, status, nudgedRun); err != nil {
			t.Error(err)
		}
	}
	src := &countedSource{Source: db.New(pool), read: make(chan struct{})}
	h := New(Config{Source: src, Interval: time.Hour})
	t.Cleanup(h.Close)
	w, err := h.Enter(Key{Kind: KindRun, ID: nudgedRun})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Leave)
	return h, w, src, set
}

// woken reports whether w is woken within d.
func woken(w *Waiter, d time.Duration) bool {
	select {
	case <-w.Wake():
		return true
	case <-time.After(d):
		return false
	}
}

// TestNudgeWakesAtOnce: with no periodic poll to come, a change followed by a Nudge wakes
// the waiter within milliseconds (the first poll baselines it, the next sees the change); a
// change without one wakes nobody.
func TestNudgeWakesAtOnce(t *testing.T) {
	h, w, _, set := nudgedHall(t)
	h.Nudge()
	if !woken(w, time.Second) {
		t.Fatal("not woken by the first nudged poll (its baseline)")
	}
	set("completed")
	if woken(w, 200*time.Millisecond) {
		t.Fatal("woken by a change no poll read")
	}
	h.Nudge()
	began := time.Now()
	if !woken(w, time.Second) {
		t.Fatal("not woken by the poll the nudge started")
	}
	if took := time.Since(began); took > 250*time.Millisecond {
		t.Errorf("woken %v after the nudge, want within milliseconds", took)
	}
}

// TestNudgeBurstCoalesces: 64 goroutines nudging 50 times each at once cause a bounded
// number of polls (one, then at most one per nudgeGap while the burst lasts, and one after
// it), and nothing more once they stop.
func TestNudgeBurstCoalesces(t *testing.T) {
	h, w, src, _ := nudgedHall(t)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 64 {
		wg.Go(func() {
			<-start
			for range 50 {
				h.Nudge()
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	burst := time.Since(began)
	if !woken(w, time.Second) {
		t.Fatal("the burst woke no poll")
	}
	time.Sleep(4 * nudgeGap)
	polls := src.polls.Load()
	if limit := 2 + int64(burst/nudgeGap); polls < 1 || polls > limit {
		t.Errorf("3,200 nudges in %v caused %d polls, want 1 to %d", burst, polls, limit)
	}
	time.Sleep(4 * nudgeGap)
	if after := src.polls.Load(); after != polls {
		t.Errorf("%d polls after the burst ended, want none", after-polls)
	}
}

// TestNudgeDuringAPollPollsOnceMore: nudges while a poll runs cause exactly one more poll
// after it, which sees a change the running one read too early to see.
func TestNudgeDuringAPollPollsOnceMore(t *testing.T) {
	h, w, src, set := nudgedHall(t)
	hold := make(chan struct{})
	src.hold.Store(&hold)
	h.Nudge()
	<-src.read
	src.hold.Store(nil)
	set("completed")
	for range 10 {
		h.Nudge()
	}
	close(hold)
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		if stamp, _ := h.Stamp(Key{Kind: KindRun, ID: nudgedRun}); strings.HasPrefix(stamp, "completed:") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the change during the first poll was not read: no poll after it")
		}
	}
	if !woken(w, time.Second) {
		t.Fatal("the waiter was not woken")
	}
	time.Sleep(4 * nudgeGap)
	if polls := src.polls.Load(); polls != 2 {
		t.Errorf("%d polls, want 2: the running one and one more for all the nudges during it", polls)
	}
}

// TestNudgeOfNilOrClosedHall: a nil hall ignores a nudge; a closed one neither blocks nor
// polls.
func TestNudgeOfNilOrClosedHall(t *testing.T) {
	var none *Hall
	none.Nudge()
	h, _, src, _ := nudgedHall(t)
	h.Close()
	for range 3 {
		h.Nudge()
	}
	time.Sleep(4 * nudgeGap)
	if polls := src.polls.Load(); polls != 0 {
		t.Errorf("a closed hall polled %d times", polls)
	}
}
