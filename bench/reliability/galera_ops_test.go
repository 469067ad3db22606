package reliability

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/app"
	"runsdesk/db"
	"runsdesk/notify"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// expiringDesk stores, through pool, the tool notify (an approval) and one configuration per
// expiry action of actions, each pausing for notify's approval, expiring an hour later with
// that action and notifying two rules of the expiry.
func expiringDesk(t *testing.T, pool *sql.DB, actions []wait.Action) {
	t.Helper()
	rules := []runtime.NotifyRule{
		{Events: []runtime.NotifyEvent{runtime.NotifyExpired}, Channel: runtime.ChannelWebhook, URL: "https://hooks.example/a", SecretEnv: "A"},
		{Events: []runtime.NotifyEvent{runtime.NotifyExpired}, Channel: runtime.ChannelSlack, WebhookURLEnv: "B"},
	}
	script := []model.Turn{{ToolCalls: []model.ScriptedCall{{Name: "notify", Arguments: json.RawMessage(`{"order_id":"A-1"}`)}}}, {Content: "Done."}}
	var cfgs []runtime.Configuration
	for _, a := range actions {
		cfgs = append(cfgs, runtime.Configuration{Identifier: "expire-" + string(a), Name: "Expire " + string(a), MaxIterations: 5,
			Provider: model.Settings{Kind: model.KindScripted, Script: script}, Tools: []string{"notify"},
			Wait: wait.Policy{ExpiresAfter: time.Hour, OnExpiry: a}, Notify: rules})
	}
	if _, err := db.New(pool).UpsertCatalog(t.Context(), []tool.Definition{{Name: "notify", Description: "Tell the customer.",
		Parameters: json.RawMessage(`{"type":"object"}`), RequiresApproval: true,
		HTTP: tool.HTTPConfig{URL: "http://127.0.0.1:9/notify", Timeout: time.Second}}}, cfgs); err != nil {
		t.Fatal(err)
	}
}

// TestGaleraExpirersOnEveryNode: 30 pauses fall due at once (half denied, half cancelled on
// expiry) with an expirer on each of the 3 nodes running its passes at the same moment:
// every pause is expired exactly once, with one expiry event, one decision and one `expired`
// notification per rule.
func TestGaleraExpirersOnEveryNode(t *testing.T) {
	ctx := t.Context()
	pools := poolPerNode(t)
	actions := []wait.Action{wait.Deny, wait.Cancel}
	expiringDesk(t, pools[0], actions)
	starter := app.NewRuntime(app.Config{DB: pools[0]})
	t.Cleanup(starter.Close)
	const runs = 30
	ada := runtime.Actor{UserUID: 1, Name: adminName, Role: runtime.RoleAdmin}
	for i := range runs {
		if _, err := starter.Start(ctx, ada, "expire-"+string(actions[i%len(actions)]), "tell the customer"); err != nil {
			t.Fatal(err)
		}
	}
	for {
		ran, err := starter.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ran {
			break
		}
	}
	starter.Wait()
	if n := countOf(t, pools[0], `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status = 'waiting_for_approval' AND expires_at > 0`); n != runs {
		t.Fatalf("%d runs wait with a deadline, want %d", n, runs)
	}

	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	expirers := make([]*engine.Runtime, len(pools))
	for i, p := range pools {
		expirers[i] = app.NewRuntime(app.Config{DB: p, Now: later})
		t.Cleanup(expirers[i].Close)
	}
	reports := make([]engine.ExpireReport, len(expirers))
	var ready, wg sync.WaitGroup
	ready.Add(1)
	for i, rt := range expirers {
		wg.Go(func() {
			ready.Wait()
			for range 3 {
				rep, err := rt.Expire(ctx, 2*runs)
				if err != nil {
					t.Errorf("expirer on node %d: %v", i+1, err)
					return
				}
				reports[i].Expired += rep.Expired
				reports[i].Skipped += rep.Skipped
			}
		})
	}
	ready.Done()
	wg.Wait()
	for _, rt := range expirers {
		rt.Wait()
	}
	expired := 0
	for i, rep := range reports {
		t.Logf("node %d: expired %d, skipped %d", i+1, rep.Expired, rep.Skipped)
		expired += rep.Expired
	}
	if expired != runs {
		t.Errorf("the expirers on %d nodes together expired %d pauses, want %d (each once)", len(expirers), expired, runs)
	}
	pool := pools[0]
	for _, c := range []struct {
		what, query string
		want        int
	}{
		{"runs still waiting", `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status IN ('waiting_for_approval', 'waiting_for_input')`, 0},
		{"runs cancelled on expiry", `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status = 'cancelled'`, runs / 2},
		{"runs with other than one expiry event", `SELECT COUNT(*) FROM tx_nrllm_agentrun a WHERE (SELECT COUNT(*) FROM tx_nrllm_agentrun_event e
			WHERE e.run = a.uid AND e.kind = 'expiry') <> 1`, 0},
		{"runs with other than one decision", `SELECT COUNT(*) FROM tx_nrllm_agentrun a WHERE (SELECT COUNT(*) FROM tx_runsdesk_decision d
			WHERE d.run = a.uid) <> 1`, 0},
		{"runs without one expired notification per rule", `SELECT COUNT(*) FROM tx_nrllm_agentrun a WHERE (SELECT COUNT(*) FROM tx_runsdesk_outbox o
			WHERE o.run = a.uid AND o.event = 'expired') <> 2 OR (SELECT COUNT(DISTINCT o.channel) FROM tx_runsdesk_outbox o
			WHERE o.run = a.uid AND o.event = 'expired') <> 2`, 0},
		{"expiry events", `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE kind = 'expiry'`, runs},
	} {
		if n := settledCount(t, pool, c.query, c.want); n != c.want {
			t.Errorf("%s: %d, want %d", c.what, n, c.want)
		}
	}
}

// hookLog is a webhook receiver that records the webhook-id of every delivery and answers
// 500 to the first delivery of every third id, so that notification is redelivered.
type hookLog struct {
	mu  sync.Mutex
	got map[string]int
	ok  map[string]int
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("webhook-id")
	h.mu.Lock()
	h.got[id]++
	refuse := h.got[id] == 1 && len(h.got)%3 == 0
	if !refuse {
		h.ok[id]++
	}
	h.mu.Unlock()
	if refuse {
		w.WriteHeader(http.StatusInternalServerError)
	}
}

func (h *hookLog) counts() (got, ok map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	got, ok = map[string]int{}, map[string]int{}
	for k, v := range h.got {
		got[k] = v
	}
	for k, v := range h.ok {
		ok[k] = v
	}
	return got, ok
}

// TestGaleraDispatchersOnEveryNode: a notification dispatcher on each of the 3 nodes drains
// one outbox: every notification is received at least once, each under one webhook-id (a
// redelivery after a failed attempt reuses it), and the distinct ids are the notifications.
func TestGaleraDispatchersOnEveryNode(t *testing.T) {
	ctx := t.Context()
	pools := poolPerNode(t)
	hooks := &hookLog{got: map[string]int{}, ok: map[string]int{}}
	srv := httptest.NewServer(hooks)
	t.Cleanup(srv.Close)
	store := db.New(pools[0])
	if _, err := store.UpsertCatalog(ctx, nil, []runtime.Configuration{{Identifier: "notify", Name: "Notify",
		Provider: model.Settings{Kind: model.KindScripted}, Notify: []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyWaiting},
			Channel: runtime.ChannelWebhook, URL: srv.URL + "/hook", SecretEnv: "HOOK_SECRET"}}}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := store.ConfigurationByIdentifier(ctx, "notify")
	if err != nil {
		t.Fatal(err)
	}
	const runs = 45
	now := time.Now().Unix()
	for range runs {
		r, err := store.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: cfg.UID, ConfigurationIdentifier: "notify",
			QueuedRequest: `{}`, Lease: runtime.Lease{Owner: "w", Expires: now + 60, Now: now}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Suspend(ctx, r.UID, "w", runtime.Suspension{Status: runtime.StatusWaitingInput, State: `{}`, Tools: []string{"ask"}}, now); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]bool{}
	ns, err := store.Notifications(ctx, false, 2*runs)
	if err != nil || len(ns) != runs {
		t.Fatalf("outbox: %d rows, %v; want %d", len(ns), err, runs)
	}
	for _, n := range ns {
		ids[n.MessageID()] = true
	}

	dctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, p := range pools {
		d := notify.New(notify.Config{Outbox: db.New(p), Getenv: func(string) string { return "secret" },
			Interval: 50 * time.Millisecond, Timeout: 5 * time.Second, Backoff: 100 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
		wg.Go(func() { _ = d.Run(dctx) })
	}
	deadline := time.Now().Add(90 * time.Second)
	for countOf(t, pools[0], `SELECT COUNT(*) FROM tx_runsdesk_outbox WHERE state = 'sent'`) < runs && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	wg.Wait()
	got, ok := hooks.counts()
	redelivered := 0
	for id, n := range got {
		if !ids[id] {
			t.Errorf("a delivery under %q, the id of no notification", id)
		}
		if n > 1 {
			redelivered++
		}
	}
	for id := range ids {
		if ok[id] == 0 {
			t.Errorf("notification %s never received", id)
		}
	}
	if len(got) != runs || redelivered == 0 {
		t.Errorf("%d distinct webhook-ids received for %d notifications, %d redelivered (want some)", len(got), runs, redelivered)
	}
	if n := countOf(t, pools[0], `SELECT COUNT(*) FROM tx_runsdesk_outbox WHERE state = 'sent'`); n != runs {
		t.Errorf("%d notifications sent, want %d", n, runs)
	}
	t.Logf("%d notifications, %d deliveries, %d redelivered after a failed attempt", runs, total(got), redelivered)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// settledCount is countOf query on pool, read again for up to 10 s until it is want: a node
// applies the writes another node committed a moment after the commit returns there.
func settledCount(t *testing.T, pool *sql.DB, query string, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := countOf(t, pool, query)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}
