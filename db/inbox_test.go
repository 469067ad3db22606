package db

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"runsdesk/runtime"
)

// inboxFixture creates paused runs with known pause times, configurations, tools and uuids.
type inboxFixture struct {
	approvalA, approvalB, input1, input2, sameTime, other runtime.Run
}

func newInboxFixture(t *testing.T, s *Store) inboxFixture {
	t.Helper()
	mk := func(uuid string, cfg int64, status runtime.Status, at int64, tools ...string) runtime.Run {
		r := mustCreate(t, s, runtime.NewRun{UUID: uuid, ConfigurationUID: cfg, ConfigurationIdentifier: "c",
			Lease: lease("w:1", t0), Now: t0})
		if err := s.Suspend(t.Context(), r.UID, "w:1", runtime.Suspension{Status: status, State: "s",
			Tools: tools}, at); err != nil {
			t.Fatal(err)
		}
		return mustFind(t, s, r.UID)
	}
	f := inboxFixture{
		approvalA: mk("aaaa1111-0000-4000-8000-000000000001", 1, runtime.StatusWaitingApproval, t0+10, "refund", "lookup"),
		input1:    mk("bbbb2222-0000-4000-8000-000000000002", 2, runtime.StatusWaitingInput, t0+20, "ask_amount"),
		approvalB: mk("aaaa1111-0000-4000-8000-000000000003", 2, runtime.StatusWaitingApproval, t0+30, "refund"),
		sameTime:  mk("a_b%0000-0000-4000-8000-000000000004", 1, runtime.StatusWaitingInput, t0+30, "ask_amount"),
		input2:    mk("cccc3333-0000-4000-8000-000000000005", 1, runtime.StatusWaitingInput, t0+40, "ask_refund"),
	}
	f.other = runningRun(t, s, "w:1")
	terminalRun(t, s, runtime.StatusCompleted, t0+50)
	queuedRun(t, s)
	return f
}

func TestListWaitingFilters(t *testing.T) {
	s, _ := newStore(t)
	f := newInboxFixture(t, s)
	all := []runtime.Run{f.approvalA, f.input1, f.approvalB, f.sameTime, f.input2}
	tests := []struct {
		name      string
		q         runtime.WaitingQuery
		want      []runtime.Run
		wantCount runtime.WaitingCounts
	}{
		{"all, longest waiting first", runtime.WaitingQuery{Limit: 50}, all, runtime.WaitingCounts{Approval: 2, Input: 3}},
		{"status approval", runtime.WaitingQuery{Status: runtime.StatusWaitingApproval, Limit: 50},
			[]runtime.Run{f.approvalA, f.approvalB}, runtime.WaitingCounts{Approval: 2, Input: 3}},
		{"status input", runtime.WaitingQuery{Status: runtime.StatusWaitingInput, Limit: 50},
			[]runtime.Run{f.input1, f.sameTime, f.input2}, runtime.WaitingCounts{Approval: 2, Input: 3}},
		{"configuration", runtime.WaitingQuery{ConfigurationUID: 2, Limit: 50},
			[]runtime.Run{f.input1, f.approvalB}, runtime.WaitingCounts{Approval: 1, Input: 1}},
		{"tool, whole names only", runtime.WaitingQuery{Tool: "refund", Limit: 50},
			[]runtime.Run{f.approvalA, f.approvalB}, runtime.WaitingCounts{Approval: 2}},
		{"second tool of a pause", runtime.WaitingQuery{Tool: "lookup", Limit: 50},
			[]runtime.Run{f.approvalA}, runtime.WaitingCounts{Approval: 1}},
		{"waiting since", runtime.WaitingQuery{WaitingSince: t0 + 30, Limit: 50},
			[]runtime.Run{f.approvalA, f.input1, f.approvalB, f.sameTime}, runtime.WaitingCounts{Approval: 2, Input: 2}},
		{"uuid prefix", runtime.WaitingQuery{UUIDPrefix: "aaaa1111", Limit: 50},
			[]runtime.Run{f.approvalA, f.approvalB}, runtime.WaitingCounts{Approval: 2}},
		{"uuid prefix with LIKE wildcards is literal", runtime.WaitingQuery{UUIDPrefix: "a_b%", Limit: 50},
			[]runtime.Run{f.sameTime}, runtime.WaitingCounts{Input: 1}},
		{"wildcard-only prefix matches nothing", runtime.WaitingQuery{UUIDPrefix: "%", Limit: 50},
			[]runtime.Run{}, runtime.WaitingCounts{}},
		{"filters combine", runtime.WaitingQuery{ConfigurationUID: 1, Tool: "ask_amount", Limit: 50},
			[]runtime.Run{f.sameTime}, runtime.WaitingCounts{Input: 1}},
		{"limit below 1 is 1", runtime.WaitingQuery{Limit: 0}, []runtime.Run{f.approvalA},
			runtime.WaitingCounts{Approval: 2, Input: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListWaiting(t.Context(), tc.q)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if want := listed(tc.want); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v (uids %v, want %v)", got, want, uids(got), uids(tc.want))
			}
			counts, err := s.CountWaiting(t.Context(), tc.q)
			if err != nil || counts != tc.wantCount {
				t.Fatalf("CountWaiting: got %+v, %v, want %+v", counts, err, tc.wantCount)
			}
		})
	}
}

// listed is runs as ListWaiting returns them: the fields a list card shows, the rest zero.
func listed(runs []runtime.Run) []runtime.Run {
	out := make([]runtime.Run, len(runs))
	for i, r := range runs {
		out[i] = runtime.Run{UID: r.UID, UUID: r.UUID, Status: r.Status, ConfigurationUID: r.ConfigurationUID,
			ConfigurationIdentifier: r.ConfigurationIdentifier, BeUser: r.BeUser, SuspendedState: r.SuspendedState,
			PendingTools: r.PendingTools, SuspendedAt: r.SuspendedAt}
	}
	return out
}

func TestListWaitingKeyset(t *testing.T) {
	s, _ := newStore(t)
	f := newInboxFixture(t, s)
	want := []int64{f.approvalA.UID, f.input1.UID, f.approvalB.UID, f.sameTime.UID, f.input2.UID}
	for _, limit := range []int{1, 2, 3, 4} {
		var got []int64
		q := runtime.WaitingQuery{Limit: limit}
		for page := 0; page < 10; page++ {
			runs, err := s.ListWaiting(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) > limit {
				t.Fatalf("limit %d, page %d: got %d rows", limit, page, len(runs))
			}
			if len(runs) == 0 {
				break
			}
			got = append(got, uids(runs)...)
			last := runs[len(runs)-1]
			q.AfterSuspendedAt, q.AfterUID = last.SuspendedAt, last.UID
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d pages: got %v, want %v", limit, got, want)
		}
	}

	runs, err := s.ListWaiting(t.Context(), runtime.WaitingQuery{Limit: 1000})
	if err != nil || len(runs) != 5 {
		t.Fatalf("limit 1000: got %d rows, %v, want 5 (clamped to 200)", len(runs), err)
	}
}

func TestListWaitingPageClamp(t *testing.T) {
	s, _ := newStore(t)
	for i := range 205 {
		waitingRun(t, s, runtime.StatusWaitingApproval, t0+int64(i)+1, "a")
	}
	runs, err := s.ListWaiting(t.Context(), runtime.WaitingQuery{Limit: 1000})
	if err != nil || len(runs) != 200 {
		t.Fatalf("got %d rows, %v, want 200", len(runs), err)
	}
}

func TestListWaitingKeepsUnknownStatus(t *testing.T) {
	s, _ := newStore(t)
	good := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	odd := waitingRun(t, s, runtime.StatusWaitingInput, t0+2, "a")
	if _, err := s.db.Exec(`UPDATE tx_nrllm_agentrun SET status = 'paused_legacy' WHERE uid = ?`, odd.UID); err != nil {
		t.Fatal(err)
	}
	runs, err := s.ListWaiting(t.Context(), runtime.WaitingQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].UID != good.UID || runs[1].Status != "paused_legacy" {
		t.Fatalf("got %+v, want the good run and the unknown status as stored", runs)
	}
	if r, err := s.FindByUID(t.Context(), odd.UID); err != nil || r.Status != "paused_legacy" {
		t.Fatalf("FindByUID: got status %q, %v, want paused_legacy", r.Status, err)
	}
}

func TestListsSurfaceStoreErrors(t *testing.T) {
	s, pool := newStore(t)
	waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	pool.Close()
	checks := map[string]error{}
	runs, err := s.ListWaiting(t.Context(), runtime.WaitingQuery{Limit: 10})
	if runs != nil {
		t.Fatalf("ListWaiting on a closed pool: got %v, want nil", runs)
	}
	checks["ListWaiting"] = err
	_, checks["CountWaiting"] = s.CountWaiting(t.Context(), runtime.WaitingQuery{})
	_, checks["ListRecent"] = s.ListRecent(t.Context(), runtime.RecentQuery{Limit: 10})
	_, checks["ListQueued"] = s.ListQueued(t.Context(), t0, 10)
	_, checks["FindStale"] = s.FindStale(t.Context(), t0, 10)
	_, checks["Events"] = s.Events(t.Context(), 1, -1)
	_, checks["FindByUID"] = s.FindByUID(t.Context(), 1)
	_, checks["Configurations"] = s.Configurations(t.Context())
	_, checks["ToolDefinitions"] = s.ToolDefinitions(t.Context())
	for name, err := range checks {
		if err == nil || errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("%s on a closed pool: got %v, want a store error", name, err)
		}
	}
}

func TestListRecent(t *testing.T) {
	s, _ := newStore(t)
	a := terminalRun(t, s, runtime.StatusCompleted, t0+10)
	b := terminalRun(t, s, runtime.StatusFailed, t0+20)
	c := terminalRun(t, s, runtime.StatusCancelled, t0+20)
	d := terminalRun(t, s, runtime.StatusCompleted, t0+30)
	waitingRun(t, s, runtime.StatusWaitingApproval, t0+40, "x")
	runningRun(t, s, "w:1")
	queuedRun(t, s)

	want := []int64{d.UID, c.UID, b.UID, a.UID}
	var got []int64
	q := runtime.RecentQuery{Limit: 3}
	for page := 0; page < 10; page++ {
		runs, err := s.ListRecent(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 0 {
			break
		}
		got = append(got, uids(runs)...)
		last := runs[len(runs)-1]
		q.BeforeFinishedAt, q.BeforeUID = last.FinishedAt, last.UID
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pages: got %v, want %v", got, want)
	}
}

func TestListQueuedAndFindStale(t *testing.T) {
	s, _ := newStore(t)
	q1 := mustCreate(t, s, runtime.NewRun{Now: t0 + 2})
	q2 := mustCreate(t, s, runtime.NewRun{Now: t0 + 1})
	runningRun(t, s, "w:1")
	got, err := s.ListQueued(t.Context(), t0, 10)
	if err != nil || !reflect.DeepEqual(got, []int64{q2.UID, q1.UID}) {
		t.Fatalf("ListQueued: got %v, %v, want %v", got, err, []int64{q2.UID, q1.UID})
	}
	if got, err := s.ListQueued(t.Context(), t0, 1); err != nil || len(got) != 1 {
		t.Fatalf("ListQueued(1): got %v, %v, want one uid", got, err)
	}
	later := runningRun(t, s, "w:2")
	if err := s.Requeue(t.Context(), later.UID, "w:2", t0, t0+30); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListQueued(t.Context(), t0+29, 10); err != nil || slices.Contains(got, later.UID) {
		t.Fatalf("ListQueued before the retry time: got %v, %v, want %d left out", got, err, later.UID)
	}
	if got, err := s.ListQueued(t.Context(), t0+30, 10); err != nil || !slices.Contains(got, later.UID) {
		t.Fatalf("ListQueued at the retry time: got %v, %v, want %d listed", got, err, later.UID)
	}

	s2, _ := newStore(t)
	late := mustCreate(t, s2, runtime.NewRun{Lease: runtime.Lease{Owner: "w", Expires: t0 + 50}})
	early := mustCreate(t, s2, runtime.NewRun{Lease: runtime.Lease{Owner: "w", Expires: t0 + 10}})
	mustCreate(t, s2, runtime.NewRun{Lease: runtime.Lease{Owner: "w", Expires: t0 + 500}})
	waitingRun(t, s2, runtime.StatusWaitingApproval, t0+1, "a")
	stale, err := s2.FindStale(t.Context(), t0+100, 10)
	if err != nil || !reflect.DeepEqual(uids(stale), []int64{early.UID, late.UID}) {
		t.Fatalf("FindStale: got %v, %v, want %v", uids(stale), err, []int64{early.UID, late.UID})
	}
	if stale, err := s2.FindStale(t.Context(), t0+50, 10); err != nil || !reflect.DeepEqual(uids(stale), []int64{early.UID}) {
		t.Fatalf("FindStale at the expiry second: got %v, %v, want %v", uids(stale), err, []int64{early.UID})
	}
}

func TestFindNotFound(t *testing.T) {
	s, _ := newStore(t)
	for name, err := range map[string]error{
		"FindByUID":      func() error { _, err := s.FindByUID(t.Context(), 42); return err }(),
		"FindByUUID":     func() error { _, err := s.FindByUUID(t.Context(), "nope"); return err }(),
		"FindDecision":   func() error { _, err := s.FindDecision(t.Context(), 42, "k"); return err }(),
		"LatestDecision": func() error { _, err := s.LatestDecision(t.Context(), 42); return err }(),
	} {
		if !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("%s: got %v, want runtime.ErrNotFound", name, err)
		}
	}
}

// TestCountWaitingIsCapped: past runtime.MaxCounted matching runs the count stops reading and
// says so; below it the counts are exact.
func TestCountWaitingIsCapped(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	if _, err := pool.ExecContext(ctx, `INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request, suspended_at)
		SELECT UUID(), IF(seq % 2 = 0, 'waiting_for_approval', 'waiting_for_input'), '{}', '', 1000 + seq
		FROM seq_1_to_1100`); err != nil {
		t.Skipf("needs MariaDB's sequence engine: %v", err)
	}
	c, err := s.CountWaiting(ctx, runtime.WaitingQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Capped || c.Approval+c.Input != runtime.MaxCounted+1 {
		t.Fatalf("counts = %+v, want capped at %d", c, runtime.MaxCounted+1)
	}
	c, err = s.CountWaiting(ctx, runtime.WaitingQuery{WaitingSince: 1000 + 100})
	if err != nil {
		t.Fatal(err)
	}
	if c.Capped || c.Approval != 50 || c.Input != 50 {
		t.Fatalf("filtered counts = %+v, want 50/50 exact", c)
	}
}
