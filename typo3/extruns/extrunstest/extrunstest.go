// Package extrunstest gives a test a TYPO3 site's run table as the extension nr-llm defines it
// (typo3site.AgentRunTable: upstream's columns and keys only, none of runsdesk's), in a
// database of its own, and writes and dumps its rows. The test binary's TestMain must call
// dbtest.Main.
package extrunstest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"runsdesk/db/dbtest"
	"runsdesk/db/typo3site"
)

// New returns an open pool on a new database holding only the upstream tx_nrllm_agentrun,
// empty; the pool is closed when t ends. A failure ends the test.
func New(t testing.TB) *sql.DB {
	t.Helper()
	pool, err := sql.Open("mysql", dbtest.NewDatabase(t))
	if err != nil {
		t.Fatalf("open the TYPO3 site's database: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	if _, err := pool.ExecContext(context.Background(), typo3site.AgentRunTable()); err != nil {
		t.Fatalf("create the upstream tx_nrllm_agentrun: %v", err)
	}
	return pool
}

// Row is a run as the extension writes it: the columns a test sets, the rest their defaults.
type Row struct {
	UUID                    string
	Status                  string
	ConfigurationIdentifier string
	BeUser                  int64
	Crdate, Tstamp          int64
	SuspendedState          string
}

// Insert writes rows and returns their uids, in order. A failure ends the test.
func Insert(t testing.TB, pool *sql.DB, rows ...Row) []int64 {
	t.Helper()
	uids := make([]int64, len(rows))
	for i, r := range rows {
		res, err := pool.ExecContext(context.Background(), `INSERT INTO tx_nrllm_agentrun
			(uuid, status, configuration_identifier, be_user, crdate, tstamp, suspended_state, queued_request)
			VALUES (?, ?, ?, ?, ?, ?, ?, '')`,
			r.UUID, r.Status, r.ConfigurationIdentifier, r.BeUser, r.Crdate, r.Tstamp, r.SuspendedState)
		if err != nil {
			t.Fatalf("insert run %s: %v", r.UUID, err)
		}
		if uids[i], err = res.LastInsertId(); err != nil {
			t.Fatal(err)
		}
	}
	return uids
}

// Dump is the table's definition and every row, every column, in uid order: two dumps are
// equal when nothing was written in between. A failure ends the test.
func Dump(t testing.TB, pool *sql.DB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	var name, create string
	if err := pool.QueryRowContext(ctx, "SHOW CREATE TABLE tx_nrllm_agentrun").Scan(&name, &create); err != nil {
		t.Fatalf("dump tx_nrllm_agentrun: %v", err)
	}
	b.WriteString(create)
	rows, err := pool.QueryContext(ctx, "SELECT * FROM tx_nrllm_agentrun ORDER BY uid")
	if err != nil {
		t.Fatalf("dump tx_nrllm_agentrun: %v", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			t.Fatalf("dump tx_nrllm_agentrun: %v", err)
		}
		b.WriteByte('\n')
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%q ", cols[i], v)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("dump tx_nrllm_agentrun: %v", err)
	}
	return b.String()
}
