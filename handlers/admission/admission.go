// Package admission bounds how many requests build their responses at the same time. A
// request past the bound waits its turn in arrival order instead of sharing the CPU with every
// other request in flight: under load each request then takes about as long as the queue
// ahead of it, rather than an unpredictable share of it, and fewer half-built responses are
// held in memory at once.
package admission

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/labstack/echo/v4"
)

// PerCPU is the default number of slots per CPU the Go scheduler may use (GOMAXPROCS): enough
// that a slot waiting on the database does not leave a CPU idle.
const PerCPU = 4

// Default is the number of slots a Gate gets when none is configured: PerCPU × GOMAXPROCS.
func Default() int {
	return PerCPU * runtime.GOMAXPROCS(0)
}

// Gate hands out a fixed number of slots, in the order they are asked for. It is safe for
// concurrent use. Build it with New.
type Gate struct {
	mu      sync.Mutex
	free    int
	waiting []chan struct{}
}

// Slots is the number of slots New(n) gives: n, or Default() when n ≤ 0.
func Slots(n int) int {
	if n <= 0 {
		return Default()
	}
	return n
}

// New returns a Gate with Slots(n) slots.
func New(n int) *Gate {
	return &Gate{free: Slots(n)}
}

// Enter takes a slot, waiting behind those who asked earlier until one is free or ctx ends.
// It returns the function that gives the slot back (call it exactly once), or ctx's error
// when ctx ended first; a request that gave up holds no slot.
func (g *Gate) Enter(ctx context.Context) (release func(), err error) {
	g.mu.Lock()
	if g.free > 0 && len(g.waiting) == 0 {
		g.free--
		g.mu.Unlock()
		return g.release, nil
	}
	turn := make(chan struct{})
	g.waiting = append(g.waiting, turn)
	g.mu.Unlock()
	select {
	case <-turn:
		return g.release, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	i := slices.Index(g.waiting, turn)
	if i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
	}
	g.mu.Unlock()
	if i < 0 {
		g.release()
	}
	return nil, ctx.Err()
}

// release gives a slot to the longest-waiting request, or back to the pool when none waits.
func (g *Gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		g.free++
		return
	}
	turn := g.waiting[0]
	g.waiting = slices.Delete(g.waiting, 0, 1)
	close(turn)
}

// Waiting is the number of requests waiting for a slot.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// Middleware runs the rest of the chain inside a slot of g. When the request's context ends
// before a slot is free, the chain does not run and the middleware returns busy(err), err
// being the context's error. A nil Gate admits every request at once.
func (g *Gate) Middleware(busy func(error) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if g == nil {
			return next
		}
		return func(c echo.Context) error {
			release, err := g.Enter(c.Request().Context())
			if err != nil {
				return busy(err)
			}
			defer release()
			return next(c)
		}
	}
}
