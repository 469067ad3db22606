package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"runsdesk/handlers"
)

func TestSessionJanitorDeletesOnlyExpiredSessions(t *testing.T) {
	pool := migratedDB(t)
	ctx := context.Background()
	for _, row := range []struct {
		token string
		ttl   string
	}{{"expiredexpiredexpiredexpiredexpiredexpired", "- INTERVAL 1 MINUTE"}, {"livelivelivelivelivelivelivelivelivelivel", "+ INTERVAL 1 HOUR"}} {
		if _, err := pool.ExecContext(ctx, `INSERT INTO sessions (token, data, expiry) VALUES (?, 'x', UTC_TIMESTAMP(6) `+row.ttl+`)`, row.token); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range []struct {
		id  string
		ttl string
	}{{"expired", "- 60"}, {"live", "+ 3600"}} {
		if _, err := pool.ExecContext(ctx, `INSERT INTO tx_runsdesk_session (session_id, be_user, expires_at)
			VALUES (?, 1, UNIX_TIMESTAMP() `+row.ttl+`)`, row.id); err != nil {
			t.Fatal(err)
		}
	}
	j := startSessionJanitor(pool, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	deadline := time.Now().Add(30 * time.Second)
	var n, indexed int
	for time.Now().Before(deadline) {
		if err := pool.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM tx_runsdesk_session)`).Scan(&n, &indexed); err != nil {
			t.Fatal(err)
		}
		if n == 1 && indexed == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	j.stop()
	var token, id string
	if err := pool.QueryRowContext(ctx, `SELECT token FROM sessions`).Scan(&token); err != nil || n != 1 || token[:4] != "live" {
		t.Errorf("%d sessions left, %q, %v", n, token, err)
	}
	if err := pool.QueryRowContext(ctx, `SELECT session_id FROM tx_runsdesk_session`).Scan(&id); err != nil || indexed != 1 || id != "live" {
		t.Errorf("%d session index rows left, %q, %v", indexed, id, err)
	}
}

// TestSessionManagerTakesTheServeLimits: --session-idle and --session-max become the session
// manager's idle timeout and lifetime; unset, the desk's defaults apply.
func TestSessionManagerTakesTheServeLimits(t *testing.T) {
	for _, c := range []struct {
		idle, max, wantIdle, wantMax time.Duration
	}{
		{0, 0, handlers.DefaultIdleTimeout, handlers.DefaultLifetime},
		{5 * time.Minute, 2 * time.Hour, 5 * time.Minute, 2 * time.Hour},
	} {
		sm := sessionManager(Config{SessionIdle: c.idle, SessionMax: c.max})
		if sm.IdleTimeout != c.wantIdle || sm.Lifetime != c.wantMax {
			t.Errorf("limits %s/%s: manager has %s/%s, want %s/%s", c.idle, c.max, sm.IdleTimeout, sm.Lifetime, c.wantIdle, c.wantMax)
		}
	}
}
