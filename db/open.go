package db

import (
	"context"
	"database/sql"
	"errors"
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
	// maxOpenBatchConns and maxIdleBatchConns bound OpenBatches' pool: a batch holds its
	// connection for one round trip, so half the application pool's serve it, all kept idle
	// between batches (a new connection costs more than the batch).
	maxOpenBatchConns = maxOpenConns / 2
	maxIdleBatchConns = maxOpenBatchConns
)

// Open returns an application connection pool for dsn. It always sets parseTime=true, adds
// time_zone='+00:00' (UTC) when the DSN does not set a time_zone, always turns multiStatements off
// (only OpenBatches' pool and Migrate's use them), always interpolates `?` arguments in the driver (one round trip
// per statement instead of prepare, execute and close; the driver refuses the multi-byte
// character sets where client-side escaping would be unsafe), sets pool limits and a connection lifetime below wait_timeout, and
// pings the server under a deadline of at most 5 s. On a Galera node, unless the DSN sets
// wsrep_sync_wait, it sets wsrep_sync_wait = 1 on every session (causal reads, see
// causalReads). A failed ping closes the pool and returns the error.
func Open(ctx context.Context, dsn string, opts ...OpenOption) (*sql.DB, error) {
	return open(ctx, dsn, false, applyOpenOptions(opts))
}

// OpenBatches is Open with multiStatements on: the pool a Store sends its batched run
// transitions on (WithBatches), and nothing else. Its texts are the Store's constants with
// `?` arguments interpolated by the driver, so no input becomes SQL text; the application
// pool keeps refusing multiple statements.
//
// On a Galera node it returns a nil pool and no error, so the Store runs every transition
// statement by statement: a transaction the cluster aborts (a conflicting write set applied
// from another node) is reported to the client's next command, not to the statement that
// was running, so a batch whose transaction was rolled back can answer success, and its
// statements after the abort run on their own (seen: two approvals of one pause through two
// nodes both answered 202). Statement by statement, the abort fails the next statement or
// the COMMIT, and the guard retried then misses.
func OpenBatches(ctx context.Context, dsn string, opts ...OpenOption) (*sql.DB, error) {
	pool, err := open(ctx, dsn, true, applyOpenOptions(opts))
	if err != nil {
		return nil, err
	}
	galera, err := isGalera(ctx, pool)
	switch {
	case err != nil:
		pool.Close()
		return nil, fmt.Errorf("db: open batches: %w", err)
	case galera:
		return nil, pool.Close()
	}
	return pool, nil
}

// batchSQLMode is the batch pool's sql_mode: the server's with STRICT_ALL_TABLES, so a NULL
// for a NOT NULL column is refused in every row of an INSERT, which a batch's guard relies on
// (a sql_mode given in the DSN does not apply to this pool).
const batchSQLMode = "CONCAT(@@SESSION.sql_mode, ',STRICT_ALL_TABLES')"

func open(ctx context.Context, dsn string, multi bool, o openOptions) (*sql.DB, error) {
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
	cfg.MultiStatements = multi
	if multi {
		cfg.Params["sql_mode"] = batchSQLMode
	}
	cfg.InterpolateParams = true
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	pool, err := openPool(pingCtx, cfg, o)
	if err != nil {
		return nil, err
	}
	if _, set := cfg.Params[syncWaitParam]; set {
		return pool, nil
	}
	galera, err := isGalera(pingCtx, pool)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("db: open: %s: %w", cfg.Addr, err)
	}
	if !galera {
		return pool, nil
	}
	pool.Close()
	cfg.Params[syncWaitParam] = causalReads
	return openPool(pingCtx, cfg, o)
}

// On a Galera node Open makes every session's reads causal: wsrep_sync_wait = 1 makes a
// SELECT (and START TRANSACTION) wait until the node has applied every write set the cluster
// committed before it, so a page served by one node shows a decision just committed through
// another. A DSN that sets wsrep_sync_wait itself (e.g. 0, or 3 to cover UPDATE and DELETE
// too) is left as it is, on any server.
const (
	syncWaitParam = "wsrep_sync_wait"
	causalReads   = "1"
)

// openPool opens a pool with Open's limits on cfg and pings it.
func openPool(ctx context.Context, cfg *mysql.Config, o openOptions) (*sql.DB, error) {
	connector, err := newConnector(cfg, o)
	if err != nil {
		return nil, fmt.Errorf("db: open: %w", err)
	}
	pool := sql.OpenDB(connector)
	open, idle := maxOpenConns, maxIdleConns
	if cfg.MultiStatements {
		open, idle = maxOpenBatchConns, maxIdleBatchConns
	}
	pool.SetMaxOpenConns(open)
	pool.SetMaxIdleConns(idle)
	pool.SetConnMaxLifetime(connMaxLifetime)
	pool.SetConnMaxIdleTime(connMaxIdleTime)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("db: open: ping %s: %w", cfg.Addr, err)
	}
	return pool, nil
}

// isGalera reports whether the server is a node of a Galera cluster (wsrep_on is ON); MySQL,
// which has no such variable, and MariaDB without wsrep are not.
func isGalera(ctx context.Context, pool *sql.DB) (bool, error) {
	var name, value string
	err := pool.QueryRowContext(ctx, `SHOW VARIABLES LIKE 'wsrep_on'`).Scan(&name, &value)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("detect Galera (wsrep_on): %w", err)
	}
	return value == "ON", nil
}
