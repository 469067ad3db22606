package db

import (
	"context"
	"strings"
	"testing"

	"runsdesk/db/typo3site"
	"runsdesk/runtime"
	"runsdesk/typo3/backend/backendtest"
)

// TestTableNamesRenameWholeNames: beside TYPO3 every whole table name runsdesk shares with a
// TYPO3 site is renamed, wherever it stands in a statement (quoted, qualified, in a literal),
// and nothing else: not a longer name it starts, not a column that contains it.
func TestTableNamesRenameWholeNames(t *testing.T) {
	n := newTableNames(typo3Tables())
	for in, want := range map[string]string{
		"SELECT * FROM tx_nrllm_agentrun r JOIN tx_nrllm_configuration c":  "SELECT * FROM tx_runsdesk_run r JOIN tx_runsdesk_configuration c",
		"INSERT INTO tx_nrllm_agentrun_event (run) VALUES (?)":             "INSERT INTO tx_runsdesk_run_event (run) VALUES (?)",
		"UPDATE `be_users` SET be_user = 1, tx_runsdesk_session = 2":       "UPDATE `tx_runsdesk_person` SET be_user = 1, tx_runsdesk_session = 2",
		"DELETE FROM sessions WHERE token = ?":                             "DELETE FROM tx_runsdesk_session_data WHERE token = ?",
		"SELECT version FROM schema_migrations":                            "SELECT version FROM tx_runsdesk_schema_migrations",
		"CREATE TABLE IF NOT EXISTS schema_migrations_lock (id int)":       "CREATE TABLE IF NOT EXISTS tx_runsdesk_schema_migrations_lock (id int)",
		"SELECT 1 FROM information_schema.tables WHERE name = 'be_groups'": "SELECT 1 FROM information_schema.tables WHERE name = 'be_groups'",
		"SELECT x.tx_nrllm_agentrun_count FROM tx_runsdesk_run_output x":   "SELECT x.tx_nrllm_agentrun_count FROM tx_runsdesk_run_output x",
	} {
		if got := n.rename(in); got != want {
			t.Errorf("rename(%q)\n = %q\nwant %q", in, got, want)
		}
		if got := n.rename(in); got != want {
			t.Errorf("rename(%q) from the cache = %q, want %q", in, got, want)
		}
	}
	for name, own := range typo3Tables() {
		if TYPO3Table(name) != own || !strings.HasPrefix(own, "tx_runsdesk_") {
			t.Errorf("TYPO3Table(%q) = %q, want %q, a tx_runsdesk_ table", name, TYPO3Table(name), own)
		}
	}
	if TYPO3Table("tx_runsdesk_decision") != "tx_runsdesk_decision" {
		t.Error("a table of runsdesk's own is renamed")
	}
}

// TestBesideTYPO3KeepsValuesAsSent: renaming touches statement texts only, never an argument,
// so a value that spells a table name is stored as sent.
func TestBesideTYPO3KeepsValuesAsSent(t *testing.T) {
	dsn := newDatabase(t)
	ctx := context.Background()
	newSite(t, dsn)
	if err := Migrate(ctx, dsn, BesideTYPO3()); err != nil {
		t.Fatal(err)
	}
	pool, err := Open(ctx, dsn, BesideTYPO3())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(`INSERT INTO tx_runsdesk_audit (crdate, actor_uid, actor_name, ip, action, run_uuid, outcome, reason)
		VALUES (1, 0, 'be_users', '', 'x', '', 'success', ?)`, "sessions tx_nrllm_agentrun"); err != nil {
		t.Fatal(err)
	}
	var name, reason string
	if err := pool.QueryRow(`SELECT actor_name, reason FROM tx_runsdesk_audit`).Scan(&name, &reason); err != nil {
		t.Fatal(err)
	}
	if reason != "sessions tx_nrllm_agentrun" {
		t.Errorf("an argument was renamed: %q", reason)
	}
	if name != "tx_runsdesk_person" {
		t.Errorf("a literal in a statement's text: %q; want it renamed like every whole table name of the text", name)
	}
}

// TestMigrateBesideTYPO3: beside TYPO3 runsdesk's migrations make its own tables and leave the
// site's as they were (definition and rows); the extension's run table is made only when the
// site lacks it; a database without TYPO3's backend tables, or whose tables lack a column
// runsdesk reads, is refused before anything is made, naming what is missing.
func TestMigrateBesideTYPO3(t *testing.T) {
	ctx := context.Background()
	t.Run("a site", func(t *testing.T) {
		dsn := newDatabase(t)
		newSite(t, dsn)
		plain, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		if err := typo3site.Check(ctx, plain); err != nil {
			t.Fatal(err)
		}
		before := backendtest.Snapshot(t, plain)
		for range 2 {
			if err := Migrate(ctx, dsn, BesideTYPO3()); err != nil {
				t.Fatal(err)
			}
		}
		if after := backendtest.Snapshot(t, plain); after != before {
			t.Errorf("migrations changed TYPO3's tables:\nbefore %s\nafter %s", before, after)
		}
		pool, err := Open(ctx, dsn, BesideTYPO3())
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if n, err := Pending(ctx, pool); err != nil || n != 0 {
			t.Errorf("Pending beside TYPO3 after Migrate: %d, %v", n, err)
		}
		for _, table := range []string{"tx_runsdesk_run", "tx_runsdesk_person", "tx_runsdesk_configuration", "tx_runsdesk_session_data"} {
			var n int
			if err := plain.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`, table).Scan(&n); err != nil || n != 1 {
				t.Errorf("table %s: %d, %v; want runsdesk's own", table, n, err)
			}
		}
	})
	t.Run("creates the extension's table", func(t *testing.T) {
		dsn := newDatabase(t)
		newSite(t, dsn)
		if err := Migrate(ctx, dsn, BesideTYPO3()); err != nil {
			t.Fatal(err)
		}
		plain, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		var keys int
		if err := plain.QueryRow(`SELECT COUNT(DISTINCT index_name) FROM information_schema.statistics
			WHERE table_schema = DATABASE() AND table_name = 'tx_nrllm_agentrun'`).Scan(&keys); err != nil || keys != 5 {
			t.Errorf("tx_nrllm_agentrun made with %d keys (%v), want the extension's 5", keys, err)
		}
	})
	t.Run("not a site", func(t *testing.T) {
		dsn := newDatabase(t)
		err := Migrate(ctx, dsn, BesideTYPO3())
		if err == nil || !strings.Contains(err.Error(), "table be_users is missing") || !strings.Contains(err.Error(), "table be_groups is missing") {
			t.Fatalf("Migrate beside TYPO3 on an empty database: %v; want both tables named", err)
		}
		plain, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		var n int
		if err := plain.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()`).Scan(&n); err != nil || n != 0 {
			t.Errorf("a refused Migrate left %d tables (%v)", n, err)
		}
	})
	t.Run("a column missing", func(t *testing.T) {
		dsn := newDatabase(t)
		newSite(t, dsn)
		plain, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		if _, err := plain.Exec(`ALTER TABLE be_users DROP COLUMN mfa`); err != nil {
			t.Fatal(err)
		}
		if err := Migrate(ctx, dsn, BesideTYPO3()); err == nil || !strings.Contains(err.Error(), "table be_users lacks column(s) mfa") {
			t.Errorf("Migrate beside a be_users without mfa: %v", err)
		}
	})
}

// TestStoreBesideTYPO3: a store on the tables runsdesk uses beside TYPO3 runs a run from its
// start to a decision, writing nothing to the TYPO3 tables.
func TestStoreBesideTYPO3(t *testing.T) {
	dsn := newDatabase(t)
	ctx := context.Background()
	newSite(t, dsn)
	if err := Migrate(ctx, dsn, BesideTYPO3()); err != nil {
		t.Fatal(err)
	}
	plain, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	before := backendtest.Snapshot(t, plain)
	pool, err := Open(ctx, dsn, BesideTYPO3())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	batches, err := OpenBatches(ctx, dsn, BesideTYPO3())
	if err != nil {
		t.Fatal(err)
	}
	defer batches.Close()
	s := New(pool, WithBatches(batches))
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+5, "notify")
	var own int
	if err := plain.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_run WHERE uid = ? AND status = 'waiting_for_approval'`, r.UID).Scan(&own); err != nil || own != 1 {
		t.Fatalf("the waiting run in tx_runsdesk_run: %d, %v", own, err)
	}
	if after := backendtest.Snapshot(t, plain); after != before {
		t.Errorf("a run's transitions changed TYPO3's tables:\nbefore %s\nafter %s", before, after)
	}
}
