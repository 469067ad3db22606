package main

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// deleteExpiredSessions is scs/mysqlstore's own cleanup statement. The store's cleanup
// goroutine is not used: its StopCleanup races with its start (the channel is made inside the
// goroutine) and it logs through the standard logger.
const deleteExpiredSessions = `DELETE FROM sessions WHERE expiry < UTC_TIMESTAMP(6)`

// sessionJanitor deletes expired sessions every interval until stopped.
type sessionJanitor struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startSessionJanitor starts the janitor on pool.
func startSessionJanitor(pool *sql.DB, interval time.Duration, log *slog.Logger) *sessionJanitor {
	ctx, cancel := context.WithCancel(context.Background())
	j := &sessionJanitor{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := pool.ExecContext(ctx, deleteExpiredSessions); err != nil && ctx.Err() == nil {
					log.Warn("deleting expired sessions failed", "err", err)
				}
			}
		}
	}()
	return j
}

// stop ends the janitor and waits for it.
func (j *sessionJanitor) stop() {
	j.cancel()
	<-j.done
}
