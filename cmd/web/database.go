package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"runsdesk/db"
	"runsdesk/db/mysqld"
	"runsdesk/seal"
)

// privateDatabase is the database the private local server holds.
const privateDatabase = "runsdesk"

// stopTimeout bounds stopping the private server.
const stopTimeout = time.Minute

// conn is an open database: the pool, its DSN (for migrations), and the private server when
// this process started or reused one.
type conn struct {
	pool *sql.DB
	// site is a pool that renames no table, for reading a TYPO3 site's own tables beside it
	// (--typo3); nil otherwise.
	site *sql.DB
	// layout is how pool, batches and migrations name runsdesk's tables.
	layout []db.OpenOption
	// batches is the pool of the store's batched transitions (db.OpenBatches).
	batches *sql.DB
	dsn     string
	server  *mysqld.Server
	// keys seal the run state this process writes (nil: stored in clear).
	keys *seal.Keyring
}

// openDatabase connects to cfg.DSN, or, when it is empty, starts (or reuses) the private
// local server with its data in cfg.DataDir/mysql and creates database runsdesk on it.
func openDatabase(ctx context.Context, cfg database, log *slog.Logger) (*conn, error) {
	var keys *seal.Keyring
	if cfg.getenv != nil {
		var err error
		if keys, err = seal.FromEnv(cfg.getenv); err != nil {
			return nil, err
		}
	}
	c := &conn{dsn: cfg.DSN, keys: keys}
	if cfg.TYPO3 {
		c.layout = []db.OpenOption{db.BesideTYPO3()}
	}
	if c.dsn == "" {
		if cfg.DataDir == "" {
			return nil, errors.New("no --dsn and no --data-dir: set RUNSDESK_DSN, or RUNSDESK_DATA_DIR for a private local server")
		}
		srv, err := mysqld.Start(ctx, mysqld.Options{DataDir: filepath.Join(cfg.DataDir, "mysql"), Logger: log})
		if err != nil {
			return nil, fmt.Errorf("start the private database server (set RUNSDESK_DSN to use another): %w", err)
		}
		c.server = srv
		if err := srv.EnsureDatabase(ctx, privateDatabase); err != nil {
			c.close(log)
			return nil, fmt.Errorf("create database %s on the private server: %w", privateDatabase, err)
		}
		c.dsn = srv.DSN(privateDatabase)
	}
	pool, err := db.Open(ctx, c.dsn, c.layout...)
	if err != nil {
		c.close(log)
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	c.pool = pool
	if c.batches, err = db.OpenBatches(ctx, c.dsn, c.layout...); err != nil {
		c.close(log)
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	if cfg.TYPO3 {
		if c.site, err = db.Open(ctx, c.dsn); err != nil {
			c.close(log)
			return nil, fmt.Errorf("connect to the database: %w", err)
		}
	}
	return c, nil
}

// close closes the pool and stops the private server if this process started it.
func (c *conn) close(log *slog.Logger) {
	for _, p := range []*sql.DB{c.pool, c.batches, c.site} {
		if p == nil {
			continue
		}
		if err := p.Close(); err != nil {
			log.Warn("closing a database pool failed", "err", err)
		}
	}
	if c.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := c.server.Stop(ctx); err != nil {
			log.Error("stopping the private database server failed", "err", err)
		}
	}
}

// migrate applies the pending migrations in conn's layout.
func (c *conn) migrate(ctx context.Context) error {
	return db.Migrate(ctx, c.dsn, c.layout...)
}

// migrated returns nil when no migration is pending, else an error telling how to migrate.
func (c *conn) migrated(ctx context.Context) error {
	n, err := db.Pending(ctx, c.pool)
	if err != nil {
		return fmt.Errorf("read the migration state: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("the database lacks %d migration(s): run `runsdesk migrate` first", n)
	}
	return nil
}

// onMigratedDatabase runs do on the database dbc names once it is open and migrated, and
// closes it after; a database that cannot be opened or is not migrated fails command name.
func onMigratedDatabase(ctx context.Context, c *cli, f *flags, name string, dbc database, do func(*conn) int) int {
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf(name, "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf(name, "%v", err)
	}
	return do(conn)
}
