package notify_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/notify"
	"runsdesk/runtime"
)

// received is one request an endpoint got.
type received struct {
	header http.Header
	body   []byte
}

// endpoint is an httptest server recording requests and answering status.
type endpoint struct {
	mu     sync.Mutex
	got    []received
	status int
	srv    *httptest.Server
}

func newEndpoint(t *testing.T, status int) *endpoint {
	e := &endpoint{status: status}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got = append(e.got, received{r.Header.Clone(), body})
		status := e.status
		e.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) requests() []received {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]received(nil), e.got...)
}

// verify checks a Standard Webhooks signature as a receiver would, from the spec alone.
func verify(t *testing.T, secret string, r received) {
	t.Helper()
	key := []byte(secret)
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(rest); err != nil {
			t.Fatal(err)
		}
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
}

// TestWebhookSignedDelivery: a waiting run's webhook arrives once, signed per Standard
// Webhooks (a whsec_ secret is base64 after its prefix, any other secret is its bytes), with
// the documented body and the deep link; the row is then sent.
func TestWebhookSignedDelivery(t *testing.T) {
	for _, secret := range []string{"whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")), "plain shared secret"} {
		t.Run(secret[:5], func(t *testing.T) {
			ep := newEndpoint(t, http.StatusNoContent)
			d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
				URL: ep.srv.URL + "/hook", SecretEnv: "DESK_HOOK_SECRET"})
			run := d.wait(t)
			clk := &clock{now: t0.Add(2 * time.Second)}
			obs := &counter{}
			if n, err := d.dispatcher(clk, map[string]string{"DESK_HOOK_SECRET": secret}, obs, nil).Pass(t.Context()); err != nil || n != 1 {
				t.Fatalf("Pass: %d, %v", n, err)
			}
			reqs := ep.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			verify(t, secret, reqs[0])
			if got := reqs[0].header.Get("webhook-timestamp"); got != strconv.FormatInt(clk.Now().Unix(), 10) {
				t.Fatalf("webhook-timestamp %s, want the send time", got)
			}
			var body map[string]any
			if err := json.Unmarshal(reqs[0].body, &body); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"type": "run.waiting", "timestamp": "2027-01-15T08:00:00Z", "data": map[string]any{
				"run": run.UUID, "status": "waiting_for_input", "configuration": "refunds", "tool": "ask_refund_amount",
				"kind": "input", "waiting_since": "2027-01-15T08:00:00Z", "expires_at": nil,
				"url": "https://desk.example/runs/" + run.UUID}}
			if !reflect.DeepEqual(body, want) {
				t.Fatalf("body:\ngot  %v\nwant %v", body, want)
			}
			ns := d.notifications(t, run.UID)
			if ns[0].State != runtime.NotificationSent || ns[0].SentAt != clk.Now().Unix() || obs.get("sent") != 1 {
				t.Fatalf("after delivery: %+v, sent counted %d", ns[0], obs.get("sent"))
			}
			if reqs[0].header.Get("webhook-id") != ns[0].MessageID() {
				t.Fatalf("webhook-id %q, want %q", reqs[0].header.Get("webhook-id"), ns[0].MessageID())
			}
		})
	}
}

// TestWebhookRetriesThenFails: an endpoint answering 500 is retried with backoff (not before
// it is due), with the same webhook-id and body, until the attempts are spent; the row is then
// failed with the reason, and each outcome is counted.
func TestWebhookRetriesThenFails(t *testing.T) {
	ep := newEndpoint(t, http.StatusInternalServerError)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
		URL: ep.srv.URL, SecretEnv: "S"})
	run := d.wait(t)
	clk := &clock{now: t0}
	obs := &counter{}
	disp := d.dispatcher(clk, map[string]string{"S": "secret"}, obs, nil)
	pass := func(want int) {
		t.Helper()
		if n, err := disp.Pass(t.Context()); err != nil || n != want {
			t.Fatalf("Pass at +%s: claimed %d, %v; want %d", clk.Now().Sub(t0), n, err, want)
		}
	}
	pass(1)
	n := d.notifications(t, run.UID)[0]
	if n.State != runtime.NotificationPending || n.LastError != "the endpoint answered 500 Internal Server Error" {
		t.Fatalf("after a 500: %+v", n)
	}
	if wait := time.Duration(n.DueAt-t0.Unix()) * time.Second; wait < 5*time.Second || wait > 10*time.Second {
		t.Fatalf("first retry due after %s, want 5s..10s (10s with jitter)", wait)
	}
	clk.Add(4 * time.Second)
	pass(0)
	clk.Add(6 * time.Second)
	pass(1)
	n = d.notifications(t, run.UID)[0]
	if wait := n.DueAt - clk.Now().Unix(); wait < 10 || wait > 20 {
		t.Fatalf("second retry due after %ds, want 10..20", wait)
	}
	clk.Add(20 * time.Second)
	pass(1)
	n = d.notifications(t, run.UID)[0]
	if n.State != runtime.NotificationFailed || n.Attempts != 3 {
		t.Fatalf("after 3 attempts: %+v", n)
	}
	clk.Add(time.Hour)
	pass(0)
	reqs := ep.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs[1:] {
		if r.header.Get("webhook-id") != reqs[0].header.Get("webhook-id") || string(r.body) != string(reqs[0].body) {
			t.Fatalf("a retry changed the id or body: %q %s", r.header.Get("webhook-id"), r.body)
		}
	}
	if obs.get("retried") != 2 || obs.get("failed") != 1 || obs.get("sent") != 0 {
		t.Fatalf("counted %v", obs.n)
	}
}

// TestUnsendableRuleIsBlocked: a dispatcher without a rule's variable (or, for email, a mail
// server) sends nothing unsigned and spends no attempt: it marks the row blocked with a
// reason naming what is missing (never a secret or URL), reads it no more, and a dispatcher
// that has the variables sends it.
func TestUnsendableRuleIsBlocked(t *testing.T) {
	ep := newEndpoint(t, http.StatusOK)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelSlack,
		WebhookURLEnv: "SLACK_URL"}, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
		URL: ep.srv.URL, SecretEnv: "HOOK_SECRET"}, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelEmail,
		To: []string{"ops@example.com"}})
	run := d.wait(t)
	clk := &clock{now: t0}
	lacking := d.dispatcher(clk, nil, nil, nil)
	for range 2 {
		if n, err := lacking.Pass(t.Context()); err != nil || n != 0 {
			t.Fatalf("pass claimed %d, %v; want none", n, err)
		}
	}
	ns := d.notifications(t, run.UID)
	for i, want := range []string{"environment variable SLACK_URL (the Slack webhook URL) is not set on ",
		"environment variable HOOK_SECRET (the webhook secret) is not set on ", "no SMTP server is configured (--smtp-url, --smtp-from) on "} {
		if n := ns[i]; n.State != runtime.NotificationBlocked || n.Attempts != 0 || !strings.HasPrefix(n.LastError, want) {
			t.Fatalf("notification %d: state %s, attempts %d, reason %q; want blocked, 0, %q…", i, n.State, n.Attempts, n.LastError, want)
		}
	}
	if len(ep.requests()) != 0 {
		t.Fatal("an unsigned webhook was sent")
	}
	able := d.dispatcher(clk, map[string]string{"SLACK_URL": ep.srv.URL, "HOOK_SECRET": "s"}, nil, nil)
	if n, err := able.Pass(t.Context()); err != nil || n != 2 {
		t.Fatalf("the dispatcher with the variables claimed %d, %v; want 2", n, err)
	}
	ns = d.notifications(t, run.UID)
	if ns[0].State != runtime.NotificationSent || ns[1].State != runtime.NotificationSent || ns[0].Attempts != 1 {
		t.Fatalf("after the able dispatcher: %+v", ns[:2])
	}
	if ns[2].State != runtime.NotificationBlocked {
		t.Fatalf("email without a mail server: %+v", ns[2])
	}
}

// TestRefusedAnswerFailsAtOnce: a 4xx answer other than 408 and 429 fails the notification
// on its first attempt with the answer as reason; 408 and 429 are retried.
func TestRefusedAnswerFailsAtOnce(t *testing.T) {
	for _, c := range []struct {
		status int
		state  string
	}{
		{http.StatusNotFound, runtime.NotificationFailed},
		{http.StatusUnauthorized, runtime.NotificationFailed},
		{http.StatusRequestTimeout, runtime.NotificationPending},
		{http.StatusTooManyRequests, runtime.NotificationPending},
		{http.StatusBadGateway, runtime.NotificationPending},
	} {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			ep := newEndpoint(t, c.status)
			d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
				URL: ep.srv.URL, SecretEnv: "S"})
			run := d.wait(t)
			if _, err := d.dispatcher(&clock{now: t0}, map[string]string{"S": "s"}, nil, nil).Pass(t.Context()); err != nil {
				t.Fatal(err)
			}
			n := d.notifications(t, run.UID)[0]
			if n.State != c.state || n.Attempts != 1 || !strings.Contains(n.LastError, strconv.Itoa(c.status)) {
				t.Fatalf("state %s, attempts %d, reason %q; want %s after 1 attempt, naming %d", n.State, n.Attempts, n.LastError, c.state, c.status)
			}
		})
	}
}

// TestStartLogsUnsendableRules: a dispatcher starting logs an error for each rule of the
// catalog it cannot send, naming the configuration, the rule and what is missing.
func TestStartLogsUnsendableRules(t *testing.T) {
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
		URL: "https://hooks.example/", SecretEnv: "HOOK_SECRET"}, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting},
		Channel: runtime.ChannelEmail, To: []string{"ops@example.com"}}, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting},
		Channel: runtime.ChannelSlack, WebhookURLEnv: "SLACK_URL"})
	var logs bytes.Buffer
	disp := notify.New(notify.Config{Outbox: d.store, Catalog: d.store, Getenv: func(k string) string { return map[string]string{"SLACK_URL": "x"}[k] },
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Interval: time.Hour})
	disp.CheckRules(t.Context())
	var lines []map[string]any
	for line := range strings.Lines(logs.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["level"] == "ERROR" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 || lines[0]["rule"] != "notify[0]" || !strings.Contains(lines[0]["reason"].(string), "HOOK_SECRET") ||
		lines[1]["rule"] != "notify[1]" || !strings.Contains(lines[1]["reason"].(string), "--smtp-url") || lines[0]["configuration"] != "refunds" {
		t.Fatalf("errors logged: %v", lines)
	}
}

// TestDispatchersRaceDeliverEachOnce: several dispatchers passing over the same outbox at
// once deliver every notification exactly once.
func TestDispatchersRaceDeliverEachOnce(t *testing.T) {
	ep := newEndpoint(t, http.StatusOK)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
		URL: ep.srv.URL, SecretEnv: "S"})
	const runs = 40
	for range runs {
		d.wait(t)
	}
	clk := &clock{now: t0}
	var wg sync.WaitGroup
	for range 4 {
		disp := d.dispatcher(clk, map[string]string{"S": "secret"}, nil, nil)
		wg.Go(func() {
			for range 5 {
				if _, err := disp.Pass(t.Context()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	ids := map[string]int{}
	for _, r := range ep.requests() {
		ids[r.header.Get("webhook-id")]++
	}
	if len(ids) != runs {
		t.Fatalf("%d distinct notifications delivered, want %d", len(ids), runs)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("%s delivered %d times", id, n)
		}
	}
}
