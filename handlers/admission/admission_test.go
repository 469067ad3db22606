package admission

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// waitFor polls until cond holds; the test's own deadline bounds it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

func TestGateGivesSlotsInArrivalOrder(t *testing.T) {
	g := New(1)
	release, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	order := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := g.Enter(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			r()
		}()
		waitFor(t, func() bool { return g.Waiting() == i+1 })
	}
	release()
	wg.Wait()
	close(order)
	want := 0
	for got := range order {
		if got != want {
			t.Fatalf("waiter %d got its slot in turn %d", got, want)
		}
		want++
	}
}

func TestGateBoundsRequestsInFlight(t *testing.T) {
	const slots, requests = 3, 64
	g := New(slots)
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	for range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := g.Enter(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			inFlight.Add(-1)
		}()
	}
	wg.Wait()
	if most.Load() > slots {
		t.Fatalf("%d requests held a slot at once; the gate has %d", most.Load(), slots)
	}
	if g.free != slots || g.Waiting() != 0 {
		t.Fatalf("after every request: %d free slots, %d waiting; want %d and 0", g.free, g.Waiting(), slots)
	}
}

func TestGateWaiterWhoseContextEndsHoldsNoSlot(t *testing.T) {
	g := New(1)
	release, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Enter(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter with a slot taken and an ended deadline = %v, want context.DeadlineExceeded", err)
	}
	if g.Waiting() != 0 {
		t.Fatalf("a waiter that gave up is still queued (%d waiting)", g.Waiting())
	}
	release()
	next, err := g.Enter(context.Background())
	if err != nil {
		t.Fatalf("the slot was not given back: %v", err)
	}
	next()
}

func TestGateCancelRacingReleaseLosesNoSlot(t *testing.T) {
	g := New(1)
	for range 500 {
		release, err := g.Enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if r, err := g.Enter(ctx); err == nil {
				r()
			}
		}()
		waitFor(t, func() bool { return g.Waiting() == 1 })
		go cancel()
		release()
		<-done
		if g.free != 1 || g.Waiting() != 0 {
			t.Fatalf("after a cancel racing a release: %d free, %d waiting; want 1 and 0", g.free, g.Waiting())
		}
	}
}

func TestMiddlewareAnswersBusyWhenTheDeadlinePassesInTheQueue(t *testing.T) {
	g := New(1)
	busy := echo.NewHTTPError(http.StatusServiceUnavailable, "busy")
	e := echo.New()
	ran := 0
	e.GET("/", func(c echo.Context) error { ran++; return c.NoContent(http.StatusNoContent) },
		g.Middleware(func(err error) error {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("busy got %v, want the context's error", err)
			}
			return busy
		}))
	serve := func(ctx context.Context) int {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
		return rec.Code
	}
	if code := serve(context.Background()); code != http.StatusNoContent || ran != 1 {
		t.Fatalf("with a free slot: status %d, handler ran %d times; want 204 and 1", code, ran)
	}
	release, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if code := serve(ctx); code != http.StatusServiceUnavailable || ran != 1 {
		t.Fatalf("with every slot taken past the deadline: status %d, handler ran %d times; want 503 and still 1", code, ran)
	}
}

func TestNilGateAdmitsEveryRequest(t *testing.T) {
	var g *Gate
	called := false
	h := g.Middleware(func(error) error { t.Fatal("busy called"); return nil })(func(echo.Context) error { called = true; return nil })
	if err := h(echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder())); err != nil || !called {
		t.Fatalf("nil gate: err %v, called %v", err, called)
	}
}

func TestNewDefaultsToPerCPUSlots(t *testing.T) {
	if got := New(0).free; got != Default() || got < PerCPU || Slots(0) != got || Slots(-1) != got {
		t.Fatalf("New(0) has %d slots, Slots(0) %d; want Default() = %d", got, Slots(0), Default())
	}
	if got := New(3).free; got != 3 || Slots(3) != 3 {
		t.Fatalf("New(3) has %d slots, Slots(3) %d; want 3", got, Slots(3))
	}
}
