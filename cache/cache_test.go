package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable clock for TTL tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_800_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestPutGetTakeDelete: a put value is got until it is taken or deleted; taking forgets it.
func TestPutGetTakeDelete(t *testing.T) {
	c := New[string, int](Options{Max: 4})
	if _, ok := c.Get("a"); ok {
		t.Fatal("an empty cache holds a")
	}
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("a", 3)
	if v, ok := c.Get("a"); !ok || v != 3 {
		t.Errorf("a = %d, %v; want the last put, 3", v, ok)
	}
	if n := c.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	if v, ok := c.Take("a"); !ok || v != 3 {
		t.Errorf("Take(a) = %d, %v", v, ok)
	}
	if v, ok := c.Take("a"); ok {
		t.Errorf("a taken twice: %d", v)
	}
	c.Delete("b")
	c.Delete("never")
	if _, ok := c.Get("b"); ok || c.Len() != 0 {
		t.Errorf("b survived Delete; Len = %d", c.Len())
	}
	c.Put("c", 4)
	if v, ok := c.Get("c"); !ok || v != 4 {
		t.Errorf("a put after deletes reads %d, %v", v, ok)
	}
}

// TestDropsTheLeastRecentlyUsed: a full cache drops the entry least recently put or got.
func TestDropsTheLeastRecentlyUsed(t *testing.T) {
	c := New[int, string](Options{Max: 3})
	for i := range 3 {
		c.Put(i, strconv.Itoa(i))
	}
	c.Get(0)
	c.Put(3, "3")
	if _, ok := c.Get(1); ok {
		t.Error("1, the least recently used, survived")
	}
	c.Get(0)
	c.Put(2, "two")
	c.Put(4, "4")
	for _, k := range []int{0, 2, 4} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%d was dropped; want 3 dropped (0 got and 2 put since)", k)
		}
	}
	if _, ok := c.Get(3); ok || c.Len() != 3 {
		t.Errorf("3 held %v, Len %d; want 3 dropped and 3 entries", ok, c.Len())
	}
	one := New[string, int](Options{Max: 1})
	one.Put("a", 1)
	one.Put("b", 2)
	if _, ok := one.Get("a"); ok {
		t.Error("a one-entry cache holds two")
	}
	if v, _ := one.Get("b"); v != 2 {
		t.Errorf("b = %d", v)
	}
}

// TestEntriesExpire: an entry is served for less than TTL after its put, and not when the
// clock went back before its put; without TTL entries never expire.
func TestEntriesExpire(t *testing.T) {
	clk := newClock()
	c := New[string, int](Options{Max: 4, TTL: 2 * time.Second, Now: clk.Now})
	c.Put("a", 1)
	clk.Advance(2*time.Second - 1)
	if _, ok := c.Get("a"); !ok {
		t.Error("a expired before its TTL")
	}
	clk.Advance(1)
	if _, ok := c.Get("a"); ok {
		t.Error("a served at its TTL")
	}
	if c.Len() != 0 {
		t.Errorf("an expired entry that was asked for is still held (Len %d)", c.Len())
	}
	c.Put("b", 2)
	clk.Advance(-time.Nanosecond)
	if _, ok := c.Take("b"); ok {
		t.Error("b served after the clock went back before its put")
	}

	forever := New[string, int](Options{Max: 4, Now: func() time.Time { t.Fatal("read the clock without a TTL"); return time.Time{} }})
	forever.Put("a", 1)
	if _, ok := forever.Get("a"); !ok {
		t.Error("an entry without TTL is not served")
	}
}

// TestGetOrLoad: a value is loaded once and then got; a failed load is not put, and the
// entry loaded is stamped when its load began.
func TestGetOrLoad(t *testing.T) {
	clk := newClock()
	c := New[string, int](Options{Max: 4, TTL: 2 * time.Second, Now: clk.Now})
	errDown := errors.New("down")
	var loads int
	load := func(v int, err error) func() (int, error) {
		return func() (int, error) {
			loads++
			clk.Advance(time.Second)
			return v, err
		}
	}
	if _, err := c.GetOrLoad("a", load(0, errDown)); !errors.Is(err, errDown) {
		t.Fatalf("a failed load returns %v", err)
	}
	if _, ok := c.Get("a"); ok || c.Len() != 0 {
		t.Fatal("a failed load was put")
	}
	if v, err := c.GetOrLoad("a", load(7, nil)); v != 7 || err != nil {
		t.Fatalf("GetOrLoad = %d, %v", v, err)
	}
	if v, err := c.GetOrLoad("a", load(8, nil)); v != 7 || err != nil || loads != 2 {
		t.Fatalf("GetOrLoad again = %d, %v after %d loads; want the loaded 7 after 2", v, err, loads)
	}
	clk.Advance(time.Second - 1)
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a expired before 2 s after its load began")
	}
	clk.Advance(1)
	if _, ok := c.Get("a"); ok {
		t.Fatal("a served 2 s after its load began (stamped when the load ended)")
	}
}

// TestConcurrentLoadsOfOneKeyShareOneLoad: many goroutines asking for a few keys at once
// load each key exactly once and all see the value loaded.
func TestConcurrentLoadsOfOneKeyShareOneLoad(t *testing.T) {
	const keys, perKey = 8, 32
	c := New[int, string](Options{Max: keys})
	var loads [keys]atomic.Int32
	release := make(chan struct{})
	var asking, done sync.WaitGroup
	asking.Add(keys * perKey)
	for i := range keys * perKey {
		done.Go(func() {
			k := i % keys
			asking.Done()
			v, err := c.GetOrLoad(k, func() (string, error) {
				loads[k].Add(1)
				<-release
				return "v" + strconv.Itoa(k), nil
			})
			if err != nil || v != "v"+strconv.Itoa(k) {
				t.Errorf("key %d: %q, %v", k, v, err)
			}
		})
	}
	asking.Wait()
	time.Sleep(20 * time.Millisecond)
	close(release)
	done.Wait()
	for k := range keys {
		if n := loads[k].Load(); n != 1 {
			t.Errorf("key %d loaded %d times", k, n)
		}
	}
}

// TestFailedLoadIsNotShared: who waits for a load that fails loads anew (one of them, shared
// by the others); the failing caller alone gets the error. A load that panics frees its
// waiters the same way.
func TestFailedLoadIsNotShared(t *testing.T) {
	for _, fail := range []string{"error", "panic"} {
		t.Run(fail, func(t *testing.T) {
			c := New[string, int](Options{Max: 2})
			errDown := errors.New("down")
			var loads atomic.Int32
			started, release := make(chan struct{}), make(chan struct{})
			leader := make(chan error, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						leader <- fmt.Errorf("panicked: %v", p)
					}
				}()
				_, err := c.GetOrLoad("k", func() (int, error) {
					loads.Add(1)
					close(started)
					<-release
					if fail == "panic" {
						panic("load failed")
					}
					return 0, errDown
				})
				leader <- err
			}()
			<-started
			const waiters = 8
			var wg sync.WaitGroup
			for range waiters {
				wg.Go(func() {
					v, err := c.GetOrLoad("k", func() (int, error) {
						loads.Add(1)
						time.Sleep(10 * time.Millisecond)
						return 5, nil
					})
					if v != 5 || err != nil {
						t.Errorf("a waiter got %d, %v; want its own load's 5", v, err)
					}
				})
			}
			time.Sleep(20 * time.Millisecond)
			close(release)
			wg.Wait()
			if err := <-leader; err == nil || (fail == "error" && !errors.Is(err, errDown)) {
				t.Errorf("the failing load's caller got %v", err)
			}
			if n := loads.Load(); n != 2 {
				t.Errorf("%d loads; want the failed one and one more shared by the %d waiters", n, waiters)
			}
		})
	}
}

// TestRaceManyKeys: goroutines putting, getting, taking and loading overlapping keys keep
// the bound (run with -race).
func TestRaceManyKeys(t *testing.T) {
	clk := newClock()
	c := New[int, int](Options{Max: 16, TTL: time.Second, Now: clk.Now})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				k := (g*7 + i) % 40
				switch i % 5 {
				case 0:
					c.Put(k, k)
				case 1:
					if v, ok := c.Get(k); ok && v != k {
						t.Errorf("key %d holds %d", k, v)
					}
				case 2:
					c.Take(k)
				case 3:
					if v, err := c.GetOrLoad(k, func() (int, error) { return k, nil }); err != nil || v != k {
						t.Errorf("key %d loads %d, %v", k, v, err)
					}
				case 4:
					clk.Advance(time.Millisecond)
				}
				if n := c.Len(); n > 16 {
					t.Errorf("%d entries held", n)
				}
			}
		})
	}
	wg.Wait()
}

// model is the reference a Cache is checked against: keys, least recently used first.
type model struct {
	max  int
	keys []byte
	vals map[byte]uint16
}

func (m *model) use(k byte) {
	m.keys = slices.DeleteFunc(m.keys, func(x byte) bool { return x == k })
	m.keys = append(m.keys, k)
}

func (m *model) get(k byte) (uint16, bool) {
	v, ok := m.vals[k]
	if ok {
		m.use(k)
	}
	return v, ok
}

func (m *model) put(k byte, v uint16) {
	if _, ok := m.vals[k]; !ok && len(m.keys) >= m.max {
		delete(m.vals, m.keys[0])
		m.keys = m.keys[1:]
	}
	m.vals[k] = v
	m.use(k)
}

func (m *model) take(k byte) (uint16, bool) {
	v, ok := m.vals[k]
	delete(m.vals, k)
	m.keys = slices.DeleteFunc(m.keys, func(x byte) bool { return x == k })
	return v, ok
}

// FuzzBoundAndOrder: under any sequence of puts, gets, takes and loads a cache holds at most
// Max entries and answers as a least-recently-used reference does.
func FuzzBoundAndOrder(f *testing.F) {
	f.Add(uint8(3), []byte{0, 1, 0, 2, 0, 3, 1, 1, 0, 4, 2, 2, 3, 5})
	f.Add(uint8(1), []byte{0, 1, 0, 2, 1, 1, 3, 2, 2, 2})
	f.Add(uint8(8), binary.BigEndian.AppendUint64(nil, 0x0102030405060708))
	f.Fuzz(func(t *testing.T, max uint8, ops []byte) {
		n := int(max%16) + 1
		c := New[byte, uint16](Options{Max: n})
		m := &model{max: n, vals: map[byte]uint16{}}
		for i := 0; i+1 < len(ops); i += 2 {
			op, k := ops[i]%4, ops[i+1]%32
			v := uint16(i)
			switch op {
			case 0:
				c.Put(k, v)
				m.put(k, v)
			case 1:
				got, ok := c.Get(k)
				want, wantOK := m.get(k)
				if got != want || ok != wantOK {
					t.Fatalf("op %d: Get(%d) = %d, %v; want %d, %v", i/2, k, got, ok, want, wantOK)
				}
			case 2:
				got, ok := c.Take(k)
				want, wantOK := m.take(k)
				if got != want || ok != wantOK {
					t.Fatalf("op %d: Take(%d) = %d, %v; want %d, %v", i/2, k, got, ok, want, wantOK)
				}
			case 3:
				got, _ := c.GetOrLoad(k, func() (uint16, error) { return v, nil })
				want, ok := m.get(k)
				if !ok {
					want = v
					m.put(k, v)
				}
				if got != want {
					t.Fatalf("op %d: GetOrLoad(%d) = %d; want %d", i/2, k, got, want)
				}
			}
			if c.Len() > n || c.Len() != len(m.keys) {
				t.Fatalf("op %d: %d entries held, bound %d, reference %d", i/2, c.Len(), n, len(m.keys))
			}
		}
	})
}

// TestNewRefusesNoRoom: a cache must have room for one entry.
func TestNewRefusesNoRoom(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with Max 0 did not panic")
		}
	}()
	New[int, int](Options{})
}

func BenchmarkGetHit(b *testing.B) {
	c := New[string, int](Options{Max: 512})
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = `{"messages":[],"pendingCalls":[{"id":"c` + strconv.Itoa(i) + `"}]}`
		c.Put(keys[i], i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := c.Get(keys[i%len(keys)]); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkGetHitTTL(b *testing.B) {
	at := time.Unix(1_800_000_000, 0)
	c := New[int64, int](Options{Max: 256, TTL: time.Second, Now: func() time.Time { return at }})
	c.Put(1, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(1); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkGetOrLoadHit(b *testing.B) {
	c := New[int64, int](Options{Max: 256})
	c.Put(1, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetOrLoad(1, func() (int, error) { return 0, errors.New("loaded") }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTakePut(b *testing.B) {
	c := New[int64, int](Options{Max: 4096})
	c.Put(1, 1)
	b.ReportAllocs()
	for b.Loop() {
		v, _ := c.Take(1)
		c.Put(1, v+1)
	}
}

func BenchmarkGetHitParallel(b *testing.B) {
	c := New[int64, int](Options{Max: 256})
	for i := range int64(64) {
		c.Put(i, int(i))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var i int64
		for pb.Next() {
			c.Get(i % 64)
			i++
		}
	})
}
