package waiters

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/internal/testdb"
	"runsdesk/runtime"
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

// countedDesk is the store as a hall's DeskSource, counting its reads.
type countedDesk struct {
	DeskSource
	reads atomic.Int64
}

func (d *countedDesk) DeskCursor(ctx context.Context) (int64, error) {
	d.reads.Add(1)
	return d.DeskSource.DeskCursor(ctx)
}

func (d *countedDesk) RunChanges(ctx context.Context, after int64, limit int) ([]runtime.RunChange, error) {
	d.reads.Add(1)
	return d.DeskSource.RunChanges(ctx, after, limit)
}

// nudged is a hall on a real database whose periodic poll never comes in a test (an hour
// apart), its counted sources, and run nudgedRun in the database.
type nudged struct {
	h    *Hall
	src  *countedSource
	desk *countedDesk
	pool *sql.DB
	t    *testing.T
}

func newNudged(t *testing.T) *nudged {
	pool, _ := testdb.New(t)
	if _, err := pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request)
		VALUES (?, 'running', '', '')`, nudgedRun); err != nil {
		t.Fatal(err)
	}
	store := db.New(pool)
	n := &nudged{src: &countedSource{Source: store, read: make(chan struct{})}, desk: &countedDesk{DeskSource: store}, pool: pool, t: t}
	n.h = New(Config{Source: n.src, Desk: n.desk, Interval: time.Hour})
	t.Cleanup(n.h.Close)
	return n
}

// enter is a waiter watching key, leaving when the test ends.
func (n *nudged) enter(key Key) *Waiter {
	w, err := n.h.Enter(key)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(w.Leave)
	return w
}

// set changes run nudgedRun's status from outside the hall.
func (n *nudged) set(status string) {
	if _, err := n.pool.Exec(`UPDATE tx_nrllm_agentrun SET status = ? WHERE uuid = ?`, status, nudgedRun); err != nil {
		n.t.Error(err)
	}
}

// nudgedHall is newNudged's hall with a waiter on run nudgedRun.
func nudgedHall(t *testing.T) (*Hall, *Waiter, *countedSource, func(status string)) {
	n := newNudged(t)
	return n.h, n.enter(Key{Kind: KindRun, ID: nudgedRun}), n.src, n.set
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
	h.Nudge()
	if !woken(w, time.Second) {
		t.Fatal("not woken by the first nudged poll (its baseline)")
	}
	time.Sleep(4 * nudgeGap)
	before := src.polls.Load()
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
	for deadline := time.Now().Add(time.Second); src.polls.Load() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the burst caused no poll")
		}
	}
	time.Sleep(4 * nudgeGap)
	polls := src.polls.Load() - before
	if limit := 2 + int64(burst/nudgeGap); polls < 1 || polls > limit {
		t.Errorf("3,200 nudges in %v caused %d polls, want 1 to %d", burst, polls, limit)
	}
	time.Sleep(4 * nudgeGap)
	if after := src.polls.Load() - before; after != polls {
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

// TestNudgeReadsTheDeskForStreams: a nudged poll leaves the desk's feed alone while no
// stream follows it (the periodic poll reads it), and reads it while one does: the stream is
// woken by the run's change within milliseconds.
func TestNudgeReadsTheDeskForStreams(t *testing.T) {
	n := newNudged(t)
	h := n.h
	h.Nudge()
	time.Sleep(4 * nudgeGap)
	if reads := n.desk.reads.Load(); reads != 0 {
		t.Fatalf("a nudge with no stream read the desk %d times", reads)
	}
	stream := n.enter(Key{Kind: KindDesk})
	h.Nudge()
	if !woken(stream, time.Second) {
		t.Fatal("the stream was not woken by the nudged poll (its baseline)")
	}
	n.set("completed")
	h.Nudge()
	if !woken(stream, time.Second) {
		t.Fatal("the stream was not woken by the run's change")
	}
	if batches, _, ok := h.Since(-1); !ok || len(batches) != 1 || batches[0].Runs[0].Run.UUID != nudgedRun {
		t.Errorf("the desk's batches after the change: %+v (ok %v), want the run's", batches, ok)
	}
}
