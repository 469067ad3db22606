package app

import (
	"context"
	"sync"

	"runsdesk/notify"
	"runsdesk/runtime/engine"
)

// Workers is a runtime's worker pool and reaper, the notification dispatcher and the
// periodic jobs (retention sweeper, audit chainer), running in the background.
type Workers struct {
	stop context.CancelFunc
	done sync.WaitGroup
}

// Job is a periodic job of a process (the retention sweeper, the audit chainer): Run works
// until its context ends.
type Job interface{ Run(ctx context.Context) }

// StartWorkers runs rt's worker pool and reaper, d (when not nil) and each job (none nil),
// until Stop. It does not follow a caller's context, so shutdown can stop HTTP first and the workers after.
func StartWorkers(rt *engine.Runtime, d *notify.Dispatcher, jobs ...Job) *Workers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Workers{stop: cancel}
	w.done.Go(func() { _ = rt.Run(ctx) })
	if d != nil {
		w.done.Go(func() { _ = d.Run(ctx) })
	}
	for _, j := range jobs {
		w.done.Go(func() { j.Run(ctx) })
	}
	return w
}

// Stop interrupts running segments (their runs go back to the queue) and deliveries (their
// claims lapse and another pass retries them), waits for them and closes the runtime.
func (w *Workers) Stop() {
	w.stop()
	w.done.Wait()
}
