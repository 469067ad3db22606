// Package testdb gives a test its own migrated runsdesk database: package dbtest's empty
// database with db.Migrate applied, and an open pool on it. The first database of a test
// binary is migrated; every later one is a copy of its tables (their CREATE TABLE statements
// and rows), which is the same schema at a fraction of the cost of replaying every migration.
package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"runsdesk/db"
	"runsdesk/db/dbtest"
)

// New returns an open pool on a new, migrated database, and its DSN; the pool is closed when
// t ends. A failure ends the test. The test binary's TestMain must call dbtest.Main.
func New(t testing.TB) (*sql.DB, string) {
	t.Helper()
	ctx := context.Background()
	dsn := dbtest.NewDatabase(t)
	pool, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	if err := schema.build(ctx, pool, dsn); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return pool, dsn
}

// schema is the migrated schema of this test binary, read from its first database.
var schema = &migrated{}

// migrated holds the tables of a migrated database once one has been migrated.
type migrated struct {
	mu     sync.Mutex
	tables []table
}

// table is one table of a migrated database: how to create it and the rows migrations put in it.
type table struct {
	name, create string
	insert       string
	rows         [][]any
}

// build gives the empty database behind pool the migrated schema: by migrating it when no
// database of this binary has been migrated yet (then remembering its tables), else by
// creating the remembered tables and their rows.
func (m *migrated) build(ctx context.Context, pool *sql.DB, dsn string) error {
	m.mu.Lock()
	tables := m.tables
	if tables == nil {
		defer m.mu.Unlock()
		if err := db.Migrate(ctx, dsn); err != nil {
			return err
		}
		read, err := readTables(ctx, pool)
		if err != nil {
			return fmt.Errorf("read the migrated tables: %w", err)
		}
		m.tables = read
		return nil
	}
	m.mu.Unlock()
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET foreign_key_checks = 0"); err != nil {
		return err
	}
	for _, tb := range tables {
		if _, err := conn.ExecContext(ctx, tb.create); err != nil {
			return fmt.Errorf("create table %s: %w", tb.name, err)
		}
		for _, row := range tb.rows {
			if _, err := conn.ExecContext(ctx, tb.insert, row...); err != nil {
				return fmt.Errorf("copy a row of %s: %w", tb.name, err)
			}
		}
	}
	_, err = conn.ExecContext(ctx, "SET foreign_key_checks = 1")
	return err
}

// readTables reads every base table of pool's database with its rows.
func readTables(ctx context.Context, pool *sql.DB) ([]table, error) {
	rows, err := pool.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, name)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	tables := make([]table, 0, len(names))
	for _, name := range names {
		tb := table{name: name}
		if err := pool.QueryRowContext(ctx, "SHOW CREATE TABLE `"+name+"`").Scan(new(string), &tb.create); err != nil {
			return nil, err
		}
		if tb.insert, tb.rows, err = readRows(ctx, pool, name); err != nil {
			return nil, err
		}
		tables = append(tables, tb)
	}
	return tables, nil
}

// readRows reads every row of table name as raw values, and the INSERT that writes one back:
// stored columns only, since a generated column takes no value.
func readRows(ctx context.Context, pool *sql.DB, name string) (string, [][]any, error) {
	rows, err := pool.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = ? AND extra NOT LIKE '%GENERATED%' ORDER BY ordinal_position`, name)
	if err != nil {
		return "", nil, err
	}
	var columns []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return "", nil, err
		}
		columns = append(columns, "`"+c+"`")
	}
	if err := rows.Close(); err != nil {
		return "", nil, err
	}
	list := strings.Join(columns, ", ")
	insert := "INSERT INTO `" + name + "` (" + list + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
	rows, err = pool.QueryContext(ctx, "SELECT "+list+" FROM `"+name+"`")
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var all [][]any
	for rows.Next() {
		raw := make([]sql.RawBytes, len(columns))
		dest := make([]any, len(columns))
		for i := range raw {
			dest[i] = &raw[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return "", nil, err
		}
		row := make([]any, len(columns))
		for i, v := range raw {
			if v != nil {
				row[i] = string(v)
			}
		}
		all = append(all, row)
	}
	return insert, all, rows.Err()
}
