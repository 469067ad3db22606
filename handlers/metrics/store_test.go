package metrics

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/bench/seed"
	"runsdesk/db"
	"runsdesk/internal/testdb"
)

// migratedPool opens a pool on a fresh, migrated database, closed when the test ends.
func migratedPool(t *testing.T) *sql.DB {
	t.Helper()
	pool, _ := testdb.New(t)
	return pool
}

// seededStore returns a Store on a fresh database with runs whose suspended_at spread over
// the 14 days before now, its pool, and the seed's report.
func seededStore(t *testing.T) (*db.Store, *sql.DB, seed.Report) {
	t.Helper()
	ctx := context.Background()
	pool := migratedPool(t)
	tpls, err := seed.Synthetic(1, "refunds", 200)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := seed.Seed(ctx, pool, seed.Options{Runs: 600, WaitingPercent: 50, Templates: tpls, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return db.New(pool), pool, rep
}

// fromRows is a Source whose waiting-age histogram is bucketed here from every waiting run's
// suspended_at, as the metrics did before the database counted it.
type fromRows struct {
	Source
	pool *sql.DB
}

func (r fromRows) WaitingAges(ctx context.Context, now int64, bounds []int64) ([]int64, int64, error) {
	rows, err := r.pool.QueryContext(ctx, `SELECT suspended_at FROM tx_nrllm_agentrun WHERE suspended_at > 0`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var since []int64
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return nil, 0, err
		}
		since = append(since, at)
	}
	cumulative, sum := histogramOf(since, now, bounds)
	return cumulative, sum, rows.Err()
}

// countingStore counts the Store queries the metrics run.
type countingStore struct {
	*db.Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingStore) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[name]++
}

func (c *countingStore) CountByStatus(ctx context.Context) (map[string]int, error) {
	c.count("CountByStatus")
	return c.Store.CountByStatus(ctx)
}

func (c *countingStore) WaitingAges(ctx context.Context, now int64, bounds []int64) ([]int64, int64, error) {
	c.count("WaitingAges")
	return c.Store.WaitingAges(ctx, now, bounds)
}

func (c *countingStore) CountLeased(ctx context.Context) (int, error) {
	c.count("CountLeased")
	return c.Store.CountLeased(ctx)
}

// waitingLines returns the runsdesk_waiting_age_seconds samples of an exposition, one a line.
func waitingLines(exposition string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(exposition, "\n") {
		if strings.HasPrefix(line, "runsdesk_waiting_age_seconds_") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// TestWaitingAgesMatchRows on the real database: the histogram counted in SQL is the one the
// metrics built from every shipped suspended_at.
func TestWaitingAgesMatchRows(t *testing.T) {
	store, pool, rep := seededStore(t)
	clock := func() time.Time { return time.Unix(now, 0) }
	inSQL := waitingLines(scrape(t, newEcho(New(Config{Source: store, Now: clock}))))
	fromRows := waitingLines(scrape(t, newEcho(New(Config{Source: fromRows{Source: store, pool: pool}, Now: clock}))))
	if inSQL != fromRows {
		t.Fatalf("histogram in SQL:\n%s\nfrom the rows:\n%s", inSQL, fromRows)
	}
	waiting := strconv.Itoa(rep.Approval + rep.Input)
	mustContain(t, inSQL, "runsdesk_waiting_age_seconds_count "+waiting)
	if strings.Contains(inSQL, `le="86400"} `+waiting+"\n") || strings.Contains(inSQL, `le="60"} `+waiting+"\n") {
		t.Fatalf("the seeded ages do not spread over the buckets (%s waiting):\n%s", waiting, inSQL)
	}
}

// TestSnapshotQueriesOnce on the real database: two scrapes within the interval run each
// snapshot query once.
func TestSnapshotQueriesOnce(t *testing.T) {
	store, _, _ := seededStore(t)
	src := &countingStore{Store: store, calls: map[string]int{}}
	m, clk := newClockedMetrics(src)
	e := newEcho(m)
	first := scrape(t, e)
	clk.advance(10 * time.Second)
	second := scrape(t, e)
	want := map[string]int{"CountByStatus": 1, "WaitingAges": 1, "CountLeased": 1}
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.calls) != len(want) {
		t.Fatalf("queries run: %v, want %v", src.calls, want)
	}
	for q, n := range want {
		if src.calls[q] != n {
			t.Fatalf("queries run: %v, want %v", src.calls, want)
		}
	}
	if waitingLines(first) != waitingLines(second) {
		t.Errorf("the second scrape did not serve the same snapshot:\n%s\n%s", first, second)
	}
}
