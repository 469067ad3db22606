package db

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

const migrateLockName = "runsdesk_migrate"

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

type migration struct {
	version int64
	name    string
	sql     string
}

// Migrate applies every embedded migration not yet recorded in schema_migrations, in version
// order, each exactly once, on its own connection pool opened from dsn with multiStatements on.
// The whole run holds GET_LOCK('runsdesk_migrate', 60), so concurrent callers (several
// processes starting at once) apply each file once and all succeed; a caller that waits longer
// than 60 s for the lock gets an error. Re-running with nothing pending changes nothing. A
// failing file is not recorded and its error (naming the file) is returned; statements of that
// file that ran before the failing one stay applied, which is why each file uses IF NOT EXISTS.
func Migrate(ctx context.Context, dsn string) error {
	files, err := loadMigrations()
	if err != nil {
		return err
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("db: migrate: parse dsn: %w", err)
	}
	cfg.MultiStatements = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("db: migrate: %w", err)
	}
	pool := sql.OpenDB(connector)
	defer pool.Close()
	conn, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("db: migrate: connect: %w", err)
	}
	defer conn.Close()

	if err := acquireMigrateLock(ctx, conn); err != nil {
		return err
	}
	defer releaseMigrateLock(conn)

	if _, err := conn.ExecContext(ctx, createSchemaMigrations); err != nil {
		return fmt.Errorf("db: migrate: create schema_migrations: %w", err)
	}
	applied, err := appliedVersions(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range files {
		if applied[m.version] {
			continue
		}
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("db: migrate: apply %s: %w", m.name, err)
		}
		if _, err := conn.ExecContext(ctx,
			`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
			m.version, time.Now().Unix()); err != nil {
			return fmt.Errorf("db: migrate: record %s: %w", m.name, err)
		}
	}
	return nil
}

// Pending returns how many embedded migrations are not recorded as applied in the database
// behind db (all of them when schema_migrations does not exist yet). A query failure is
// returned as an error, never as zero.
func Pending(ctx context.Context, db *sql.DB) (int, error) {
	files, err := loadMigrations()
	if err != nil {
		return 0, err
	}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && myErr.Number == errNoSuchTable {
		return len(files), nil
	}
	if err != nil {
		return 0, fmt.Errorf("db: pending migrations: %w", err)
	}
	applied, err := scanVersions(rows)
	if err != nil {
		return 0, fmt.Errorf("db: pending migrations: %w", err)
	}
	n := 0
	for _, m := range files {
		if !applied[m.version] {
			n++
		}
	}
	return n, nil
}

const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version int unsigned NOT NULL,
    applied_at int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("db: read migrations: %w", err)
	}
	seen := make(map[int64]string, len(entries))
	out := make([]migration, 0, len(entries))
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("db: migration file %q is not named NNNN_name.sql", e.Name())
		}
		version, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("db: migration file %q: %w", e.Name(), err)
		}
		if prev, dup := seen[version]; dup {
			return nil, fmt.Errorf("db: migrations %q and %q share version %d", prev, e.Name(), version)
		}
		seen[version] = e.Name()
		body, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("db: read migration %q: %w", e.Name(), err)
		}
		out = append(out, migration{version: version, name: e.Name(), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

func acquireMigrateLock(ctx context.Context, conn *sql.Conn) error {
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 60)`, migrateLockName).Scan(&got); err != nil {
		return fmt.Errorf("db: migrate: get lock: %w", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("db: migrate: lock %q not acquired within 60s", migrateLockName)
	}
	return nil
}

func releaseMigrateLock(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.ExecContext(ctx, `DO RELEASE_LOCK(?)`, migrateLockName)
}

func appliedVersions(ctx context.Context, conn *sql.Conn) (map[int64]bool, error) {
	rows, err := conn.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("db: migrate: read schema_migrations: %w", err)
	}
	applied, err := scanVersions(rows)
	if err != nil {
		return nil, fmt.Errorf("db: migrate: read schema_migrations: %w", err)
	}
	return applied, nil
}

func scanVersions(rows *sql.Rows) (map[int64]bool, error) {
	defer rows.Close()
	applied := make(map[int64]bool)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}
