package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// deadlineRun returns a run paused at `at` with deadline d.
func deadlineRun(t *testing.T, s *Store, at int64, d wait.Deadline) runtime.Run {
	t.Helper()
	r := runningRun(t, s, "w:1")
	sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: `{"messages":[]}`, Deadline: &d}
	if err := s.Suspend(context.Background(), r.UID, "w:1", sp, at); err != nil {
		t.Fatalf("Suspend: %v", err)
	}
	return mustFind(t, s, r.UID)
}

// dueUIDs are the uids of the runs FindDue returns at now (at most 100).
func dueUIDs(t *testing.T, s *Store, now int64) []int64 {
	t.Helper()
	runs, err := s.FindDue(t.Context(), now, 100)
	if err != nil {
		t.Fatal(err)
	}
	return uids(runs)
}

func step(r runtime.Run, now, due int64, kind string) runtime.PauseStep {
	return runtime.PauseStep{Read: r, Now: now, Due: due,
		Event: runtime.NewEvent{Run: r.UID, Kind: kind, Payload: []byte(`{"by":"system:expiry"}`)},
		Audit: &runtime.AuditRecord{Actor: runtime.ExpiryActor(), AuditNote: runtime.AuditNote{Action: kind}}}
}

// TestDeadlineTransitions: Suspend stores the deadline; FindDue returns exactly the waiting
// runs whose next step is due; RemindPause, EscalatePause and ExpirePause each succeed once
// for the pause as read (a second try, or a try on a pause decided meanwhile, is ErrGuard and
// writes nothing) and commit their event, audit row and (expiry) decision with them.
func TestDeadlineTransitions(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	d := wait.Deadline{ExpiresAt: t0 + 400, RemindAt: t0 + 100, EscalateAt: t0 + 200, Action: wait.Escalate, AfterEscalation: wait.Cancel}
	r := deadlineRun(t, s, t0, d)
	if r.ExpiresAt != t0+400 || r.RemindAt != t0+100 || r.EscalateAt != t0+200 || r.Escalated {
		t.Fatalf("stored deadline = %d/%d/%d escalated=%v", r.ExpiresAt, r.RemindAt, r.EscalateAt, r.Escalated)
	}
	if got, err := wait.DecodeDeadline(r.WaitPolicy); err != nil || got.Action != wait.Escalate || got.AfterEscalation != wait.Cancel {
		t.Fatalf("stored actions = %+v, %v", got, err)
	}
	never := waitingRun(t, s, runtime.StatusWaitingInput, t0)
	finished := deadlineRun(t, s, t0, wait.Deadline{ExpiresAt: t0 + 1, Action: wait.Deny})
	if err := s.Cancel(ctx, finished.UID, t0+1); err != nil {
		t.Fatal(err)
	}
	due := func(now int64) []int64 { return dueUIDs(t, s, now) }
	if got := due(t0 + 99); len(got) != 0 {
		t.Fatalf("due before the reminder: %v", got)
	}
	if got := due(t0 + 100); !slices.Equal(got, []int64{r.UID}) {
		t.Fatalf("due at the reminder: %v, want only %d (not %d, %d)", got, r.UID, never.UID, finished.UID)
	}
	if err := s.RemindPause(ctx, step(r, t0+100, t0+200, runtime.EventReminder)); err != nil {
		t.Fatalf("RemindPause: %v", err)
	}
	wantGuard(t, s.RemindPause(ctx, step(r, t0+100, t0+200, runtime.EventReminder)))
	if got := due(t0 + 150); len(got) != 0 {
		t.Fatalf("due after the reminder: %v", got)
	}
	wantGuard(t, s.EscalatePause(ctx, step(r, t0+150, t0+400, runtime.EventEscalation)))
	if err := s.EscalatePause(ctx, step(r, t0+200, t0+400, runtime.EventEscalation)); err != nil {
		t.Fatalf("EscalatePause: %v", err)
	}
	wantGuard(t, s.EscalatePause(ctx, step(r, t0+200, t0+400, runtime.EventEscalation)))
	if got := mustFind(t, s, r.UID); !got.Escalated || got.RemindAt != 0 {
		t.Fatalf("after escalation: %+v", got)
	}
	expire := step(r, t0+400, 0, runtime.EventExpiry)
	expire.Decision = &runtime.Decision{IdempotencyKey: "expiry:cancel:1", Kind: "expiry", DecidedByService: "system:expiry"}
	early := expire
	early.Now = t0 + 399
	wantGuard(t, s.ExpirePause(ctx, early))
	if err := s.ExpirePause(ctx, expire); err != nil {
		t.Fatalf("ExpirePause: %v", err)
	}
	wantGuard(t, s.ExpirePause(ctx, expire))
	got := mustFind(t, s, r.UID)
	if got.Status != runtime.StatusCancelled || got.TerminationReason != runtime.ReasonExpired || got.SuspendedState != "" {
		t.Fatalf("after expiry: status %s reason %q", got.Status, got.TerminationReason)
	}
	dec, err := s.LatestDecision(ctx, r.UID)
	if err != nil || dec.Kind != "expiry" || dec.DecidedByService != "system:expiry" {
		t.Fatalf("decision = %+v, %v", dec, err)
	}
	evs, err := s.Events(ctx, r.UID, -1)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds, []string{runtime.EventReminder, runtime.EventEscalation, runtime.EventExpiry}) {
		t.Fatalf("events = %v", kinds)
	}
	var audits int
	if err := pool.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_audit WHERE actor_name = 'system:expiry' AND run_uuid = ?`, r.UUID).Scan(&audits); err != nil || audits != 3 {
		t.Fatalf("audit rows = %d, %v; want 3", audits, err)
	}
	if err := s.ExpirePause(ctx, runtime.PauseStep{Read: never, Now: t0 + 1000}); err == nil || errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("ExpirePause without a decision = %v, want a refusal", err)
	}
}

// TestWaitPolicyRoundTrip: the `wait:` of a configuration and of a tool are stored and read
// back as written; a stored policy naming an unknown action is refused, not guessed.
func TestWaitPolicyRoundTrip(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	toolWait := wait.Policy{ExpiresAfter: 30 * time.Minute, OnExpiry: wait.Answer, Answer: json.RawMessage(`{"amount":0}`)}
	cfgWait := wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Escalate, EscalateAfter: 2 * time.Hour, RemindAfter: time.Hour}
	if _, err := s.UpsertTool(ctx, tool.Definition{Name: "ask", HTTP: tool.HTTPConfig{URL: "http://x/"}, Wait: toolWait}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertConfiguration(ctx, runtime.Configuration{Identifier: "c", Name: "C", Wait: cfgWait}); err != nil {
		t.Fatal(err)
	}
	defs, err := s.ToolDefinitions(ctx)
	if err != nil || len(defs) != 1 || defs[0].Wait.ExpiresAfter != toolWait.ExpiresAfter || string(defs[0].Wait.Answer) != `{"amount":0}` {
		t.Fatalf("tool = %+v, %v", defs, err)
	}
	c, err := s.ConfigurationByIdentifier(ctx, "c")
	if err != nil || c.Wait.OnExpiry != wait.Escalate || c.Wait.EscalateAfter != 2*time.Hour || c.Wait.RemindAfter != time.Hour {
		t.Fatalf("configuration = %+v, %v", c.Wait, err)
	}
	if wrote, err := s.UpsertConfiguration(ctx, runtime.Configuration{Identifier: "c", Name: "C", Wait: cfgWait}); err != nil || wrote {
		t.Fatalf("the same policy again wrote=%v err=%v", wrote, err)
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_configuration SET wait_policy = '{"expires_after":1,"on_expiry":"approve"}'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConfigurationByIdentifier(ctx, "c"); err == nil {
		t.Fatal("a stored approve policy was read")
	}
}

// elicitationRun returns a run paused for input at `at` on a remote server's request for input
// expiring at expires (the state says so too), with deadline d when not nil.
func elicitationRun(t *testing.T, s *Store, at, expires int64, d *wait.Deadline) runtime.Run {
	t.Helper()
	r := runningRun(t, s, "w:1")
	state := fmt.Sprintf(`{"messages":[],"elicitation":{"requestId":"q","message":"Proceed?","expiresAt":%d}}`, expires)
	sp := runtime.Suspension{Status: runtime.StatusWaitingInput, State: state, Deadline: d, ElicitationExpires: expires}
	if err := s.Suspend(context.Background(), r.UID, "w:1", sp, at); err != nil {
		t.Fatalf("Suspend: %v", err)
	}
	return mustFind(t, s, r.UID)
}

// TestElicitationExpiryIsADeadlineStep: Suspend stores a remote request's expiry and counts it
// in wait_due, so FindDue returns an expired request however many input pauses waited longer
// (here 110), and only once it expired; with a deadline of its own, the earlier step is due first.
func TestElicitationExpiryIsADeadlineStep(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for i := range 110 {
		waitingRun(t, s, runtime.StatusWaitingInput, t0-1000+int64(i), "ask")
	}
	alone := elicitationRun(t, s, t0, t0+60, nil)
	withDeadline := elicitationRun(t, s, t0, t0+300, &wait.Deadline{ExpiresAt: t0 + 400, RemindAt: t0 + 100, Action: wait.Deny})
	if alone.ElicitationExpires != t0+60 || withDeadline.ElicitationExpires != t0+300 {
		t.Fatalf("stored expiries %d, %d", alone.ElicitationExpires, withDeadline.ElicitationExpires)
	}
	due := func(now int64) []int64 { return dueUIDs(t, s, now) }
	if got := due(t0 + 59); len(got) != 0 {
		t.Fatalf("due before any step: %v", got)
	}
	if got := due(t0 + 60); !slices.Equal(got, []int64{alone.UID}) {
		t.Fatalf("due at the request's expiry: %v, want %d", got, alone.UID)
	}
	if got := due(t0 + 100); !slices.Equal(got, []int64{alone.UID, withDeadline.UID}) {
		t.Fatalf("due at the reminder: %v", got)
	}
	if err := s.RemindPause(ctx, step(withDeadline, t0+100, t0+300, runtime.EventReminder)); err != nil {
		t.Fatalf("RemindPause: %v", err)
	}
	if got := due(t0 + 299); !slices.Equal(got, []int64{alone.UID}) {
		t.Fatalf("due after the reminder: %v", got)
	}
	if got := due(t0 + 300); !slices.Equal(got, []int64{alone.UID, withDeadline.UID}) {
		t.Fatalf("due at the second request's expiry: %v", got)
	}
}

// TestMigrationBackfillsElicitationExpiry: migration 0030 gives an elicitation pause stored in
// clear text before it its request's expiry, counted in wait_due; other rows keep theirs.
func TestMigrationBackfillsElicitationExpiry(t *testing.T) {
	dsn := newDatabase(t)
	ctx := t.Context()
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	s := New(pool)
	old := elicitationRun(t, s, t0, t0+60, &wait.Deadline{ExpiresAt: t0 + 400, Action: wait.Deny})
	plain := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET elicitation_expires = 0, wait_due = ? WHERE uid = ?`, t0+400, old.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = 30`); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	for _, c := range []struct {
		uid              int64
		expires, waitDue int64
	}{{old.UID, t0 + 60, t0 + 60}, {plain.UID, 0, 0}} {
		var expires, waitDue int64
		if err := pool.QueryRowContext(ctx, `SELECT elicitation_expires, wait_due FROM tx_nrllm_agentrun WHERE uid = ?`, c.uid).Scan(&expires, &waitDue); err != nil {
			t.Fatal(err)
		}
		if expires != c.expires || waitDue != c.waitDue {
			t.Errorf("run %d: elicitation_expires %d, wait_due %d; want %d, %d", c.uid, expires, waitDue, c.expires, c.waitDue)
		}
	}
}
