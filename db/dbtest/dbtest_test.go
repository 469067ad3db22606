package dbtest_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"runsdesk/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func openDSN(t *testing.T, dsn string) (*sql.DB, string) {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("NewDatabase returned an unparsable DSN %q: %v", dsn, err)
	}
	if !cfg.ParseTime || cfg.Loc != time.UTC || cfg.MultiStatements || cfg.Params["time_zone"] != "'+00:00'" {
		t.Errorf("DSN %q: parseTime=%v loc=%v multiStatements=%v time_zone=%q, want true UTC false '+00:00'",
			dsn, cfg.ParseTime, cfg.Loc, cfg.MultiStatements, cfg.Params["time_zone"])
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, cfg.DBName
}

func TestNewDatabase(t *testing.T) {
	var (
		mu    sync.Mutex
		names = map[string]bool{}
	)
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				db, dbName := openDSN(t, dbtest.NewDatabase(t))
				mu.Lock()
				if names[dbName] {
					t.Errorf("database name %q handed out twice", dbName)
				}
				names[dbName] = true
				mu.Unlock()

				ctx := context.Background()
				var current, tz string
				var now time.Time
				if err := db.QueryRowContext(ctx, "SELECT DATABASE(), @@session.time_zone, UTC_TIMESTAMP()").Scan(&current, &tz, &now); err != nil {
					t.Fatalf("select: %v", err)
				}
				if current != dbName || tz != "+00:00" || time.Since(now).Abs() > time.Minute {
					t.Errorf("got database %q time_zone %q now %v, want %q +00:00 about %v", current, tz, now, dbName, time.Now().UTC())
				}
				var tables int
				if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()").Scan(&tables); err != nil || tables != 0 {
					t.Errorf("new database has %d tables (err %v), want 0", tables, err)
				}
				if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
					t.Fatalf("create table: %v", err)
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)"); err == nil {
					t.Errorf("two statements in one Exec succeeded, want multiStatements off")
				}
			})
		}
	})
	if len(names) != 8 {
		t.Fatalf("%d databases created, want 8", len(names))
	}

	db, _ := openDSN(t, dbtest.NewDatabase(t))
	rows, err := db.QueryContext(context.Background(), "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
	if err != nil {
		t.Fatalf("list databases: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if names[name] {
			t.Errorf("database %s still exists after its test finished", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
