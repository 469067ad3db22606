// Package testdb gives a test its own migrated runsdesk database: package dbtest's empty
// database with db.Migrate applied, and an open pool on it.
package testdb

import (
	"context"
	"database/sql"
	"testing"

	"runsdesk/db"
	"runsdesk/db/dbtest"
)

// New returns an open pool on a new, migrated database, and its DSN; the pool is closed when
// t ends. A failure ends the test. The test binary's TestMain must call dbtest.Main.
func New(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dsn := dbtest.NewDatabase(t)
	if err := db.Migrate(context.Background(), dsn); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	pool, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool, dsn
}
