// Package benchenv gives the benchmark programs a database server and seeded desks: the
// private MariaDB/MySQL server of package db/mysqld in a data dir of their own (or the
// server RUNSDESK_DSN names), one database per desk size, migrated with db.Migrate, set up
// with the demo desk's configurations and in-process tools, bench users, and runs bulk-loaded
// by package bench/seed. A database seeded before with the same size and seed version is
// reused as it is. A desk may also be built beside a TYPO3 site (DeskOptions.TYPO3): runsdesk's
// tables renamed as `--typo3` names them, the site's extension table filled alongside.
package benchenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/db/mysqld"
)

// EnvDSN names the environment variable of an existing server to use instead of the private
// one; its user must be allowed to create databases.
const EnvDSN = "RUNSDESK_DSN"

// Options configures Start.
type Options struct {
	// DSN of an existing server (its database part is ignored); empty means the private one.
	DSN string
	// DataDir of the private server (default: os.TempDir()/runsdesk-bench/mysql).
	DataDir string
	// BufferPool, when positive, sets innodb_buffer_pool_size on the private server (MariaDB
	// resizes it online; the server's default is 128 MiB). An external server is left alone.
	BufferPool int64
	Logger     *slog.Logger
}

// Env is a running server the benchmarks create their databases on.
type Env struct {
	base   *mysql.Config
	admin  *sql.DB
	server *mysqld.Server
	log    *slog.Logger
}

// DefaultDataDir is where the private bench server keeps its data unless told otherwise.
func DefaultDataDir() string { return filepath.Join(os.TempDir(), "runsdesk-bench", "mysql") }

// Start connects to o.DSN or starts (or reuses) the private server in o.DataDir.
func Start(ctx context.Context, o Options) (*Env, error) {
	e := &Env{log: o.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	dsn := o.DSN
	if dsn == "" {
		dir := o.DataDir
		if dir == "" {
			dir = DefaultDataDir()
		}
		srv, err := mysqld.Start(ctx, mysqld.Options{DataDir: dir, Logger: e.log})
		if err != nil {
			return nil, fmt.Errorf("benchenv: start the private server (or set %s): %w", EnvDSN, err)
		}
		e.server = srv
		dsn = srv.DSN("")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("benchenv: parse DSN: %w", err)
	}
	cfg.DBName = ""
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	e.base = cfg
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("benchenv: %w", err)
	}
	e.admin = sql.OpenDB(connector)
	if err := e.admin.PingContext(ctx); err != nil {
		e.Close()
		return nil, fmt.Errorf("benchenv: connect: %w", err)
	}
	if e.server != nil && o.BufferPool > 0 {
		if err := e.resizeBufferPool(ctx, o.BufferPool); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// resizeBufferPool sets innodb_buffer_pool_size and waits for the online resize to finish.
func (e *Env) resizeBufferPool(ctx context.Context, size int64) error {
	if _, err := e.admin.ExecContext(ctx, fmt.Sprintf("SET GLOBAL innodb_buffer_pool_size = %d", size)); err != nil {
		return fmt.Errorf("benchenv: resize the buffer pool: %w", err)
	}
	for range 600 {
		var name, status string
		err := e.admin.QueryRowContext(ctx, "SHOW STATUS LIKE 'Innodb_buffer_pool_resize_status'").Scan(&name, &status)
		if err != nil || status == "" || strings.Contains(status, "Completed") {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("benchenv: the buffer pool resize did not finish within a minute")
}

// Settings describes the server for the report: version and buffer pool size.
func (e *Env) Settings(ctx context.Context) string {
	var version string
	var pool int64
	if err := e.admin.QueryRowContext(ctx, "SELECT VERSION(), @@innodb_buffer_pool_size").Scan(&version, &pool); err != nil {
		return "unknown server"
	}
	return fmt.Sprintf("server %s, innodb_buffer_pool_size %d MiB", version, pool>>20)
}

// Private reports whether the server is the private one this process started or reused.
func (e *Env) Private() bool { return e.server != nil }

// ServerPID returns the private server's pid (0 for an external server or when unknown).
func (e *Env) ServerPID() int {
	if e.server == nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(e.server.DataDir(), "mysqld.pid"))
	if err != nil {
		return 0
	}
	var pid int
	_, _ = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	return pid
}

// Admin returns the pool without a database selected.
func (e *Env) Admin() *sql.DB { return e.admin }

// DSN returns the DSN of database name; bulk asks for client-side placeholder interpolation
// (one round trip per statement) for a pool opened with sql.Open; db.Open, whose pool also
// seeds the desks, always interpolates.
func (e *Env) DSN(name string, bulk bool) string {
	cfg := e.base.Clone()
	cfg.DBName = name
	cfg.InterpolateParams = bulk
	return cfg.FormatDSN()
}

// Close closes the admin pool and stops the private server if this process started it.
func (e *Env) Close() error {
	var errs []error
	if e.admin != nil {
		errs = append(errs, e.admin.Close())
	}
	if e.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		errs = append(errs, e.server.Stop(ctx))
	}
	return errors.Join(errs...)
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// Quiesce waits (at most two minutes) until the server runs no statement but this one, so
// that work a previous measurement left behind (a query whose client gave up keeps running
// on the server) does not count against the next. Only on the private server; an external
// server may have clients of its own.
func (e *Env) Quiesce(ctx context.Context) error {
	if e.server == nil {
		return nil
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var n int
		err := e.admin.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE COMMAND = 'Query' AND ID <> CONNECTION_ID()`).Scan(&n)
		if err != nil {
			return fmt.Errorf("benchenv: quiesce: %w", err)
		}
		if n == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("benchenv: quiesce: statements still running after two minutes")
}
