package app

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"time"

	"runsdesk/db"
)

// sessionJanitor deletes expired sessions, and the session index's expired rows, every
// interval until stopped. scs/mysqlstore's own
// cleanup goroutine is not used: its StopCleanup races with its start (the channel is made
// inside the goroutine) and it logs through the standard logger.
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
				if _, err := db.DeleteExpiredSessions(ctx, pool); err != nil && ctx.Err() == nil {
					log.Warn("deleting expired sessions failed", "err", err)
				}
				if _, err := db.DeleteExpiredSessionIndex(ctx, pool); err != nil && ctx.Err() == nil {
					log.Warn("deleting expired session index rows failed", "err", err)
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

// withSessionAccount lets each request's session read also read the session's user, for the
// request's account re-check (db.WithSessionAccount).
func withSessionAccount(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(db.WithSessionAccount(r.Context())))
	})
}
