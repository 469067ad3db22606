package extruns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"runsdesk/db/dbtest"
	"runsdesk/runtime"
	"runsdesk/typo3/extruns/extrunstest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func uuidOf(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// TestWaitingPagesOldestFirst: the runs of both waiting statuses, merged oldest first (uid
// breaking ties of crdate), page by page without a gap or a repeat; other statuses never.
func TestWaitingPagesOldestFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := extrunstest.New(t)
	statuses := []string{"waiting_for_approval", "waiting_for_input", "completed", "running", "queued", "waiting_for_input", "cancelled"}
	var want []string
	for i := range 40 {
		status := statuses[i%len(statuses)]
		crdate := int64(1000 + (i*7)%13) // out of insertion order, with ties
		if i == 3 {
			crdate = 0 // the column's default: first in the list
		}
		extrunstest.Insert(t, pool, extrunstest.Row{UUID: uuidOf(i), Status: status, ConfigurationIdentifier: "cfg", BeUser: int64(i), Crdate: crdate, Tstamp: crdate + 5})
	}
	rows, err := pool.QueryContext(ctx, `SELECT uuid FROM tx_nrllm_agentrun WHERE status IN ('waiting_for_approval', 'waiting_for_input') ORDER BY crdate, uid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		want = append(want, u)
	}
	rows.Close()

	r := New(pool)
	var got []string
	page := Page{Size: 3}
	for range 100 {
		list, err := r.Waiting(ctx, page)
		if err != nil {
			t.Fatalf("Waiting(%+v): %v", page, err)
		}
		if len(list.Runs) > 3 {
			t.Fatalf("a page of %d runs, asked for 3", len(list.Runs))
		}
		for _, s := range list.Runs {
			if !s.Status.Waiting() || s.ConfigurationIdentifier != "cfg" || s.Tstamp != s.Crdate+5 || s.WaitingSince() != s.Tstamp {
				t.Errorf("listed %+v", s)
			}
			got = append(got, s.UUID)
		}
		if !list.More {
			if list.Next != (Cursor{}) {
				t.Errorf("last page with a next cursor %+v", list.Next)
			}
			break
		}
		last := list.Runs[len(list.Runs)-1]
		if list.Next != (Cursor{Crdate: last.Crdate, UID: last.UID}) {
			t.Errorf("next cursor %+v, want the last run's position", list.Next)
		}
		page.After = list.Next
	}
	if len(want) < 10 || !slices.Equal(got, want) {
		t.Errorf("pages listed\n%v\nwant\n%v", got, want)
	}
}

func TestWaitingPageSizeIsBounded(t *testing.T) {
	t.Parallel()
	pool := extrunstest.New(t)
	var rows []extrunstest.Row
	for i := range MaxPageSize + 1 {
		rows = append(rows, extrunstest.Row{UUID: uuidOf(i), Status: "waiting_for_approval", Crdate: int64(i + 1)})
	}
	extrunstest.Insert(t, pool, rows...)
	r := New(pool)
	for size, want := range map[int]int{0: DefaultPageSize, -1: DefaultPageSize, 7: 7, 5000: MaxPageSize} {
		list, err := r.Waiting(context.Background(), Page{Size: size})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Runs) != want || !list.More {
			t.Errorf("size %d: %d runs (more %v), want %d and more", size, len(list.Runs), list.More, want)
		}
	}
}

// TestWaitingReadsStatusLookup: at 20,000 runs, each waiting status is read as a range of
// the extension's KEY status_lookup in list order (no scan, no sort of the table's rows);
// only the merged page, at most twice its size, is sorted.
func TestWaitingReadsStatusLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := extrunstest.New(t)
	const total, batch = 20000, 1000
	for start := 0; start < total; start += batch {
		var b strings.Builder
		args := make([]any, 0, 4*batch)
		b.WriteString("INSERT INTO tx_nrllm_agentrun (uuid, status, crdate, suspended_state, queued_request) VALUES ")
		for i := start; i < start+batch; i++ {
			if i > start {
				b.WriteByte(',')
			}
			b.WriteString("(?, ?, ?, '', '')")
			status := []string{"completed", "failed", "cancelled", "completed", "running"}[i%5]
			if i%97 == 0 {
				status = "waiting_for_approval"
			} else if i%89 == 0 {
				status = "waiting_for_input"
			}
			args = append(args, uuidOf(i), status, 1_700_000_000+i)
		}
		if _, err := pool.ExecContext(ctx, b.String(), args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.ExecContext(ctx, "ANALYZE TABLE tx_nrllm_agentrun"); err != nil {
		t.Fatal(err)
	}
	for name, after := range map[string]Cursor{"first page": {}, "later page": {Crdate: 1_700_010_000, UID: 10_001}} {
		plan := explain(t, pool, sqlWaiting, waitingArgs(after, DefaultPageSize)...)
		tables := 0
		for _, row := range plan {
			t.Logf("%s: %v", name, row)
			if strings.HasPrefix(row["table"], "<union") {
				continue
			}
			tables++
			if row["table"] != "tx_nrllm_agentrun" || row["key"] != "status_lookup" || row["type"] != "range" {
				t.Errorf("%s: %s read by %s on key %q, want a range of status_lookup", name, row["table"], row["type"], row["key"])
			}
			if strings.Contains(row["Extra"], "filesort") {
				t.Errorf("%s: the table's rows are sorted (%s), want them read in the key's order", name, row["Extra"])
			}
			if n, err := strconv.Atoi(row["rows"]); err != nil || n > total/10 {
				t.Errorf("%s: an estimate of %s rows of %d, want the waiting runs' range only", name, row["rows"], total)
			}
		}
		if tables != 2 {
			t.Errorf("%s: %d table reads, want one per waiting status", name, tables)
		}
	}
	list, err := New(pool).Waiting(ctx, Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != DefaultPageSize || list.Runs[0].UUID != uuidOf(0) || list.Runs[1].UUID != uuidOf(89) {
		t.Errorf("first page starts %v", list.Runs[:2])
	}
}

// explain returns the rows of EXPLAIN query, each keyed by column (NULL as "").
func explain(t *testing.T, pool *sql.DB, query string, args ...any) []map[string]string {
	t.Helper()
	rows, err := pool.QueryContext(context.Background(), "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN: %v", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].String
		}
		out = append(out, row)
	}
	return out
}

// TestFind: a run of any status by uuid, its waiting payload classified; unknown and
// duplicated uuids refused; and nothing written to the table.
func TestFind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := extrunstest.New(t)
	extrunstest.Insert(t, pool,
		extrunstest.Row{UUID: uuidOf(1), Status: "waiting_for_approval", ConfigurationIdentifier: "mail", BeUser: 3, Crdate: 100, Tstamp: 150, SuspendedState: "nrv1:b3BhcXVl"},
		extrunstest.Row{UUID: uuidOf(2), Status: "waiting_for_input", Crdate: 100, SuspendedState: "v2:b3BhcXVl"},
		extrunstest.Row{UUID: uuidOf(3), Status: "waiting_for_approval", Crdate: 100, SuspendedState: approvalState},
		extrunstest.Row{UUID: uuidOf(4), Status: "waiting_for_input", Crdate: 100, SuspendedState: inputState},
		extrunstest.Row{UUID: uuidOf(5), Status: "waiting_for_approval", Crdate: 100, SuspendedState: corruptState},
		extrunstest.Row{UUID: uuidOf(6), Status: "completed", Crdate: 100, SuspendedState: ""},
		extrunstest.Row{UUID: uuidOf(7), Status: "running", Crdate: 100, SuspendedState: `{"messages":[],"iterations":1}`},
		extrunstest.Row{UUID: uuidOf(8), Status: "completed"},
		extrunstest.Row{UUID: uuidOf(8), Status: "failed"},
	)
	before := extrunstest.Dump(t, pool)
	r := New(pool)

	for i, want := range map[int]Kind{1: PayloadSealed, 2: PayloadSealed, 3: PayloadCleartext, 4: PayloadCleartext, 5: PayloadUnreadable, 6: PayloadNone, 7: PayloadNone} {
		run, err := r.Find(ctx, uuidOf(i))
		if err != nil {
			t.Fatalf("Find %d: %v", i, err)
		}
		if run.UUID != uuidOf(i) || run.Payload.Kind != want {
			t.Errorf("Find %d: %s payload %q, want %q", i, run.UUID, run.Payload.Kind, want)
		}
	}
	sealed, _ := r.Find(ctx, uuidOf(1))
	if s := sealed.Summary; s.Status != runtime.StatusWaitingApproval || s.ConfigurationIdentifier != "mail" || s.BeUser != 3 || s.Crdate != 100 || s.WaitingSince() != 150 {
		t.Errorf("Find 1: %+v", s)
	}
	approval, _ := r.Find(ctx, uuidOf(3))
	if calls := approval.Payload.Calls; len(calls) != 2 || calls[0].Tool != "send_mail" || calls[1].Tool != "refund" {
		t.Errorf("approval's calls: %+v", calls)
	}
	input, _ := r.Find(ctx, uuidOf(4))
	if in := input.Payload.Input; in == nil || in.Tool != "ask_city" || len(in.Fields) != 2 || input.WaitingSince() != 100 {
		t.Errorf("input: %+v", input)
	}
	corrupt, _ := r.Find(ctx, uuidOf(5))
	if !strings.Contains(corrupt.Payload.Reason, "no id or tool name") {
		t.Errorf("corrupt run's reason: %q", corrupt.Payload.Reason)
	}

	if _, err := r.Find(ctx, uuidOf(99)); !errors.Is(err, runtime.ErrNotFound) || !strings.Contains(err.Error(), uuidOf(99)) {
		t.Errorf("unknown uuid: %v, want ErrNotFound naming the uuid", err)
	}
	if _, err := r.Find(ctx, uuidOf(8)); err == nil || errors.Is(err, runtime.ErrNotFound) || !strings.Contains(err.Error(), "more than one run") {
		t.Errorf("a uuid two rows hold: %v, want it refused", err)
	}
	if _, err := r.Waiting(ctx, Page{}); err != nil {
		t.Fatal(err)
	}
	if after := extrunstest.Dump(t, pool); after != before {
		t.Errorf("the table changed:\nbefore %s\nafter %s", before, after)
	}
}

// TestFindNullState: a waiting run whose suspended_state is NULL (the extension's payload
// columns may be NULL) is read as an empty state, unreadable with its reason, not an error.
func TestFindNullState(t *testing.T) {
	pool := extrunstest.New(t)
	extrunstest.Insert(t, pool, extrunstest.Row{UUID: "0a6e2b58-1234-4abc-9def-00000000000a", Status: "waiting_for_input", Crdate: 1})
	if _, err := pool.Exec(`UPDATE tx_nrllm_agentrun SET suspended_state = NULL, queued_request = NULL`); err != nil {
		t.Fatal(err)
	}
	run, err := New(pool).Find(context.Background(), "0a6e2b58-1234-4abc-9def-00000000000a")
	if err != nil || run.Payload.Kind != PayloadUnreadable {
		t.Errorf("a NULL state: %+v, %v; want it read, unreadable", run.Payload, err)
	}
}
