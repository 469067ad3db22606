package main

import (
	"context"

	"runsdesk/runtime/engine"
)

// pool is a runtime's worker pool and reaper running in the background.
type pool struct {
	stop context.CancelFunc
	done chan struct{}
}

// startPool runs rt's worker pool and reaper until stopPool. It does not follow a caller's
// context, so shutdown can stop HTTP first and the workers after.
func startPool(rt *engine.Runtime) *pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pool{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = rt.Run(ctx)
	}()
	return p
}

// stopPool interrupts running segments (their runs go back to the queue) and waits for them.
func (p *pool) stopPool() {
	p.stop()
	<-p.done
}
