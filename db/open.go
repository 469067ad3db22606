package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Pool settings of Open. ConnMaxLifetime stays far below MySQL's default wait_timeout (8 h)
// and below the idle timeouts of common proxies, so the pool never hands out a connection the
// server has already dropped.
const (
	maxOpenConns    = 32
	maxIdleConns    = 16
	connMaxLifetime = 5 * time.Minute
	connMaxIdleTime = time.Minute
	pingTimeout     = 5 * time.Second
)

// Open returns an application connection pool for dsn. It always sets parseTime=true, adds
// time_zone='+00:00' (UTC) when the DSN does not set a time_zone, always turns multiStatements off
// (only Migrate uses them), always interpolates `?` arguments in the driver (one round trip
// per statement instead of prepare, execute and close; the driver refuses the multi-byte
// character sets where client-side escaping would be unsafe), sets pool limits and a connection lifetime below wait_timeout, and
// pings the server under a deadline of at most 5 s. A failed ping closes the pool and returns
// the error.
func Open(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("db: open: parse dsn: %w", err)
	}
	cfg.ParseTime = true
	if cfg.Loc == nil {
		cfg.Loc = time.UTC
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["time_zone"]; !ok {
		cfg.Params["time_zone"] = "'+00:00'"
	}
	cfg.MultiStatements = false
	cfg.InterpolateParams = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("db: open: %w", err)
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(maxOpenConns)
	pool.SetMaxIdleConns(maxIdleConns)
	pool.SetConnMaxLifetime(connMaxLifetime)
	pool.SetConnMaxIdleTime(connMaxIdleTime)

	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := pool.PingContext(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("db: open: ping %s: %w", cfg.Addr, err)
	}
	return pool, nil
}
