package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/db/typo3site"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// The migration lock (acquireMigrateLock): how long a holder's lease lasts without renewal,
// how long Migrate waits for a live holder, and how often it looks again.
const (
	migrateLockTTL  = time.Minute
	migrateLockWait = time.Minute
	migrateLockPoll = 100 * time.Millisecond
)

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

type migration struct {
	version int64
	name    string
	sql     string
}

// Migrate applies every embedded migration not yet recorded in schema_migrations, in version
// order, each exactly once, on its own connection pool opened from dsn with multiStatements on.
// The whole run holds the migration lock, a row of schema_migrations_lock that every node of a
// Galera cluster agrees on (acquireMigrateLock), so concurrent callers (several processes
// starting at once, on one server or on several nodes) apply each file once and all succeed;
// a caller that waits longer than 60 s for a live holder gets an error naming it, and the
// lease of a holder that died runs out after a minute. Re-running with nothing pending changes nothing. A
// failing file is not recorded and its error (naming the file) is returned; statements of that
// file that ran before the failing one stay applied, which is why each file uses IF NOT EXISTS.
// With BesideTYPO3 the files create runsdesk's own tables (TYPO3Table), after the site's
// tables were checked (typo3site.Check: a database that is not such a site is refused first).
func Migrate(ctx context.Context, dsn string, opts ...OpenOption) error {
	files, err := loadMigrations()
	if err != nil {
		return err
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("db: migrate: parse dsn: %w", err)
	}
	cfg.MultiStatements = true
	o := applyOpenOptions(opts)
	if o.names != nil {
		if err := checkSite(ctx, cfg); err != nil {
			return err
		}
	}
	connector, err := newConnector(cfg, o)
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

	release, err := acquireMigrateLock(ctx, pool)
	if err != nil {
		return err
	}
	defer release()

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
// behind db (all of them when schema_migrations does not exist yet). A deadlock or Galera
// certification failure (another node migrating at the same time) is read again
// (retryTransient); any other failure is returned as an error, never as zero.
func Pending(ctx context.Context, db *sql.DB) (int, error) {
	files, err := loadMigrations()
	if err != nil {
		return 0, err
	}
	var applied map[int64]bool
	missing := false
	err = retryTransient(ctx, nil, func() error {
		rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
		var myErr *mysql.MySQLError
		if errors.As(err, &myErr) && myErr.Number == errNoSuchTable {
			missing = true
			return nil
		}
		if err != nil {
			return err
		}
		applied, err = scanVersions(rows)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("db: pending migrations: %w", err)
	}
	if missing {
		return len(files), nil
	}
	n := 0
	for _, m := range files {
		if !applied[m.version] {
			n++
		}
	}
	return n, nil
}

// checkSite checks, on a pool of its own that renames nothing, the TYPO3 site's tables
// runsdesk reads beside it (typo3site.Check).
func checkSite(ctx context.Context, cfg *mysql.Config) error {
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("db: migrate: %w", err)
	}
	pool := sql.OpenDB(connector)
	defer pool.Close()
	if err := typo3site.Check(ctx, pool); err != nil {
		return fmt.Errorf("db: migrate: %w", err)
	}
	return nil
}

const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version int unsigned NOT NULL,
    applied_at int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`

const createMigrateLock = `CREATE TABLE IF NOT EXISTS schema_migrations_lock (
    id tinyint unsigned NOT NULL,
    owner varchar(64) NOT NULL DEFAULT '',
    expires int unsigned NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
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

// The rows of schema_migrations_lock, each a lease one process holds at a time across the
// desk (every node of a Galera cluster agrees on them, unlike GET_LOCK).
const (
	migrateLease   = 1
	retentionLease = 2
	chainLease     = 3
)

// acquireMigrateLock takes the migration lock: the row migrateLease of
// schema_migrations_lock, inserted or taken over from an owner whose lease ran out (takeLease).
// It waits up to migrateLockWait for a live owner to let go, then fails naming it. While held,
// the lease is renewed every migrateLockTTL/4 until release is called, which deletes the row.
func acquireMigrateLock(ctx context.Context, pool *sql.DB) (release func(), err error) {
	if _, err := execRetrying(ctx, pool, createMigrateLock); err != nil {
		return nil, fmt.Errorf("db: migrate: create schema_migrations_lock: %w", err)
	}
	owner := newLockOwner()
	deadline := time.Now().Add(migrateLockWait)
	for {
		holder, expires, err := takeLease(ctx, pool, migrateLease, owner, migrateLockTTL)
		if err != nil {
			return nil, fmt.Errorf("db: migrate: %w", err)
		}
		if holder == owner {
			return renewLease(pool, migrateLease, owner, migrateLockTTL), nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("db: migrate: lock held by %s (lease until %s) for more than %s: wait for that migration or, if it died, for its lease to run out",
				holder, time.Unix(expires, 0).UTC().Format(time.RFC3339), migrateLockWait)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("db: migrate: waiting for lock held by %s: %w", holder, ctx.Err())
		case <-time.After(migrateLockPoll):
		}
	}
}

// takeLease tries once to take lease id of schema_migrations_lock for owner for ttl, in a
// statement that commits (and, on Galera, certifies) cluster-wide: inserted, renewed when
// owner holds it, taken over when its holder's lease ran out. It returns who holds it now
// (owner when taken; "" when released meanwhile) and until when.
func takeLease(ctx context.Context, pool *sql.DB, id int, owner string, ttl time.Duration) (string, int64, error) {
	if _, err := execRetrying(ctx, pool, `INSERT INTO schema_migrations_lock (id, owner, expires)
		VALUES (?, ?, UNIX_TIMESTAMP() + ?)
		ON DUPLICATE KEY UPDATE
			owner = IF(expires < UNIX_TIMESTAMP(), VALUES(owner), owner),
			expires = IF(owner = VALUES(owner), VALUES(expires), expires)`, id, owner, int64(ttl/time.Second)); err != nil {
		return "", 0, fmt.Errorf("take lease %d: %w", id, err)
	}
	var holder string
	var expires int64
	err := pool.QueryRowContext(ctx, `SELECT owner, expires FROM schema_migrations_lock WHERE id = ?`, id).Scan(&holder, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("read lease %d: %w", id, err)
	}
	return holder, expires, nil
}

// renewLease keeps owner's lease id alive, renewing it every ttl/4, until the returned
// release deletes the row.
func renewLease(pool *sql.DB, id int, owner string, ttl time.Duration) (release func()) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(ttl / 4)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _ = execRetrying(ctx, pool, `UPDATE schema_migrations_lock SET expires = UNIX_TIMESTAMP() + ?
					WHERE id = ? AND owner = ?`, int64(ttl/time.Second), id, owner)
				cancel()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = execRetrying(ctx, pool, `DELETE FROM schema_migrations_lock WHERE id = ? AND owner = ?`, id, owner)
	}
}

// newLockOwner names a lease holder: host, pid and a random suffix.
func newLockOwner() string {
	host, _ := os.Hostname()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	owner := fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(suffix))
	return owner[max(0, len(owner)-64):]
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
