package app

import (
	"context"
	"sync"

	"runsdesk/notify"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/retention"
)

// Workers is a runtime's worker pool and reaper, the notification dispatcher and the
// retention sweeper, running in the background.
type Workers struct {
	stop context.CancelFunc
	done sync.WaitGroup
}

// StartWorkers runs rt's worker pool and reaper, and d and s (each when not nil), until Stop.
// It does not follow a caller's context, so shutdown can stop HTTP first and the workers after.
func StartWorkers(rt *engine.Runtime, d *notify.Dispatcher, s *retention.Sweeper) *Workers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Workers{stop: cancel}
	w.done.Go(func() { _ = rt.Run(ctx) })
	if d != nil {
		w.done.Go(func() { _ = d.Run(ctx) })
	}
	if s != nil {
		w.done.Go(func() { s.Run(ctx) })
	}
	return w
}

// Stop interrupts running segments (their runs go back to the queue) and deliveries (their
// claims lapse and another pass retries them), waits for them and closes the runtime.
func (w *Workers) Stop() {
	w.stop()
	w.done.Wait()
}
