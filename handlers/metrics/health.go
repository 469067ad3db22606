package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Healthz answers 200 "ok" (text/plain) while the process serves HTTP. It checks nothing
// else, so an orchestrator restarts the process only when it is truly stuck.
func Healthz(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.String(http.StatusOK, "ok")
}

// ReadyConfig is what Readyz checks. Ping and Pending are required; cmd/web wires them as
// sqlDB.PingContext and func(ctx) (int, error) { return db.Pending(ctx, sqlDB) }.
type ReadyConfig struct {
	// Ping reports whether the database answers.
	Ping func(ctx context.Context) error
	// Pending returns how many migrations are not applied yet.
	Pending func(ctx context.Context) (int, error)
	// Timeout bounds both checks together (default 2 s).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Readyz returns the /readyz handler: 200 "ready" when the database answers within the
// timeout and no migration is pending; otherwise 503 with a short plain-text reason
// ("database unreachable", "migration state unknown", "migrations pending"), never the
// underlying error, which is logged.
func Readyz(cfg ReadyConfig) echo.HandlerFunc {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		ctx, cancel := context.WithTimeout(c.Request().Context(), cfg.Timeout)
		defer cancel()
		if err := cfg.Ping(ctx); err != nil {
			cfg.Logger.Warn("not ready: database unreachable", "err", err)
			return c.String(http.StatusServiceUnavailable, "database unreachable")
		}
		n, err := cfg.Pending(ctx)
		if err != nil {
			cfg.Logger.Warn("not ready: migration state unknown", "err", err)
			return c.String(http.StatusServiceUnavailable, "migration state unknown")
		}
		if n > 0 {
			cfg.Logger.Warn("not ready: migrations pending", "pending", n)
			return c.String(http.StatusServiceUnavailable, "migrations pending")
		}
		return c.String(http.StatusOK, "ready")
	}
}
