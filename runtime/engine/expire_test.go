package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/wait"
)

// waitingInputTool is an input tool with a waiting policy of its own.
type waitingInputTool struct {
	inputTool
	policy wait.Policy
}

func (t waitingInputTool) WaitPolicy() wait.Policy { return t.policy }

func withConfigWait(p wait.Policy) func(*env) {
	return func(e *env) {
		e.cfg.Wait = p
		e.saveConfig()
	}
}

// expireEnv is a test world whose configuration has the waiting policy p.
func expireEnv(t *testing.T, script []model.Turn, p wait.Policy, opts ...envOption) *env {
	t.Helper()
	e := newEnv(t, script, opts...)
	withConfigWait(p)(e)
	return e
}

func (e *env) expire() engine.ExpireReport {
	e.t.Helper()
	rep, err := e.rt.Expire(e.ctx, 100)
	if err != nil {
		e.t.Fatalf("expire: %v", err)
	}
	e.rt.Wait()
	return rep
}

// eventPayload returns the payload of the run's only event of kind, failing unless there is
// exactly one.
func (e *env) eventPayload(uuid, kind string) map[string]any {
	e.t.Helper()
	var found []map[string]any
	for _, ev := range e.events(uuid) {
		if ev.Kind == kind {
			var p map[string]any
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				e.t.Fatalf("event %s payload: %v", kind, err)
			}
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		e.t.Fatalf("%d %s events, want 1 (kinds %v)", len(found), kind, e.kinds(uuid))
	}
	return found[0]
}

// TestExpiryDenies: a pause of a configuration with `expires_after: 1h, on_expiry: deny` gets
// expires_at one hour after it began waiting; before then the expirer does nothing; at it the
// turn is denied (the model is told honestly, the tool never runs), recorded as an expiry
// event {action: deny, by: system:expiry}, a decision and an audit row; a person's late
// approval is refused as run_expired, naming the action.
func TestExpiryDenies(t *testing.T) {
	e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}},
		wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny})
	run := e.startAndRun(admin)
	if run.ExpiresAt != run.SuspendedAt+3600 || run.ExpiresAt == 0 {
		t.Fatalf("expires_at = %d, suspended_at = %d; want one hour later", run.ExpiresAt, run.SuspendedAt)
	}
	digest := e.view(run.UUID).Pause.Digest
	e.clock.Advance(59 * time.Minute)
	if rep := e.expire(); rep.Expired != 0 {
		t.Fatalf("expired before the deadline: %+v", rep)
	}
	e.clock.Advance(time.Minute)
	if rep := e.expire(); rep.Expired != 1 {
		t.Fatalf("report = %+v, want one expiry", rep)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if got := e.eventPayload(run.UUID, runtime.EventExpiry); got["action"] != "deny" || got["by"] != "system:expiry" {
		t.Fatalf("expiry event = %v", got)
	}
	if n := len(e.rec.get("send_mail")); n != 0 {
		t.Fatalf("the denied tool ran %d times", n)
	}
	dec, err := e.store.LatestDecision(e.ctx, run.UID)
	if err != nil || dec.Kind != "expiry" || dec.Approved || dec.DecidedByService != "system:expiry" {
		t.Fatalf("decision = %+v, %v", dec, err)
	}
	entries, err := db.NewAudit(e.sql, e.clock.Now).RecentAudit(e.ctx, 10)
	if err != nil || len(entries) == 0 || entries[0].Action != "expiry" || entries[0].ActorName != "system:expiry" || entries[0].Outcome != "deny" {
		t.Fatalf("audit = %+v, %v", entries, err)
	}
	_, err = e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeRunExpired || re.Expiry != "deny" || re.ExpiredAt != run.ExpiresAt {
		t.Fatalf("late approval = %#v, want run_expired (deny, at %d)", err, run.ExpiresAt)
	}
}

// TestExpiryDenialTellsTheModel: the denied call's tool result, which the model reads, says
// how long the run waited and when it was denied (the run pauses again, so its stored
// transcript shows it).
func TestExpiryDenialTellsTheModel(t *testing.T) {
	e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), turn(call("send_mail", `{}`))},
		wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Deny})
	run := e.startAndRun(admin)
	e.clock.Advance(4 * time.Hour)
	e.expire()
	again := e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	want := "No decision within 4h; denied automatically at " + e.clock.Now().UTC().Format(time.RFC3339) + "."
	if !strings.Contains(again.SuspendedState, want) {
		t.Fatalf("the model was not told %q; transcript %s", want, again.SuspendedState)
	}
	if again.ExpiresAt != again.SuspendedAt+4*3600 || again.Escalated {
		t.Fatalf("the new pause's deadline = %d (suspended %d)", again.ExpiresAt, again.SuspendedAt)
	}
}

// TestExpiryRefusesADecisionPastTheDeadline: once the deadline passed, a person's decision is
// refused as run_expired even before any expirer acted, and the run is unchanged.
func TestExpiryRefusesADecisionPastTheDeadline(t *testing.T) {
	e := expireEnv(t, []model.Turn{turn(call("ask_city", `{}`))}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Cancel})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	e.clock.Advance(time.Hour)
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Berlin"}, TurnDigest: digest})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeRunExpired || re.Expiry != "cancel" {
		t.Fatalf("late submission = %v, want run_expired (cancel)", err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
}

// TestExpiryAnswers: an input tool's `wait: {expires_after: 30m, on_expiry: answer, answer:
// {...}}` wins over the configuration's later expiry; at 30 minutes the configured answer is
// overlaid like a person's input and the tool runs with it, recorded as submitted by
// system:expiry.
func TestExpiryAnswers(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_town", `{"city":"Model"}`)), {Content: "done"}})
	e.tools = append(e.tools, waitingInputTool{
		inputTool: inputTool{baseTool: baseTool{name: "ask_town", rec: e.rec}, schema: func() json.RawMessage { return json.RawMessage(citySchema) }},
		policy:    wait.Policy{ExpiresAfter: 30 * time.Minute, OnExpiry: wait.Answer, Answer: json.RawMessage(`{"city":"Nowhere"}`)},
	})
	e.cfg.Tools = append(e.cfg.Tools, "ask_town")
	withConfigWait(wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Deny})(e)
	e.rt = engine.New(engine.Config{Store: e.store, Catalog: e.store, Tools: e.tools, Now: e.clock.Now, Lease: time.Minute, Workers: 4})
	t.Cleanup(e.rt.Close)
	run := e.startAndRun(admin)
	if run.ExpiresAt != run.SuspendedAt+1800 {
		t.Fatalf("expires_at = %d, want suspended_at %d + 30m", run.ExpiresAt, run.SuspendedAt)
	}
	e.clock.Advance(30 * time.Minute)
	if rep := e.expire(); rep.Expired != 1 {
		t.Fatalf("report = %+v", rep)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	got := e.rec.get("ask_town")
	if len(got) != 1 || !strings.Contains(string(got[0]), `"city":"Nowhere"`) {
		t.Fatalf("the input tool ran with %s", got)
	}
	if p := e.eventPayload(run.UUID, runtime.EventExpiry); p["action"] != "answer" || p["by"] != "system:expiry" || len(p) != 2 {
		t.Fatalf("expiry event = %v, want {action: answer, by: system:expiry} and no values", p)
	}
	dec, err := e.store.LatestDecision(e.ctx, run.UID)
	if err != nil || dec.Kind != "expiry" || dec.DecidedByService != "system:expiry" {
		t.Fatalf("decision = %+v, %v", dec, err)
	}
}

// TestExpiryCancels: on_expiry cancel cancels the run with reason expired, in one transition
// with its expiry event and decision; a late submission is refused as run_expired.
func TestExpiryCancels(t *testing.T) {
	e := expireEnv(t, []model.Turn{turn(call("ask_city", `{}`))}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Cancel})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	e.clock.Advance(2 * time.Hour)
	if rep := e.expire(); rep.Expired != 1 {
		t.Fatalf("report = %+v", rep)
	}
	got := e.wantStatus(run.UUID, runtime.StatusCancelled)
	if got.TerminationReason != runtime.ReasonExpired {
		t.Fatalf("termination reason = %q, want expired", got.TerminationReason)
	}
	if p := e.eventPayload(run.UUID, runtime.EventExpiry); p["action"] != "cancel" || p["by"] != "system:expiry" {
		t.Fatalf("expiry event = %v", p)
	}
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Berlin"}, TurnDigest: digest})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeRunExpired || re.Expiry != "cancel" {
		t.Fatalf("late submission = %v, want run_expired (cancel)", err)
	}
	if rep := e.expire(); rep != (engine.ExpireReport{}) {
		t.Fatalf("a second pass found %+v", rep)
	}
}

// stepCounter is an engine.Observer that counts what it is told and keeps each time to
// decision as "kind configuration decided_by seconds".
type stepCounter struct {
	mu                     sync.Mutex
	expiries               map[string]int
	reminders, escalations int
	decided                []string
	counted                []string
}

func (c *stepCounter) ObserveTimeToDecision(kind, configuration, decidedBy string, seconds float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.decided = append(c.decided, fmt.Sprintf("%s %s %s %g", kind, configuration, decidedBy, seconds))
}

func (c *stepCounter) ObserveDecision(kind, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counted = append(c.counted, kind+"/"+outcome)
}

func (c *stepCounter) countedDecisions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.counted)
}

func (c *stepCounter) decisions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.decided)
}

func (c *stepCounter) ObserveExpiry(action string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expiries == nil {
		c.expiries = map[string]int{}
	}
	c.expiries[action]++
}

func (c *stepCounter) ObserveReminder() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reminders++
}

func (c *stepCounter) ObserveEscalation() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.escalations++
}

// TestExpiryRemindsEscalatesThenActs: remind_after 30m records one reminder; escalate_after
// 1h marks the pause escalated (once); at expires_after 2h after_escalation (cancel) applies;
// the observer counts each step once.
func TestExpiryRemindsEscalatesThenActs(t *testing.T) {
	counted := &stepCounter{}
	e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, wait.Policy{ExpiresAfter: 2 * time.Hour, OnExpiry: wait.Escalate,
		RemindAfter: 30 * time.Minute, EscalateAfter: time.Hour, AfterEscalation: wait.Cancel},
		func(_ *env, c *engine.Config) { c.Observer = counted })
	run := e.startAndRun(admin)
	e.clock.Advance(30 * time.Minute)
	if rep := e.expire(); rep != (engine.ExpireReport{Reminded: 1}) {
		t.Fatalf("at 30m: %+v", rep)
	}
	if rep := e.expire(); rep != (engine.ExpireReport{}) {
		t.Fatalf("again at 30m: %+v", rep)
	}
	e.clock.Advance(30 * time.Minute)
	if rep := e.expire(); rep != (engine.ExpireReport{Escalated: 1}) {
		t.Fatalf("at 1h: %+v", rep)
	}
	if got := e.run(run.UUID); !got.Escalated || got.Status != runtime.StatusWaitingApproval {
		t.Fatalf("after escalation: escalated=%v status=%s", got.Escalated, got.Status)
	}
	if v := e.view(run.UUID); !v.Run.Escalated || v.Run.ExpiresAt != run.ExpiresAt {
		t.Fatalf("view: escalated=%v expires_at=%d", v.Run.Escalated, v.Run.ExpiresAt)
	}
	e.clock.Advance(time.Hour)
	if rep := e.expire(); rep != (engine.ExpireReport{Expired: 1}) {
		t.Fatalf("at 2h: %+v", rep)
	}
	e.wantStatus(run.UUID, runtime.StatusCancelled)
	if counted.reminders != 1 || counted.escalations != 1 || counted.expiries["cancel"] != 1 || len(counted.expiries) != 1 {
		t.Fatalf("observed %+v", counted)
	}
	e.eventPayload(run.UUID, runtime.EventReminder)
	e.eventPayload(run.UUID, runtime.EventEscalation)
	if p := e.eventPayload(run.UUID, runtime.EventExpiry); p["action"] != "cancel" {
		t.Fatalf("expiry = %v", p)
	}
}

// TestExpiryOfAWriteOnlyDenies: a pause of a tool that declares a write is denied on expiry
// even when the policy says answer (the floor).
func TestExpiryOfAWriteOnlyDenies(t *testing.T) {
	e := expireEnv(t, []model.Turn{turn(call("tag_order", `{}`)), {Content: "done"}},
		wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Answer, Answer: json.RawMessage(`{"city":"X"}`)})
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	e.clock.Advance(time.Hour)
	if rep := e.expire(); rep.Expired != 1 {
		t.Fatalf("report = %+v", rep)
	}
	if p := e.eventPayload(run.UUID, runtime.EventExpiry); p["action"] != "deny" {
		t.Fatalf("expiry = %v", p)
	}
	if n := len(e.rec.get("tag_order")); n != 0 {
		t.Fatalf("the write ran %d times", n)
	}
}

// processes are n runtimes on e's database, each with a store on its own connection pool and
// its own clock, as n processes have.
func (e *env) processes(n int, now func() time.Time) []*engine.Runtime {
	e.t.Helper()
	out := make([]*engine.Runtime, n)
	for i := range out {
		pool, err := db.Open(e.ctx, e.dsn)
		if err != nil {
			e.t.Fatalf("open: %v", err)
		}
		e.t.Cleanup(func() { pool.Close() })
		store := db.New(pool)
		out[i] = engine.New(engine.Config{Store: store, Catalog: store, Tools: e.tools, Now: now, Lease: time.Minute, Workers: 4})
		e.t.Cleanup(out[i].Close)
	}
	return out
}

// TestThreeExpirersExpireEachPauseOnce: three processes' expirers run passes at once over the
// same 20 due pauses (deny and cancel policies); every pause is expired exactly once: one
// expiry event and one decision each, and the three reports add up to 20.
func TestThreeExpirersExpireEachPauseOnce(t *testing.T) {
	for _, action := range []wait.Action{wait.Deny, wait.Cancel} {
		t.Run(string(action), func(t *testing.T) {
			e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: action})
			const runs = 20
			uuids := make([]string, runs)
			for i := range uuids {
				uuids[i] = e.startAndRun(admin).UUID
			}
			e.clock.Advance(time.Hour)
			procs := e.processes(3, e.clock.Now)
			reps := make([]engine.ExpireReport, len(procs))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, p := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for range 3 {
						rep, err := p.Expire(e.ctx, 100)
						if err != nil {
							t.Errorf("process %d: %v", i, err)
							return
						}
						reps[i].Expired += rep.Expired
						reps[i].Skipped += rep.Skipped
					}
				}()
			}
			close(start)
			wg.Wait()
			for _, p := range procs {
				p.Wait()
			}
			total := 0
			for _, r := range reps {
				total += r.Expired
			}
			if total != runs {
				t.Fatalf("expiries reported = %d (%+v), want %d", total, reps, runs)
			}
			for _, uuid := range uuids {
				e.eventPayload(uuid, runtime.EventExpiry)
				if st := e.run(uuid).Status; st.Waiting() {
					t.Fatalf("run %s still %s", uuid, st)
				}
			}
		})
	}
}

// TestDecisionRacingExpiry: a person's approval (in a process whose clock is a second behind)
// and an expiry race on each of 10 pauses; exactly one wins each, and a losing approval is
// refused as run_expired, a losing expiry skipped.
func TestDecisionRacingExpiry(t *testing.T) {
	e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny})
	const runs = 10
	uuids := make([]string, runs)
	digests := make([]string, runs)
	for i := range uuids {
		uuids[i] = e.startAndRun(admin).UUID
		digests[i] = e.view(uuids[i]).Pause.Digest
	}
	e.clock.Advance(time.Hour)
	behind := func() time.Time { return e.clock.Now().Add(-time.Second) }
	person := e.processes(1, behind)[0]
	expirer := e.processes(1, e.clock.Now)[0]
	var wg sync.WaitGroup
	approved := make([]error, runs)
	var rep engine.ExpireReport
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		var err error
		if rep, err = expirer.Expire(e.ctx, 100); err != nil {
			t.Errorf("expire: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		<-start
		for i := range uuids {
			_, approved[i] = person.Approve(e.ctx, reviewer, uuids[i], runtime.ApprovalDecision{Approved: true, TurnDigest: digests[i]})
		}
	}()
	close(start)
	wg.Wait()
	person.Wait()
	expirer.Wait()
	wins := rep.Expired
	for i, err := range approved {
		var re *runtime.Error
		switch {
		case err == nil:
			wins++
		case errors.As(err, &re) && re.Code == runtime.CodeRunExpired:
		default:
			t.Fatalf("approval %d: %v, want success or run_expired", i, err)
		}
		expiries := 0
		for _, k := range e.kinds(uuids[i]) {
			if k == runtime.EventExpiry || k == runtime.EventApproval {
				expiries++
			}
		}
		if expiries != 1 {
			t.Fatalf("run %d has %d decisions recorded (kinds %v), want 1", i, expiries, e.kinds(uuids[i]))
		}
	}
	if wins != runs {
		t.Fatalf("winners = %d (expired %d, skipped %d), want %d", wins, rep.Expired, rep.Skipped, runs)
	}
}

// TestDeadlineStepsNotify: every step of a pause's deadline writes its notifications with it,
// carrying the deadline: waiting (at suspend, with expires_at), reminder, escalated, and
// expired for the expiry that denies (a claim of kind expiry) as for one that cancels.
func TestDeadlineStepsNotify(t *testing.T) {
	policy := wait.Policy{ExpiresAfter: 2 * time.Hour, OnExpiry: wait.Escalate,
		RemindAfter: 30 * time.Minute, EscalateAfter: time.Hour, AfterEscalation: wait.Deny}
	e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, policy)
	e.cfg.Notify = []runtime.NotifyRule{{Events: runtime.NotifyEvents(), Channel: "webhook", URL: "https://hooks.example/desk"}}
	e.saveConfig()
	run := e.startAndRun(admin)
	for _, step := range []time.Duration{30 * time.Minute, 30 * time.Minute, time.Hour} {
		e.clock.Advance(step)
		e.expire()
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	ns, err := e.store.RunNotifications(e.ctx, run.UID, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[runtime.NotifyEvent]runtime.Notification{}
	for _, n := range ns {
		got[n.Event] = n
	}
	for _, ev := range []runtime.NotifyEvent{runtime.NotifyWaiting, runtime.NotifyReminder, runtime.NotifyEscalated, runtime.NotifyExpired} {
		n, ok := got[ev]
		if !ok {
			t.Fatalf("no %s notification among %d: %+v", ev, len(ns), ns)
		}
		if n.ExpiresAt != run.ExpiresAt || run.ExpiresAt == 0 {
			t.Errorf("%s notification expires_at %d, want the pause's %d", ev, n.ExpiresAt, run.ExpiresAt)
		}
	}
	if _, ok := got[runtime.NotifyDecided]; ok {
		t.Error("the expiry's claim was notified as a decision")
	}
}

// TestWaitPolicyIsPinned: a tool whose wait policy changed while its run waited is a changed
// definition: the decision bound to the pinned one is refused as tool_changed.
func TestWaitPolicyIsPinned(t *testing.T) {
	ask := waitingInputTool{inputTool: inputTool{baseTool: baseTool{name: "ask_when"}, schema: func() json.RawMessage { return json.RawMessage(citySchema) }},
		policy: wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny}}
	var live *waitingInputTool = &ask
	e := newEnv(t, []model.Turn{turn(call("ask_when", `{}`)), {Content: "done"}}, func(e *env, c *engine.Config) {
		c.Tools = append(c.Tools, waitingTool{live})
	})
	e.cfg.Tools = append(e.cfg.Tools, "ask_when")
	e.saveConfig()
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	digest := e.view(run.UUID).Pause.Digest
	live.policy = wait.Policy{ExpiresAfter: 2 * time.Hour, OnExpiry: wait.Deny}
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Berlin"}, TurnDigest: digest})
	var rerr *runtime.Error
	if !errors.As(err, &rerr) || rerr.Code != runtime.CodeToolChanged {
		t.Fatalf("submit after the wait policy changed: %v; want tool_changed", err)
	}
}

// waitingTool is a tool whose wait policy the test changes while a run waits.
type waitingTool struct{ *waitingInputTool }

func (w waitingTool) WaitPolicy() wait.Policy { return w.policy }

// TestWaitingNotificationKnowsAnAdminOnlyTool: the waiting notification of a pause says
// whether its tool is admin-only as the runtime's registry has it, for a tool registered in
// process (no stored definition) as for the others.
func TestWaitingNotificationKnowsAnAdminOnlyTool(t *testing.T) {
	for _, c := range []struct {
		tool  string
		admin bool
	}{{"issue_refund", true}, {"send_mail", false}} {
		t.Run(c.tool, func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call(c.tool, `{}`))})
			e.cfg.Notify = []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: "webhook", URL: "https://hooks.example/desk"}}
			e.saveConfig()
			run := e.startAndRun(admin)
			e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			ns, err := e.store.RunNotifications(e.ctx, run.UID, 10)
			if err != nil || len(ns) != 1 {
				t.Fatalf("notifications %+v, %v; want the waiting one", ns, err)
			}
			if ns[0].Tool != c.tool || ns[0].AdminOnly != c.admin {
				t.Fatalf("waiting notification: tool %q admin-only %v, want %q %v", ns[0].Tool, ns[0].AdminOnly, c.tool, c.admin)
			}
		})
	}
}
