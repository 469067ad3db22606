package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

var testRules = []runtime.NotifyRule{
	{Events: runtime.NotifyEvents(), Channel: runtime.ChannelWebhook, URL: "https://hooks.example/desk", SecretEnv: "DESK_HOOK_SECRET"},
	{Events: []runtime.NotifyEvent{runtime.NotifyWaiting, runtime.NotifyEscalated}, Channel: runtime.ChannelEmail, To: []string{"finance@example.com"}},
	{Events: []runtime.NotifyEvent{runtime.NotifyDecided}, Channel: runtime.ChannelSlack, WebhookURLEnv: "SLACK_WEBHOOK_URL"},
}

// notifyConfiguration stores configuration "refunds" with rules (and the admin-only tool
// issue_refund) and returns its uid.
func notifyConfiguration(t *testing.T, s *Store, rules []runtime.NotifyRule) int64 {
	t.Helper()
	if _, err := s.UpsertCatalog(t.Context(), []tool.Definition{{Name: "issue_refund", AdminOnly: true,
		Parameters: []byte(`{"type":"object"}`)}}, []runtime.Configuration{{Identifier: "refunds", Name: "Refund assistant",
		Provider: model.Settings{Kind: model.KindScripted}, RequireSecondApprover: true, Tools: []string{"issue_refund"}, Notify: rules}}); err != nil {
		t.Fatalf("UpsertCatalog: %v", err)
	}
	c, err := s.ConfigurationByIdentifier(t.Context(), "refunds")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Notify, rules) {
		t.Fatalf("stored rules:\ngot  %+v\nwant %+v", c.Notify, rules)
	}
	return c.UID
}

func runOf(t *testing.T, s *Store, cfg int64) runtime.Run {
	t.Helper()
	return mustCreate(t, s, runtime.NewRun{ConfigurationUID: cfg, ConfigurationIdentifier: "refunds",
		BeUser: 7, QueuedRequest: `{"prompt":"hi"}`, Lease: lease("w:1", t0), Now: t0})
}

// waitingRuns creates n runs of cfg waiting for approval since t0, which write their
// waiting notifications.
func waitingRuns(t *testing.T, s *Store, cfg int64, n int) {
	t.Helper()
	for range n {
		r := runOf(t, s, cfg)
		if err := s.Suspend(t.Context(), r.UID, "w:1", runtime.Suspension{Status: runtime.StatusWaitingApproval,
			State: `{"messages":[]}`, Tools: []string{"x"}}, t0); err != nil {
			t.Fatal(err)
		}
	}
}

func outboxOf(t *testing.T, s *Store, run int64) []runtime.Notification {
	t.Helper()
	ns, err := s.RunNotifications(t.Context(), run, 100)
	if err != nil {
		t.Fatalf("RunNotifications: %v", err)
	}
	return ns
}

func channels(ns []runtime.Notification) []string {
	var out []string
	for _, n := range ns {
		out = append(out, string(n.Event)+"/"+n.Rule.Channel)
	}
	return out
}

// TestSuspendAndClaimWriteNotifications: the suspend writes one pending row per rule
// subscribed to waiting, the decision claim one per rule subscribed to decided, each
// describing the pause (kind, tool, who may act, times) and carrying its rule; a run of a
// configuration without rules gets none.
func TestSuspendAndClaimWriteNotifications(t *testing.T) {
	s, _ := newStore(t)
	cfg := notifyConfiguration(t, s, testRules)
	r := runOf(t, s, cfg)
	sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: `{"messages":[]}`, Tools: []string{"issue_refund"}}
	if err := s.Suspend(t.Context(), r.UID, "w:1", sp, t0+5); err != nil {
		t.Fatalf("Suspend: %v", err)
	}
	got := outboxOf(t, s, r.UID)
	if want := []string{"waiting/webhook", "waiting/email"}; !slices.Equal(channels(got), want) {
		t.Fatalf("after suspend: %v, want %v", channels(got), want)
	}
	want := runtime.Notification{UID: got[0].UID, Run: r.UID, RunUUID: r.UUID, Event: runtime.NotifyWaiting, Rule: testRules[0],
		Status: runtime.StatusWaitingApproval, Kind: "approval", Tool: "issue_refund", ConfigurationIdentifier: "refunds",
		ConfigurationName: "Refund assistant", AdminOnly: true, FourEyes: true, WaitingSince: t0 + 5, OccurredAt: t0 + 5,
		State: runtime.NotificationPending, DueAt: t0 + 5}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("waiting row:\ngot  %+v\nwant %+v", got[0], want)
	}

	paused := mustFind(t, s, r.UID)
	if _, _, err := s.Commit(t.Context(), resumeClaim(paused, "resume:1", "k1")); err != nil {
		t.Fatalf("ClaimForResume: %v", err)
	}
	got = outboxOf(t, s, r.UID)
	if want := []string{"waiting/webhook", "waiting/email", "decided/webhook", "decided/slack"}; !slices.Equal(channels(got), want) {
		t.Fatalf("after claim: %v, want %v", channels(got), want)
	}
	if d := got[2]; d.Status != runtime.StatusRunning || d.Kind != "approval" || d.Tool != "issue_refund" || d.WaitingSince != t0+5 || d.OccurredAt != now1 {
		t.Fatalf("decided row: %+v", d)
	}

	if _, err := s.UpsertConfiguration(t.Context(), runtime.Configuration{Identifier: "plain", Name: "Plain",
		Provider: model.Settings{Kind: model.KindScripted}}); err != nil {
		t.Fatal(err)
	}
	other, err := s.ConfigurationByIdentifier(t.Context(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	plain := runOf(t, s, other.UID)
	if err := s.Suspend(t.Context(), plain.UID, "w:1", sp, t0+5); err != nil {
		t.Fatal(err)
	}
	if got := outboxOf(t, s, plain.UID); len(got) != 0 {
		t.Fatalf("a run of a configuration without rules got notifications: %v", channels(got))
	}
}

// TestClaimNotifiesTheRulesTheDecisionRead: a claim given the configuration its decision
// read writes the notifications of that configuration's rules and names (nothing is read
// again), and one whose configuration has no rule writes none.
func TestClaimNotifiesTheRulesTheDecisionRead(t *testing.T) {
	s, _ := newStore(t)
	cfg := notifyConfiguration(t, s, testRules)
	sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: `{"messages":[]}`, Tools: []string{"issue_refund"}}
	claimWith := func(read *runtime.Configuration) []runtime.Notification {
		t.Helper()
		r := runOf(t, s, cfg)
		if err := s.Suspend(t.Context(), r.UID, "w:1", sp, t0+5); err != nil {
			t.Fatal(err)
		}
		c := resumeClaim(mustFind(t, s, r.UID), "resume:1", "k1")
		c.Configuration = read
		if _, _, err := s.Commit(t.Context(), c); err != nil {
			t.Fatalf("ClaimForResume: %v", err)
		}
		return outboxOf(t, s, r.UID)[2:]
	}
	read := runtime.Configuration{Identifier: "refunds", Name: "Refunds as read", RequireSecondApprover: true,
		Notify: []runtime.NotifyRule{testRules[2]}}
	got := claimWith(&read)
	if want := []string{"decided/slack"}; !slices.Equal(channels(got), want) {
		t.Fatalf("claim with the read configuration: %v, want %v", channels(got), want)
	}
	if got[0].ConfigurationName != "Refunds as read" || got[0].Rule.WebhookURLEnv != "SLACK_WEBHOOK_URL" {
		t.Fatalf("decided row: %+v", got[0])
	}
	read.Notify = nil
	if got := claimWith(&read); len(got) != 0 {
		t.Fatalf("a configuration read without rules got %v", channels(got))
	}
}

// TestSuspendNotifiesTheRulesTheSegmentRuns: a suspend given the configuration its segment
// runs writes the waiting notifications of that configuration's rules and names, and one
// whose configuration has no rule writes none.
func TestSuspendNotifiesTheRulesTheSegmentRuns(t *testing.T) {
	s, _ := newStore(t)
	cfg := notifyConfiguration(t, s, testRules)
	suspendWith := func(runs *runtime.Configuration) []runtime.Notification {
		t.Helper()
		r := runOf(t, s, cfg)
		sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: `{"messages":[]}`, Tools: []string{"issue_refund"},
			Configuration: runs}
		if err := s.Suspend(t.Context(), r.UID, "w:1", sp, t0+5); err != nil {
			t.Fatalf("Suspend: %v", err)
		}
		got := outboxOf(t, s, r.UID)
		for _, n := range got {
			if n.RunUUID != r.UUID {
				t.Fatalf("notification of run %s, want %s", n.RunUUID, r.UUID)
			}
		}
		return got
	}
	runs := runtime.Configuration{Identifier: "refunds", Name: "Refunds as run", Notify: []runtime.NotifyRule{testRules[1]}}
	got := suspendWith(&runs)
	if want := []string{"waiting/email"}; !slices.Equal(channels(got), want) {
		t.Fatalf("suspend with the segment's configuration: %v, want %v", channels(got), want)
	}
	if got[0].ConfigurationName != "Refunds as run" || got[0].FourEyes {
		t.Fatalf("waiting row: %+v", got[0])
	}
	runs.Notify = nil
	if got := suspendWith(&runs); len(got) != 0 {
		t.Fatalf("a configuration run without rules got %v", channels(got))
	}
}

// TestNotificationsOnlyForWhatCommitted: a suspend or claim whose guard misses, and a claim
// rolled back after its notifications were written (a replayed decision key), leave no row.
func TestNotificationsOnlyForWhatCommitted(t *testing.T) {
	s, _ := newStore(t)
	cfg := notifyConfiguration(t, s, testRules)
	r := runOf(t, s, cfg)
	sp := runtime.Suspension{Status: runtime.StatusWaitingInput, State: `{"messages":[]}`, Tools: []string{"ask"}}
	wantGuard(t, s.Suspend(t.Context(), r.UID, "someone-else", sp, t0+5))
	if got := outboxOf(t, s, r.UID); len(got) != 0 {
		t.Fatalf("refused suspend left %v", channels(got))
	}
	if err := s.Suspend(t.Context(), r.UID, "w:1", sp, t0+5); err != nil {
		t.Fatal(err)
	}
	paused := mustFind(t, s, r.UID)
	stale := paused
	stale.SuspendedAt++
	_, _, err := s.Commit(t.Context(), resumeClaim(stale, "resume:1", "k1"))
	wantGuard(t, err)
	// A decision already stored under the key fails the claim after its UPDATE and enqueue.
	if _, err := s.db.Exec(sqlInsertDecision, decisionArgs(r, runtime.Decision{IdempotencyKey: "k1", Kind: "input", DecidedBy: 1}, t0, "", "")...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Commit(t.Context(), resumeClaim(paused, "resume:1", "k1")); !errors.Is(err, ErrDuplicateDecision) {
		t.Fatalf("got %v, want ErrDuplicateDecision", err)
	}
	if got := channels(outboxOf(t, s, r.UID)); !slices.Equal(got, []string{"waiting/webhook", "waiting/email"}) {
		t.Fatalf("rows after refused claims: %v", got)
	}
}

// TestEnqueueEveryEvent: enqueueNotifications, called in a transaction as the expiry steps
// call it, writes each event's rows, and a rolled-back transaction writes none.
func TestEnqueueEveryEvent(t *testing.T) {
	s, _ := newStore(t)
	cfg := notifyConfiguration(t, s, testRules)
	r := runOf(t, s, cfg)
	for _, e := range []runtime.NotifyEvent{runtime.NotifyReminder, runtime.NotifyEscalated, runtime.NotifyExpired} {
		err := s.inTx(t.Context(), nil, func(tx *sql.Tx) error {
			return enqueueNotifications(t.Context(), tx, r.UID, notice{Event: e, Status: runtime.StatusWaitingInput,
				Pause: runtime.StatusWaitingInput, Tool: "ask", WaitingSince: t0, ExpiresAt: t0 + 3600, Now: t0 + 60}, nil)
		})
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
	}
	rollback := errors.New("roll back")
	err := s.inTx(t.Context(), nil, func(tx *sql.Tx) error {
		if err := enqueueNotifications(t.Context(), tx, r.UID, notice{Event: runtime.NotifyExpired, Now: t0}, nil); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	got := outboxOf(t, s, r.UID)
	if want := []string{"reminder/webhook", "escalated/webhook", "escalated/email", "expired/webhook"}; !slices.Equal(channels(got), want) {
		t.Fatalf("rows: %v, want %v", channels(got), want)
	}
	if got[0].ExpiresAt != t0+3600 || got[0].Kind != "input" || got[0].FourEyes {
		t.Fatalf("reminder row: %+v", got[0])
	}
}

// TestClaimNotificationsRace: dispatchers racing for the same due rows claim each exactly
// once; a live claim is not taken again, a lapsed one is; outcomes are guarded by the claim.
func TestClaimNotificationsRace(t *testing.T) {
	s, _ := newStore(t)
	const runs = 12
	waitingRuns(t, s, notifyConfiguration(t, s, testRules), runs)
	const dispatchers = 6
	claimed := make([][]runtime.Notification, dispatchers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range dispatchers {
		wg.Go(func() {
			<-start
			ns, err := s.ClaimNotifications(context.Background(), fmt.Sprintf("d%d", i), t0+1, t0+31, 100, runtime.NotifyReach{})
			if err != nil {
				t.Errorf("dispatcher %d: %v", i, err)
			}
			claimed[i] = ns
		})
	}
	close(start)
	wg.Wait()
	seen := map[int64]string{}
	for i, ns := range claimed {
		for _, n := range ns {
			if other, dup := seen[n.UID]; dup {
				t.Fatalf("notification %d claimed by %s and d%d", n.UID, other, i)
			}
			seen[n.UID] = fmt.Sprintf("d%d", i)
			if n.State != runtime.NotificationSending || n.Attempts != 1 || n.DueAt != t0+31 {
				t.Fatalf("claimed row: %+v", n)
			}
		}
	}
	if len(seen) != 2*runs {
		t.Fatalf("%d rows claimed, want %d", len(seen), 2*runs)
	}
	if again, err := s.ClaimNotifications(t.Context(), "late", t0+30, t0+60, 100, runtime.NotifyReach{}); err != nil || len(again) != 0 {
		t.Fatalf("live claims taken again: %d rows, %v", len(again), err)
	}
	var one runtime.Notification
	var owner string
	for i, ns := range claimed {
		if len(ns) > 0 {
			one, owner = ns[0], fmt.Sprintf("d%d", i)
			break
		}
	}
	wantGuard(t, s.NotificationSent(t.Context(), one.UID, "not-the-owner", t0+2))
	if err := s.NotificationRetry(t.Context(), one.UID, owner, t0+100, "the endpoint answered 503", t0+2); err != nil {
		t.Fatal(err)
	}
	lapsed, err := s.ClaimNotifications(t.Context(), "reaper", t0+40, t0+70, 100, runtime.NotifyReach{})
	if err != nil || len(lapsed) != 2*runs-1 {
		t.Fatalf("lapsed claims: %d rows, %v; want %d", len(lapsed), err, 2*runs-1)
	}
	retaken := lapsed[0]
	wantGuard(t, s.NotificationSent(t.Context(), retaken.UID, seen[retaken.UID], t0+41))
	if retaken.Attempts != 2 {
		t.Fatalf("a retaken row counts %d attempts, want 2", retaken.Attempts)
	}
	if err := s.NotificationSent(t.Context(), retaken.UID, "reaper", t0+41); err != nil {
		t.Fatal(err)
	}
	if err := s.NotificationFailed(t.Context(), lapsed[1].UID, "reaper", "the endpoint answered 410 Gone", t0+41); err != nil {
		t.Fatal(err)
	}
	failed, err := s.Notifications(t.Context(), true, 10)
	if err != nil || len(failed) != 1 || failed[0].UID != lapsed[1].UID || failed[0].LastError != "the endpoint answered 410 Gone" {
		t.Fatalf("failed list: %+v, %v", failed, err)
	}
	retried, err := s.RunNotifications(t.Context(), one.Run, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range retried {
		if n.UID == one.UID && (n.State != runtime.NotificationPending || n.DueAt != t0+100 || n.LastError != "the endpoint answered 503") {
			t.Fatalf("retried row: %+v", n)
		}
	}
	at, ok, err := s.OldestUndelivered(t.Context())
	if err != nil || !ok || at != t0 {
		t.Fatalf("OldestUndelivered: %d %v %v, want %d", at, ok, err, t0)
	}
}

// channelSlots are delivery slots per channel, at most per in flight each; they count what
// was taken and given back. before, when set, runs at the first Take.
type channelSlots struct {
	per         int
	held, given map[string]int
	before      func()
}

func (c *channelSlots) Take(r runtime.NotifyRule) bool {
	if c.before != nil {
		c.before()
		c.before = nil
	}
	if c.held[r.Channel] >= c.per {
		return false
	}
	c.held[r.Channel]++
	return true
}

func (c *channelSlots) Give(r runtime.NotifyRule) { c.held[r.Channel]--; c.given[r.Channel]++ }

// TestClaimNotificationsSlots: a claim takes a slot for each row it claims; a row whose slot
// is refused, or whose rule is skipped, is left as it was (pending, no attempt spent); a row
// another dispatcher took first gives its slot back.
func TestClaimNotificationsSlots(t *testing.T) {
	s, _ := newStore(t)
	const runs = 5
	waitingRuns(t, s, notifyConfiguration(t, s, testRules), runs)
	slots := &channelSlots{per: 2, held: map[string]int{}, given: map[string]int{}}
	got, err := s.ClaimNotifications(t.Context(), "d1", t0+1, t0+31, 100, runtime.NotifyReach{Slots: slots})
	if err != nil || len(got) != 4 || slots.held["webhook"] != 2 || slots.held["email"] != 2 || len(slots.given) != 0 {
		t.Fatalf("claimed %d rows (want 4), slots %+v, %v", len(got), slots, err)
	}
	skipped, err := s.ClaimNotifications(t.Context(), "d2", t0+1, t0+31, 100, runtime.NotifyReach{Skip: testRules[:1]})
	if err != nil || len(skipped) != runs-2 {
		t.Fatalf("with webhooks skipped claimed %d rows (want %d), %v", len(skipped), runs-2, err)
	}
	for _, n := range skipped {
		if n.Rule.Channel != runtime.ChannelEmail {
			t.Fatalf("a skipped rule's row was claimed: %+v", n)
		}
	}
	all, err := s.Notifications(t.Context(), false, 100)
	if err != nil {
		t.Fatal(err)
	}
	pending := 0
	for _, n := range all {
		if n.State == runtime.NotificationPending {
			pending++
			if n.Attempts != 0 || n.Rule.Channel != runtime.ChannelWebhook {
				t.Fatalf("a row left unclaimed: %+v", n)
			}
		}
	}
	if pending != runs-2 {
		t.Fatalf("%d webhook rows left pending, want %d", pending, runs-2)
	}
	var stolen []runtime.Notification
	lost := &channelSlots{per: 10, held: map[string]int{}, given: map[string]int{}, before: func() {
		stolen, err = s.ClaimNotifications(t.Context(), "thief", t0+1, t0+31, 100, runtime.NotifyReach{})
	}}
	if got, err := s.ClaimNotifications(t.Context(), "d3", t0+1, t0+31, 100, runtime.NotifyReach{Slots: lost}); err != nil || len(got) != 0 {
		t.Fatalf("rows taken first by another claimed again: %d, %v", len(got), err)
	}
	if err != nil || len(stolen) != runs-2 || lost.held["webhook"] != 0 || lost.given["webhook"] != runs-2 {
		t.Fatalf("stolen %d rows (%v), slots %+v: want each lost row's slot given back", len(stolen), err, lost)
	}
}
