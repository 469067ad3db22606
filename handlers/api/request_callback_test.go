package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/notify"
	"runsdesk/runtime"
)

// callbackSecret is the secret the "hooks" configuration signs its callbacks with, in the
// variable callbackEnv.
const (
	callbackSecret = "whsec_" + "c2VjcmV0LW9mLXRoZS1ob29rcy1jb25maWd1cmF0aW9u"
	callbackEnv    = "HOOKS_CALLBACK_SECRET"
)

// callbackWorld is externalWorld plus the external configuration "hooks", which takes
// requests for send_mail and ask_city from ci-request with callbacks to 127.0.0.1.
func callbackWorld(t *testing.T) (*world, string) {
	t.Helper()
	w, token := externalWorld(t)
	cfg := runtime.Configuration{Identifier: "hooks", Name: "hooks", MaxIterations: 1, Tools: []string{"send_mail", "ask_city"},
		External: &runtime.ExternalPolicy{Callers: []string{"ci-request"}, CallbackHosts: []string{"127.0.0.1"}, CallbackSecretEnv: callbackEnv}}
	if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return w, token
}

// receiver is the caller's callback endpoint: it records every request and answers the
// statuses it is given in turn, then 200.
type receiver struct {
	mu       sync.Mutex
	got      []received
	statuses []int
	srv      *httptest.Server
}

// received is one callback as the receiver got it.
type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	rc := &receiver{statuses: statuses}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), body})
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status, rc.statuses = rc.statuses[0], rc.statuses[1:]
		}
		rc.mu.Unlock()
		rw.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// verified checks r's Standard Webhooks signature with secret as a receiver would, from the
// specification alone, and returns its webhook-id.
func verified(t *testing.T, secret string, r received) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	id, ts := r.header.Get("webhook-id"), r.header.Get("webhook-timestamp")
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil || id == "" {
		t.Fatalf("webhook-id %q, webhook-timestamp %q", id, ts)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(r.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got := r.header.Get("webhook-signature"); !hmac.Equal([]byte(got), []byte(want)) {
		t.Fatalf("webhook-signature %q, want %q", got, want)
	}
	return id
}

// testClock is a dispatcher's settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// dispatcher is a notification dispatcher of w's outbox (or of outbox, when not nil) reading
// callbacks' answers from w's runtime, with env as its environment and clk as its clock.
func (w *world) dispatcher(clk *testClock, env map[string]string, outbox notify.Outbox) *notify.Dispatcher {
	if outbox == nil {
		outbox = w.store
	}
	return notify.New(notify.Config{Outbox: outbox, Answers: w.rt, Getenv: func(k string) string { return env[k] },
		Now: clk.Now, Timeout: 5 * time.Second, Backoff: 10 * time.Second, MaxAttempts: 5})
}

// pass runs one dispatcher pass, which must claim want rows.
func pass(t *testing.T, d *notify.Dispatcher, want int) {
	t.Helper()
	n, err := d.Pass(context.Background())
	if err != nil || n != want {
		t.Fatalf("pass claimed %d (%v), want %d", n, err, want)
	}
}

// createCallbackRequest creates a request in "hooks" with body fields and returns its id.
func (w *world) createCallbackRequest(token string, fields map[string]any) string {
	w.t.Helper()
	body := map[string]any{"configuration": "hooks", "kind": "approval", "tool": "send_mail", "arguments": map[string]any{"to": "ops@example.com"}}
	for k, v := range fields {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return decode[runBody](w.t, w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: string(b)}), http.StatusCreated).UUID
}

// ended waits until request uuid's run is terminal (its decision's continuation ended it).
func (w *world) ended(uuid string) {
	w.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !w.run(uuid).Status.Terminal(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			w.t.Fatalf("request %s did not end: %s", uuid, w.run(uuid).Status)
		}
	}
}

// callbacks are the outbox rows of run uuid's callbacks.
func (w *world) callbacks(uuid string) []runtime.Notification {
	w.t.Helper()
	ns, err := w.store.RunNotifications(w.ctx, w.run(uuid).UID, 100)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []runtime.Notification
	for _, n := range ns {
		if n.Rule.Channel == runtime.ChannelCallback {
			out = append(out, n)
		}
	}
	return out
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestRequestCallbackDelivered: a request with a callback_url, once a person approves it, is
// POSTed its answer — the same JSON GET /requests/:id answers, with id and external_id —
// signed per Standard Webhooks with the configuration's secret; a receiver that answers 503,
// then 404, gets it again after the backoff under the same webhook-id, each failure recorded
// on the outbox row, until it takes it.
func TestRequestCallbackDelivered(t *testing.T) {
	w, token := callbackWorld(t)
	rc := newReceiver(t, http.StatusServiceUnavailable, http.StatusNotFound)
	id := w.createCallbackRequest(token, map[string]any{"external_id": "ticket-31", "callback_url": rc.srv.URL + "/decided?ticket=31"})
	pass(t, w.dispatcher(&testClock{now: time.Now()}, map[string]string{callbackEnv: callbackSecret}, nil), 0)
	w.decide(id, true, "fine by me")
	w.ended(id)

	// The clock starts once the run has ended: the callback is due from the second it ended in.
	clk := &testClock{now: time.Now()}
	d := w.dispatcher(clk, map[string]string{callbackEnv: callbackSecret}, nil)
	pass(t, d, 1)
	rows := w.callbacks(id)
	if len(rows) != 1 || rows[0].State != runtime.NotificationPending || rows[0].Attempts != 1 || !strings.Contains(rows[0].LastError, "503") {
		t.Fatalf("after a 503 the callback rows are %+v, want one pending after 1 attempt naming 503", rows)
	}
	clk.Add(time.Hour)
	pass(t, d, 1)
	if rows = w.callbacks(id); rows[0].State != runtime.NotificationPending || !strings.Contains(rows[0].LastError, "404") {
		t.Fatalf("after a 404 the callback row is %+v, want pending naming 404 (a 4xx is retried)", rows[0])
	}
	clk.Add(time.Hour)
	pass(t, d, 1)
	if rows = w.callbacks(id); rows[0].State != runtime.NotificationSent || rows[0].Attempts != 3 {
		t.Fatalf("after a 200 the callback row is %+v, want sent after 3 attempts", rows[0])
	}

	got := rc.requests()
	if len(got) != 3 {
		t.Fatalf("the receiver got %d callbacks, want 3", len(got))
	}
	first := verified(t, callbackSecret, got[0])
	for i, r := range got {
		if wid := verified(t, callbackSecret, r); wid != first {
			t.Errorf("callback %d has webhook-id %q, the first %q", i, wid, first)
		}
		if !sameJSON(t, r.body, got[0].body) {
			t.Errorf("callback %d body %s, the first %s", i, r.body, got[0].body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("callback %d Content-Type %q", i, ct)
		}
	}
	answer := w.do(request{method: http.MethodGet, path: "/api/v1/requests/" + id, token: token})
	if !sameJSON(t, got[0].body, answer.body) {
		t.Errorf("callback body %s, GET /requests/:id answers %s", got[0].body, answer.body)
	}
	var body answerBody
	if err := json.Unmarshal(got[0].body, &body); err != nil || body.ID != id || body.ExternalID != "ticket-31" || body.Status != "approved" ||
		body.Decision == nil || !body.Decision.Approved || body.Decision.Reason != "fine by me" || body.Decision.DecidedBy != 1 {
		t.Errorf("callback body %s (%v)", got[0].body, err)
	}
}

// TestRequestCallbackCarriesValues: an answered question's callback carries the values the
// person gave, read when it is sent: the outbox row holds none of them.
func TestRequestCallbackCarriesValues(t *testing.T) {
	w, token := callbackWorld(t)
	rc := newReceiver(t)
	id := w.createCallbackRequest(token, map[string]any{"kind": "input", "tool": "ask_city", "arguments": map[string]any{},
		"callback_url": rc.srv.URL + "/answered"})
	ada := runtime.Actor{UserUID: 1, Name: "ada", Role: runtime.RoleAdmin}
	view, err := w.rt.Get(w.ctx, ada, id)
	if err != nil || view.Pause == nil {
		t.Fatalf("read request %s: %v", id, err)
	}
	const city = "Valparaíso-Quillota"
	if _, err := w.rt.SubmitInput(w.ctx, ada, id, runtime.InputSubmission{Data: map[string]any{"city": city}, TurnDigest: view.Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	w.ended(id)
	var row string
	if err := w.sql.QueryRowContext(w.ctx, `SELECT CONCAT_WS('|', uid, run, run_uuid, event, channel, target, run_status, kind, tool,
		configuration_identifier, configuration_name, state, last_error, subject, termination_reason) FROM tx_runsdesk_outbox
		WHERE run = ? AND channel = 'callback'`, w.run(id).UID).Scan(&row); err != nil {
		t.Fatalf("the callback's outbox row: %v", err)
	}
	if strings.Contains(row, city) || !strings.Contains(row, "/answered") {
		t.Fatalf("the outbox row %q holds the value, or not the callback_url", row)
	}
	pass(t, w.dispatcher(&testClock{now: time.Now()}, map[string]string{callbackEnv: callbackSecret}, nil), 1)
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d callbacks, want 1", len(got))
	}
	verified(t, callbackSecret, got[0])
	var body answerBody
	if err := json.Unmarshal(got[0].body, &body); err != nil || body.Status != "answered" || body.Decision == nil || body.Decision.Values["city"] != city {
		t.Fatalf("callback body %s (%v), want the answer with city %q", got[0].body, err, city)
	}
}

// TestRequestCallbackWithdrawn: a withdrawn request's callback says it was cancelled; a
// dispatcher whose environment lacks the secret's variable blocks the row, sends nothing and
// leaves it to one that has it.
func TestRequestCallbackWithdrawn(t *testing.T) {
	w, token := callbackWorld(t)
	rc := newReceiver(t)
	id := w.createCallbackRequest(token, map[string]any{"callback_url": rc.srv.URL + "/withdrawn"})
	decode[answerBody](t, w.do(request{method: http.MethodDelete, path: "/api/v1/requests/" + id, token: token}), http.StatusOK)
	clk := &testClock{now: time.Now()}
	pass(t, w.dispatcher(clk, nil, nil), 0)
	if rows := w.callbacks(id); len(rows) != 1 || rows[0].State != runtime.NotificationBlocked || !strings.Contains(rows[0].LastError, callbackEnv) ||
		strings.Contains(rows[0].LastError, callbackSecret) || len(rc.requests()) != 0 {
		t.Fatalf("callback rows without the secret %+v, %d sent; want one blocked naming %s", rows, len(rc.requests()), callbackEnv)
	}
	pass(t, w.dispatcher(clk, map[string]string{callbackEnv: callbackSecret}, nil), 1)
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d callbacks, want 1", len(got))
	}
	verified(t, callbackSecret, got[0])
	var body answerBody
	if err := json.Unmarshal(got[0].body, &body); err != nil || body.ID != id || body.Status != "cancelled" || body.Decision != nil {
		t.Fatalf("callback body %s (%v), want cancelled without a decision", got[0].body, err)
	}
}

// failingSent is an outbox whose first NotificationSent fails, as a store error after the
// send would.
type failingSent struct {
	notify.Outbox
	failed atomic.Bool
}

func (f *failingSent) NotificationSent(ctx context.Context, uid int64, owner string, now int64) error {
	if f.failed.CompareAndSwap(false, true) {
		return errors.New("injected: the store failed after the send")
	}
	return f.Outbox.NotificationSent(ctx, uid, owner, now)
}

// TestRequestCallbackOutcomeLost: when the store fails to record a delivered callback, the
// row stays claimed, and once the claim lapses the callback is sent again under the same
// webhook-id and recorded (at least once; the receiver tells repeats by the id).
func TestRequestCallbackOutcomeLost(t *testing.T) {
	w, token := callbackWorld(t)
	rc := newReceiver(t)
	id := w.createCallbackRequest(token, map[string]any{"callback_url": rc.srv.URL + "/decided"})
	w.decide(id, false, "not today")
	w.ended(id)
	clk := &testClock{now: time.Now()}
	d := w.dispatcher(clk, map[string]string{callbackEnv: callbackSecret}, &failingSent{Outbox: w.store})
	pass(t, d, 1)
	if rows := w.callbacks(id); len(rows) != 1 || rows[0].State != runtime.NotificationSending || len(rc.requests()) != 1 {
		t.Fatalf("after a lost outcome: rows %+v, %d sent; want one still sending, sent once", rows, len(rc.requests()))
	}
	pass(t, d, 0)
	clk.Add(time.Minute)
	pass(t, d, 1)
	if rows := w.callbacks(id); rows[0].State != runtime.NotificationSent || rows[0].Attempts != 2 {
		t.Fatalf("after the claim lapsed: %+v, want sent after 2 attempts", rows[0])
	}
	got := rc.requests()
	if len(got) != 2 || verified(t, callbackSecret, got[0]) != verified(t, callbackSecret, got[1]) || !sameJSON(t, got[0].body, got[1].body) {
		t.Fatalf("the receiver got %d callbacks, want the same one twice", len(got))
	}
	var body answerBody
	if err := json.Unmarshal(got[1].body, &body); err != nil || body.Status != "denied" || body.Decision == nil || body.Decision.Reason != "not today" {
		t.Fatalf("callback body %s (%v)", got[1].body, err)
	}
}

// TestRequestCallbackRefused: a callback_url to another host, with credentials, or not http(s)
// is 422 callback_not_allowed; any callback_url to a configuration without
// callback_secret_env is 422 callbacks_not_enabled; nothing is stored for them. The
// callback_url is part of what a replay must repeat: under a used external_id a different
// one is 409 external_id_conflict, the same one answers the run created.
func TestRequestCallbackRefused(t *testing.T) {
	w, token := callbackWorld(t)
	post := func(body map[string]any) response {
		b, _ := json.Marshal(body)
		return w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: string(b)})
	}
	ask := func(configuration, callbackURL string) map[string]any {
		return map[string]any{"configuration": configuration, "kind": "approval", "tool": "send_mail", "callback_url": callbackURL}
	}
	for _, u := range []string{
		"https://example.com/hook", "http://127.0.0.2/hook", "http://user:pass@127.0.0.1/hook", "http://user@127.0.0.1/hook",
		"ftp://127.0.0.1/hook", "javascript:alert(1)", "/relative/hook", "127.0.0.1/hook", "http://127.0.0.1.example.com/",
		"https://127.0.0.1/" + strings.Repeat("a", runtime.MaxCallbackURLBytes),
	} {
		res := post(ask("hooks", u))
		wantError(t, res, http.StatusUnprocessableEntity, "callback_not_allowed")
		if strings.Contains(string(res.body), "pass") {
			t.Errorf("the refusal of %q repeats the URL: %s", u, res.body)
		}
	}
	wantError(t, post(ask("desk", "http://127.0.0.1/hook")), http.StatusUnprocessableEntity, "callbacks_not_enabled")
	var n int
	if err := w.sql.QueryRowContext(w.ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d runs stored (%v) after refusals, want 0", n, err)
	}

	first := ask("hooks", "http://127.0.0.1:8443/hook")
	first["external_id"] = "ticket-40"
	created := decode[runBody](t, post(first), http.StatusCreated)
	if again := decode[runBody](t, post(first), http.StatusCreated); again.UUID != created.UUID {
		t.Errorf("the same request again created %s, want %s", again.UUID, created.UUID)
	}
	upper := ask("hooks", "HTTPS://127.0.0.1/other")
	upper["external_id"] = "ticket-40"
	wantError(t, post(upper), http.StatusConflict, "external_id_conflict")
	delete(first, "callback_url")
	wantError(t, post(first), http.StatusConflict, "external_id_conflict")
}

// TestRequestCallbackClaimedOnce: of 8 dispatchers passing at once over one due callback,
// exactly one claims and sends it.
func TestRequestCallbackClaimedOnce(t *testing.T) {
	w, token := callbackWorld(t)
	rc := newReceiver(t)
	id := w.createCallbackRequest(token, map[string]any{"callback_url": rc.srv.URL + "/once"})
	decode[answerBody](t, w.do(request{method: http.MethodDelete, path: "/api/v1/requests/" + id, token: token}), http.StatusOK)
	clk := &testClock{now: time.Now()}
	var claimed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		d := w.dispatcher(clk, map[string]string{callbackEnv: callbackSecret}, nil)
		wg.Go(func() {
			n, err := d.Pass(context.Background())
			if err != nil {
				t.Error(err)
			}
			claimed.Add(int64(n))
		})
	}
	wg.Wait()
	if rows := w.callbacks(id); claimed.Load() != 1 || len(rc.requests()) != 1 || rows[0].State != runtime.NotificationSent || rows[0].Attempts != 1 {
		t.Fatalf("%d claims, %d sent, rows %+v; want one claim, one send, sent after 1 attempt", claimed.Load(), len(rc.requests()), rows)
	}
}
