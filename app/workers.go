package app

import (
	"context"

	"runsdesk/runtime/engine"
)

// Workers is a runtime's worker pool and reaper running in the background.
type Workers struct {
	stop context.CancelFunc
	done chan struct{}
}

// StartWorkers runs rt's worker pool and reaper until Stop. It does not follow a caller's
// context, so shutdown can stop HTTP first and the workers after.
func StartWorkers(rt *engine.Runtime) *Workers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Workers{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		_ = rt.Run(ctx)
	}()
	return w
}

// Stop interrupts running segments (their runs go back to the queue), waits for them and
// closes the runtime.
func (w *Workers) Stop() {
	w.stop()
	<-w.done
}
