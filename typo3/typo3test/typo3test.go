// Package typo3test gives tests a TYPO3 12 site's database: TYPO3's backend tables
// (typo3/backend/backendtest) and the nr-llm extension's run table, and, with New, runsdesk's
// own tables migrated beside them (db.BesideTYPO3). The test binary's TestMain must call
// dbtest.Main.
package typo3test

import (
	"context"
	"database/sql"
	"testing"

	"runsdesk/db"
	"runsdesk/db/dbtest"
	"runsdesk/db/typo3site"
	"runsdesk/typo3/backend/backendtest"
)

// Site is a TYPO3 site's database.
type Site struct {
	DSN string
	// Site renames no table: TYPO3's own be_users, be_groups and tx_nrllm_agentrun.
	Site *sql.DB
	// Pool is runsdesk's (db.BesideTYPO3), nil from NewSite.
	Pool *sql.DB
}

// NewSite returns a new database holding a TYPO3 12 site's tables, empty, and a pool on it
// closed when tb ends. A failure ends the test.
func NewSite(tb testing.TB) Site {
	tb.Helper()
	dsn := dbtest.NewDatabase(tb)
	site := open(tb, dsn)
	backendtest.Create(tb, site)
	if err := typo3site.Check(context.Background(), site); err != nil {
		tb.Fatalf("typo3test: the extension's run table: %v", err)
	}
	return Site{DSN: dsn, Site: site}
}

// New is NewSite with runsdesk migrated beside the site and its pool open.
func New(tb testing.TB) Site {
	tb.Helper()
	s := NewSite(tb)
	if err := db.Migrate(context.Background(), s.DSN, db.BesideTYPO3()); err != nil {
		tb.Fatalf("typo3test: migrate beside TYPO3: %v", err)
	}
	s.Pool = open(tb, s.DSN, db.BesideTYPO3())
	return s
}

func open(tb testing.TB, dsn string, opts ...db.OpenOption) *sql.DB {
	tb.Helper()
	pool, err := db.Open(context.Background(), dsn, opts...)
	if err != nil {
		tb.Fatalf("typo3test: open: %v", err)
	}
	tb.Cleanup(func() { pool.Close() })
	return pool
}
