package db

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
)

func resumeClaim(r runtime.Run, owner, key string) runtime.CommitPlan {
	return runtime.CommitPlan{
		Read:     r,
		Now:      now1,
		Resume:   &runtime.Resume{Lease: lease(owner, now1), Continuation: `{"resume":true}`},
		Notify:   runtime.NotifyDecided,
		Decision: runtime.Decision{IdempotencyKey: key, Kind: "approval", Approved: true, DecidedBy: 9},
		Event: runtime.NewEvent{Kind: runtime.EventApproval,
			Payload: json.RawMessage(`{"approved":true,"decidedBy":9}`)},
		Audit: &runtime.AuditRecord{Actor: runtime.Actor{UserUID: 9, Name: "ada\nlovelace", Role: runtime.RoleAdmin},
			AuditNote: runtime.AuditNote{Action: "approval", IP: "192.0.2.7", Outcome: "approved", Reason: "looks right"}},
	}
}

func appendEvents(t *testing.T, s *Store, run int64, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := s.AppendEvent(t.Context(), runtime.NewEvent{Run: run, Kind: runtime.EventLLM,
			Round: i, Payload: json.RawMessage(`{}`), Now: t0}); err != nil {
			t.Fatalf("AppendEvent: %v", err)
		}
	}
}

func TestClaimForResume(t *testing.T) {
	s, _ := newStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "refund")
	appendEvents(t, s, r.UID, 3)
	run, ev, err := s.Commit(t.Context(), resumeClaim(r, "resume:h:1", "key-1"))
	if err != nil {
		t.Fatalf("got error %v, want nil", err)
	}
	want := r
	want.Status, want.ClaimedBy, want.LeaseExpires = runtime.StatusRunning, "resume:h:1", now1+900
	want.QueuedRequest, want.SuspendedAt, want.PendingTools, want.Tstamp = `{"resume":true}`, 0, "", now1
	if !reflect.DeepEqual(run, want) {
		t.Fatalf("returned run:\ngot  %+v\nwant %+v", run, want)
	}
	if got := mustFind(t, s, r.UID); !reflect.DeepEqual(got, want) {
		t.Fatalf("stored run:\ngot  %+v\nwant %+v", got, want)
	}
	if got, want := run.SuspendedState, r.SuspendedState; got != want || got == "" {
		t.Fatalf("suspended_state: got %q, want %q kept", got, want)
	}
	wantEv := runtime.Event{UID: ev.UID, Run: r.UID, Sequence: 3, Kind: runtime.EventApproval,
		Payload: json.RawMessage(`{"approved":true,"decidedBy":9}`), Crdate: now1}
	if !reflect.DeepEqual(ev, wantEv) {
		t.Fatalf("event:\ngot  %+v\nwant %+v", ev, wantEv)
	}
	events, err := s.Events(t.Context(), r.UID, 2)
	if err != nil || len(events) != 1 || !reflect.DeepEqual(events[0], wantEv) {
		t.Fatalf("Events(after 2): got %+v, %v, want [%+v]", events, err, wantEv)
	}
	d, err := s.FindDecision(t.Context(), r.UID, "key-1")
	wantD := runtime.Decision{UID: d.UID, Run: r.UID, IdempotencyKey: "key-1", Kind: "approval",
		Approved: true, DecidedBy: 9, Crdate: now1}
	if err != nil || !reflect.DeepEqual(d, wantD) {
		t.Fatalf("FindDecision: got %+v, %v, want %+v", d, err, wantD)
	}
	latest, err := s.LatestDecision(t.Context(), r.UID)
	if err != nil || latest != wantD {
		t.Fatalf("LatestDecision: got %+v, %v, want %+v", latest, err, wantD)
	}
	audit, err := NewAudit(s.db, nil).RecentAudit(t.Context(), 10)
	wantA := runtime.AuditEntry{Time: now1, ActorUID: 9, ActorName: "ada\uFFFDlovelace", IP: "192.0.2.7", Action: "approval",
		RunUUID: r.UUID, Outcome: "approved", Reason: "looks right"}
	if err != nil || len(audit) != 1 {
		t.Fatalf("audit rows: got %+v, %v, want one", audit, err)
	}
	if wantA.UID = audit[0].UID; audit[0] != wantA {
		t.Fatalf("audit row:\ngot  %+v\nwant %+v", audit[0], wantA)
	}
}

func TestClaimForResumeRefusals(t *testing.T) {
	s, _ := newStore(t)
	tests := []struct {
		name  string
		setup func(t *testing.T) runtime.Run
		claim func(r runtime.Run) runtime.CommitPlan
		want  func(t *testing.T, err error)
	}{
		{"a pause stored again since it was read is a guard",
			func(t *testing.T) runtime.Run { return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "a") },
			func(r runtime.Run) runtime.CommitPlan {
				r.SuspendedState += " "
				return resumeClaim(r, "resume:h:1", "k")
			},
			func(t *testing.T, err error) { wantGuard(t, err) }},
		{"a state differing only in letter case is a guard",
			func(t *testing.T) runtime.Run { return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "a") },
			func(r runtime.Run) runtime.CommitPlan {
				r.SuspendedState = strings.ToUpper(r.SuspendedState)
				return resumeClaim(r, "resume:h:1", "k")
			},
			func(t *testing.T, err error) { wantGuard(t, err) }},
		{"a pause of another time is a guard",
			func(t *testing.T) runtime.Run { return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "a") },
			func(r runtime.Run) runtime.CommitPlan {
				r.SuspendedAt++
				return resumeClaim(r, "resume:h:1", "k")
			},
			func(t *testing.T, err error) { wantGuard(t, err) }},
		{"wrong pause status is a guard",
			func(t *testing.T) runtime.Run { return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "a") },
			func(r runtime.Run) runtime.CommitPlan {
				r.Status = runtime.StatusWaitingApproval
				return resumeClaim(r, "resume:h:1", "k")
			},
			func(t *testing.T, err error) { wantGuard(t, err) }},
		{"a running run is a guard",
			func(t *testing.T) runtime.Run { return runningRun(t, s, "w:1") },
			func(r runtime.Run) runtime.CommitPlan {
				r.Status = runtime.StatusWaitingApproval
				return resumeClaim(r, "resume:h:1", "k")
			},
			func(t *testing.T, err error) { wantGuard(t, err) }},
		{"a terminal run is a guard",
			func(t *testing.T) runtime.Run { return terminalRun(t, s, runtime.StatusCancelled, t0+1) },
			func(r runtime.Run) runtime.CommitPlan {
				r.Status = runtime.StatusWaitingApproval
				return resumeClaim(r, "resume:h:1", "k")
			},
			func(t *testing.T, err error) { wantGuard(t, err) }},
		{"a reused idempotency key is a duplicate and a guard",
			func(t *testing.T) runtime.Run {
				r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
				if _, _, err := s.Commit(t.Context(), resumeClaim(r, "resume:h:1", "dup")); err != nil {
					t.Fatal(err)
				}
				if err := s.Suspend(t.Context(), r.UID, "resume:h:1", runtime.Suspension{
					Status: runtime.StatusWaitingApproval, State: "again", Tools: []string{"b"}}, t0+2); err != nil {
					t.Fatal(err)
				}
				return mustFind(t, s, r.UID)
			},
			func(r runtime.Run) runtime.CommitPlan { return resumeClaim(r, "resume:h:2", "dup") },
			func(t *testing.T, err error) {
				if !errors.Is(err, ErrDuplicateDecision) || !errors.Is(err, runtime.ErrGuard) {
					t.Fatalf("got error %v, want ErrDuplicateDecision and runtime.ErrGuard", err)
				}
			}},
		{"an event that cannot be written rolls the claim back",
			func(t *testing.T) runtime.Run { return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a") },
			func(r runtime.Run) runtime.CommitPlan {
				c := resumeClaim(r, "resume:h:1", "k-event")
				c.Event.Kind = strings.Repeat("k", 33)
				return c
			},
			func(t *testing.T, err error) {
				if !errors.Is(err, runtime.ErrEventNotRecorded) || errors.Is(err, runtime.ErrGuard) {
					t.Fatalf("got error %v, want runtime.ErrEventNotRecorded", err)
				}
			}},
		{"a payload that is not JSON is not recorded",
			func(t *testing.T) runtime.Run { return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a") },
			func(r runtime.Run) runtime.CommitPlan {
				c := resumeClaim(r, "resume:h:1", "k-json")
				c.Event.Payload = json.RawMessage(`{"approved":`)
				return c
			},
			func(t *testing.T, err error) {
				if !errors.Is(err, runtime.ErrEventNotRecorded) {
					t.Fatalf("got error %v, want runtime.ErrEventNotRecorded", err)
				}
			}},
		{"a pause status that is not a pause is refused",
			func(t *testing.T) runtime.Run { return queuedRun(t, s) },
			func(r runtime.Run) runtime.CommitPlan { return resumeClaim(r, "resume:h:1", "k") },
			func(t *testing.T, err error) {
				if err == nil || errors.Is(err, runtime.ErrGuard) {
					t.Fatalf("got error %v, want a non-guard refusal", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.setup(t)
			decisionsBefore := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, before.UID)
			eventsBefore := countRows(t, s, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`, before.UID)
			auditBefore := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit`)
			run, ev, err := s.Commit(t.Context(), tc.claim(before))
			tc.want(t, err)
			if run != (runtime.Run{}) || ev.UID != 0 {
				t.Fatalf("refused claim returned run %+v, event %+v; want zero values", run, ev)
			}
			if after := mustFind(t, s, before.UID); !reflect.DeepEqual(after, before) {
				t.Fatalf("refused claim changed the run:\ngot  %+v\nwant %+v", after, before)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, before.UID); n != decisionsBefore {
				t.Fatalf("decisions: got %d, want %d", n, decisionsBefore)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`, before.UID); n != eventsBefore {
				t.Fatalf("events: got %d, want %d", n, eventsBefore)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit`); n != auditBefore {
				t.Fatalf("audit rows: got %d, want %d", n, auditBefore)
			}
		})
	}
}

func countRows(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// race starts n goroutines at once, each calling try with its index, and returns how many
// got nil; every other result must be runtime.ErrGuard.
func race(t *testing.T, n int, try func(i int) error) int {
	t.Helper()
	return raceLosing(t, n, runtime.ErrGuard, try)
}

// raceLosing is race whose losers must get an error wrapping lost.
func raceLosing(t *testing.T, n int, lost error, try func(i int) error) int {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = try(i)
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	for _, err := range errs {
		switch {
		case err == nil:
			winners++
		case !errors.Is(err, lost):
			t.Fatalf("loser got %v, want %v", err, lost)
		}
	}
	return winners
}

const racers, rounds = 32, 100

func TestClaimForResumeRace(t *testing.T) {
	s, pool := newStore(t)
	pool.SetMaxOpenConns(racers + 4)
	pool.SetMaxIdleConns(racers + 4)
	for round := range rounds {
		r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		winners := race(t, racers, func(i int) error {
			_, _, err := s.Commit(t.Context(), resumeClaim(r, fmt.Sprintf("resume:%d", i), fmt.Sprintf("k%d", i)))
			return err
		})
		if winners != 1 {
			t.Fatalf("round %d: got %d winners, want 1", round, winners)
		}
		if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, r.UID); n != 1 {
			t.Fatalf("round %d: got %d decisions, want 1", round, n)
		}
		if n := countRows(t, s, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`, r.UID); n != 1 {
			t.Fatalf("round %d: got %d events, want 1", round, n)
		}
	}
}

func TestClaimQueuedRace(t *testing.T) {
	s, pool := newStore(t)
	pool.SetMaxOpenConns(racers + 4)
	pool.SetMaxIdleConns(racers + 4)
	for round := range rounds {
		r := queuedRun(t, s)
		winners := race(t, racers, func(i int) error {
			return s.ClaimQueued(t.Context(), r.UID, lease(fmt.Sprintf("worker:%d", i), now1))
		})
		if winners != 1 {
			t.Fatalf("round %d: got %d winners, want 1", round, winners)
		}
	}
}

// recordPlan is a plan of r's pause that only records (a vote of person by), under key.
func recordPlan(r runtime.Run, by int64, key string) runtime.CommitPlan {
	return runtime.CommitPlan{
		Read: r, Now: now1,
		Decision: runtime.Decision{IdempotencyKey: key, Kind: "vote", Approved: true, DecidedBy: by},
		Event:    runtime.NewEvent{Kind: "vote", Payload: json.RawMessage(fmt.Sprintf(`{"approved":true,"decidedBy":%d}`, by))},
		Audit: &runtime.AuditRecord{Actor: runtime.Actor{UserUID: by, Name: "ada", Role: runtime.RoleReviewer},
			AuditNote: runtime.AuditNote{Action: "vote", Outcome: "recorded"}},
	}
}

// TestCommitRecordOnly: a plan that only records writes its decision, event and audit row
// beside the pause, which keeps waiting as it was (a claim of the same read still holds, its
// event after the recorded one); a record refused after its guard wrote (a duplicate key)
// leaves nothing; once the pause has ended a record is a guard.
func TestCommitRecordOnly(t *testing.T) {
	s, _ := newStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "refund")
	appendEvents(t, s, r.UID, 2)
	run, ev, err := s.Commit(t.Context(), recordPlan(r, 9, "vote-9"))
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if run.Status != runtime.StatusWaitingApproval || run.SuspendedAt != r.SuspendedAt || run.PendingTools != r.PendingTools || ev.Sequence != 2 || ev.UID == 0 {
		t.Fatalf("record returned run %+v, event %+v; want the pause kept and the event at 2", run, ev)
	}
	stored := mustFind(t, s, r.UID)
	if stored.Status != r.Status || stored.SuspendedAt != r.SuspendedAt || stored.SuspendedState != r.SuspendedState || stored.ClaimedBy != "" {
		t.Fatalf("stored run after a record: %+v; want the pause as it was", stored)
	}
	if d, err := s.FindDecision(t.Context(), r.UID, "vote-9"); err != nil || d.Kind != "vote" || d.DecidedBy != 9 {
		t.Fatalf("recorded decision: %+v, %v", d, err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit WHERE run_uuid = ? AND action = 'vote'`, r.UUID); n != 1 {
		t.Fatalf("%d audit rows of the vote, want 1", n)
	}
	if n := countRows(t, s, `SELECT pause_sequence FROM tx_nrllm_agentrun WHERE uid = ?`, r.UID); n != 3 {
		t.Fatalf("pause_sequence %d after the record, want 3 (the next event's)", n)
	}
	_, _, err = s.Commit(t.Context(), recordPlan(r, 9, "vote-9"))
	if !errors.Is(err, ErrDuplicateDecision) || !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("a second record under the same key: %v; want a duplicate decision", err)
	}
	if n := countRows(t, s, `SELECT pause_sequence FROM tx_nrllm_agentrun WHERE uid = ?`, r.UID); n != 3 {
		t.Fatalf("pause_sequence %d after a refused record, want 3: its guard's write was not rolled back", n)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`, r.UID); n != 3 {
		t.Fatalf("%d events after a refused record, want 3", n)
	}
	_, claimEv, err := s.Commit(t.Context(), resumeClaim(r, "resume:h:1", "key-1"))
	if err != nil || claimEv.Sequence != 3 {
		t.Fatalf("a claim of the read before the record: event %+v, %v; want the claim at sequence 3", claimEv, err)
	}
	_, _, err = s.Commit(t.Context(), recordPlan(r, 10, "vote-10"))
	wantGuard(t, err)
}

// TestCommitRecordRace: records of one pause by many people and its claim, at once, in many
// rounds: exactly one claim, every record either committed before it (its event earlier) or a
// guard, the run's events dense; records under one idempotency key: one winner.
func TestCommitRecordRace(t *testing.T) {
	s, pool := newStore(t)
	pool.SetMaxOpenConns(racers + 4)
	pool.SetMaxIdleConns(racers + 4)
	for round := range 20 {
		r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		claims := 0
		winners := race(t, racers, func(i int) error {
			if i == racers/2 {
				_, _, err := s.Commit(t.Context(), resumeClaim(r, "resume:1", "claim"))
				if err == nil {
					claims++
				}
				return err
			}
			_, _, err := s.Commit(t.Context(), recordPlan(r, int64(100+i), fmt.Sprintf("vote-%d", i)))
			if isStaleSequence(err) {
				// Out of attempts behind the other records, having written nothing (the events
				// stay dense below); the runtime's commitRecord reads the run again and retries.
				return fmt.Errorf("%w: %w", runtime.ErrGuard, err)
			}
			return err
		})
		if claims != 1 {
			t.Fatalf("round %d: the claim lost (%d winners)", round, winners)
		}
		events := countRows(t, s, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`, r.UID)
		if dense := countRows(t, s, `SELECT COALESCE(MAX(sequence), -1) + 1 FROM tx_nrllm_agentrun_event WHERE run = ?`, r.UID); events != winners || dense != events {
			t.Fatalf("round %d: %d winners, %d events, max sequence+1 %d; want one event each, dense", round, winners, events, dense)
		}
		if late := countRows(t, s, `SELECT COUNT(*) FROM tx_nrllm_agentrun_event v JOIN tx_nrllm_agentrun_event c
			ON c.run = v.run AND c.kind = ? WHERE v.run = ? AND v.kind = 'vote' AND v.sequence > c.sequence`, runtime.EventApproval, r.UID); late != 0 {
			t.Fatalf("round %d: %d records after the claim", round, late)
		}
	}
	r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
	if winners := race(t, racers, func(i int) error {
		_, _, err := s.Commit(t.Context(), recordPlan(r, int64(100+i), "same-key"))
		return err
	}); winners != 1 {
		t.Fatalf("records under one idempotency key: %d winners, want 1", winners)
	}
}

// TestCommitPlanFaults: a fault after the guard or after any write of a plan, resuming or
// recording, statement by statement, leaves nothing of it: the run as it was, no decision, no
// event, no audit row; without the fault the plan commits.
func TestCommitPlanFaults(t *testing.T) {
	s, _ := newStore(t)
	s.batches = nil
	errFault := errors.New("fault injected")
	plans := []struct {
		name   string
		writes []string
		plan   func(r runtime.Run) runtime.CommitPlan
	}{
		{"record", []string{"guard", "decision", "event", "audit vote"}, func(r runtime.Run) runtime.CommitPlan { return recordPlan(r, 9, "v1") }},
		{"resume", []string{"guard", "decision", "event", "audit approval"}, func(r runtime.Run) runtime.CommitPlan { return resumeClaim(r, "resume:1", "k1") }},
	}
	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) {
			r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
			audit := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit`)
			for _, at := range p.writes {
				var seen []string
				s.afterWrite = func(what string) error {
					seen = append(seen, what)
					if what == at {
						return errFault
					}
					return nil
				}
				if _, _, err := s.Commit(t.Context(), p.plan(r)); !errors.Is(err, errFault) {
					t.Fatalf("fault after %s: got %v (writes %q), want the fault", at, err, seen)
				}
				if got := mustFind(t, s, r.UID); !reflect.DeepEqual(got, r) {
					t.Fatalf("fault after %s changed the run:\ngot  %+v\nwant %+v", at, got, r)
				}
				for _, q := range []string{`SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`,
					`SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`} {
					if n := countRows(t, s, q, r.UID); n != 0 {
						t.Fatalf("fault after %s: %s: got %d, want 0", at, q, n)
					}
				}
				if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit`); n != audit {
					t.Fatalf("fault after %s: audit rows: got %d, want %d", at, n, audit)
				}
			}
			s.afterWrite = nil
			if _, _, err := s.Commit(t.Context(), p.plan(r)); err != nil {
				t.Fatalf("without a fault: %v", err)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_audit`); n != audit+1 {
				t.Fatalf("without a fault: audit rows: got %d, want %d", n, audit+1)
			}
		})
	}
}
