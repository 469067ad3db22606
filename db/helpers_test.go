package db

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"

	"github.com/google/uuid"

	"runsdesk/runtime"
	"runsdesk/typo3/backend/backendtest"
)

const t0 = int64(1_800_000_000)

func newUUID() string { return uuid.NewString() }

// testLayout is the layout newStore opens its databases in: runsdesk's own tables, or
// BesideTYPO3 when RUNSDESK_TEST_LAYOUT is "typo3" (the whole suite then runs on the
// renamed tables; `make test-typo3-layout`).
func testLayout() []OpenOption {
	if os.Getenv("RUNSDESK_TEST_LAYOUT") == "typo3" {
		return []OpenOption{BesideTYPO3()}
	}
	return nil
}

// ownTable is the table runsdesk keeps what its SQL calls name in, in the test layout.
func ownTable(name string) string {
	if len(testLayout()) > 0 {
		return TYPO3Table(name)
	}
	return name
}

// siteTable reports whether table is a TYPO3 site's, not runsdesk's: in the TYPO3 layout,
// be_groups and each table runsdesk's SQL names but keeps under another name.
func siteTable(table string) bool {
	return len(testLayout()) > 0 && (TYPO3Table(table) != table || table == "be_groups")
}

// newSite gives the database behind dsn a TYPO3 12 site's backend tables, which runsdesk
// needs beside TYPO3.
func newSite(t testing.TB, dsn string) {
	t.Helper()
	site, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer site.Close()
	backendtest.Create(t, site)
}

// newMigrated returns the DSN of a fresh database migrated in the test layout (beside a
// TYPO3 site's backend tables in the TYPO3 layout).
func newMigrated(t testing.TB) string {
	t.Helper()
	dsn := newDatabase(t)
	if len(testLayout()) > 0 {
		newSite(t, dsn)
	}
	if err := Migrate(context.Background(), dsn, testLayout()...); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return dsn
}

// newStore returns a Store on a fresh, migrated database, and its pool.
func newStore(t testing.TB) (*Store, *sql.DB) {
	t.Helper()
	dsn := newMigrated(t)
	ctx := context.Background()
	pool, err := Open(ctx, dsn, testLayout()...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	batches, err := OpenBatches(ctx, dsn, testLayout()...)
	if err != nil {
		t.Fatalf("OpenBatches: %v", err)
	}
	t.Cleanup(func() { batches.Close() })
	return New(pool, WithBatches(batches)), pool
}

func lease(owner string, now int64) runtime.Lease {
	return runtime.Lease{Owner: owner, Expires: now + 900, Now: now}
}

func mustCreate(t testing.TB, s *Store, in runtime.NewRun) runtime.Run {
	t.Helper()
	if in.UUID == "" {
		in.UUID = newUUID()
	}
	if in.Now == 0 {
		in.Now = t0
	}
	r, err := s.CreateRun(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	return r
}

func queuedRun(t testing.TB, s *Store) runtime.Run {
	t.Helper()
	return mustCreate(t, s, runtime.NewRun{ConfigurationUID: 1, ConfigurationIdentifier: "cfg",
		BeUser: 7, QueuedRequest: `{"prompt":"hi"}`})
}

func runningRun(t testing.TB, s *Store, owner string) runtime.Run {
	t.Helper()
	return mustCreate(t, s, runtime.NewRun{ConfigurationUID: 1, ConfigurationIdentifier: "cfg",
		BeUser: 7, QueuedRequest: `{"prompt":"hi"}`, Lease: lease(owner, t0), Now: t0})
}

// waitingRun returns a run paused in status at time at, about tools.
func waitingRun(t testing.TB, s *Store, status runtime.Status, at int64, tools ...string) runtime.Run {
	t.Helper()
	r := runningRun(t, s, "w:1")
	sp := runtime.Suspension{Status: status, State: `{"messages":[]}`, Tools: tools}
	if err := s.Suspend(context.Background(), r.UID, "w:1", sp, at); err != nil {
		t.Fatalf("Suspend: %v", err)
	}
	return mustFind(t, s, r.UID)
}

func terminalRun(t testing.TB, s *Store, status runtime.Status, at int64) runtime.Run {
	t.Helper()
	r := runningRun(t, s, "w:1")
	if err := s.Finish(context.Background(), r.UID, "", runtime.Settlement{Status: status,
		Reason: "completed"}, at); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return mustFind(t, s, r.UID)
}

func mustFind(t testing.TB, s *Store, uid int64) runtime.Run {
	t.Helper()
	r, err := s.FindByUID(context.Background(), uid)
	if err != nil {
		t.Fatalf("FindByUID(%d): %v", uid, err)
	}
	return r
}

func wantGuard(t testing.TB, err error) {
	t.Helper()
	if !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("got error %v, want runtime.ErrGuard", err)
	}
}

func uids(runs []runtime.Run) []int64 {
	out := make([]int64, len(runs))
	for i, r := range runs {
		out[i] = r.UID
	}
	return out
}
