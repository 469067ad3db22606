package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// hookDesk is a desk file whose configuration waits for input at once and notifies a webhook.
const hookDesk = `configurations:
  - identifier: refunds
    name: Refund assistant
    provider:
      kind: scripted
      script:
        - tool_calls:
            - name: ask_refund_amount
              arguments: {order_id: A-1}
        - content: Done.
    tools: [ask_refund_amount]
    notify:
      - on: [waiting, decided]
        webhook: {url: "URL", secret_env: HOOK_SECRET}
tools:
  - name: ask_refund_amount
    description: Ask the operator how much to refund.
    parameters: {type: object, properties: {order_id: {type: string}}}
    input_schema: {type: object, required: [amount], properties: {amount: {type: number}}}
    http: {url: "http://127.0.0.1:9/refund-amount"}
`

// hook is a webhook receiver whose first delivery never answers: it reports the request on
// first and holds it until the test ends.
type hook struct {
	mu    sync.Mutex
	got   []http.Header
	first chan struct{}
	hold  chan struct{}
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	n := len(h.got)
	hd := r.Header.Clone()
	hd.Set("X-Body", string(body))
	h.got = append(h.got, hd)
	h.mu.Unlock()
	if n == 0 {
		close(h.first)
		<-h.hold
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (h *hook) deliveries() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.got...)
}

// TestKilledDispatcherRedelivers: a worker is killed with SIGKILL while its dispatcher waits
// on a webhook; another process (serve) takes the lapsed claim and delivers the notification
// again with the same webhook-id, correctly signed; `notifications list` shows it sent after
// two attempts and /metrics counts it.
func TestKilledDispatcherRedelivers(t *testing.T) {
	t.Parallel()
	h := &hook{first: make(chan struct{}), hold: make(chan struct{})}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(h.hold)
	env := newDatabase(t)
	file := filepath.Join(t.TempDir(), "desk.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(hookDesk, "URL", srv.URL+"/hook", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cliRun(t, env, nil, "apply", "-f", file); r.code != exitOK {
		t.Fatalf("apply: %+v", r)
	}
	pool := store(t, env).pool
	s := db.New(pool)
	cfg, err := s.ConfigurationByIdentifier(context.Background(), "refunds")
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	if _, err := s.CreateRun(context.Background(), runtime.NewRun{UUID: id, ConfigurationUID: cfg.UID, ConfigurationIdentifier: "refunds",
		QueuedRequest: `{"kind":"start","prompt":"refund A-1"}`, Now: time.Now().Unix()}); err != nil {
		t.Fatal(err)
	}

	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("kill-test-signing-key-0123456789"))
	env[execMainEnv] = "1"
	env["HOOK_SECRET"] = secret
	env["RUNSDESK_NOTIFY_TIMEOUT"] = "2s"
	env["RUNSDESK_POLL_INTERVAL"] = "100ms"
	env["RUNSDESK_PUBLIC_URL"] = "https://desk.example"
	env["RUNSDESK_LOG_LEVEL"] = "info"
	worker := startProcess(t, exec.Command(os.Args[0], "worker", "--no-migrate", "--workers", "1"), env)
	select {
	case <-h.first:
	case <-time.After(time.Minute):
		t.Fatalf("the webhook never arrived:\n%s", worker.output)
	}
	if err := syscall.Kill(-worker.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	worker.wait(t)

	serve := startProcess(t, exec.Command(os.Args[0], "serve", "--no-migrate", "--addr", "127.0.0.1:0"), env)
	serve.waitForOutput(t, regexp.MustCompile(`runsdesk is serving on http://\S+`), time.Minute)
	deadline := time.Now().Add(time.Minute)
	for len(h.deliveries()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := h.deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2 (the killed one and the redelivery):\n%s", len(got), serve.output)
	}
	if got[0].Get("webhook-id") == "" || got[1].Get("webhook-id") != got[0].Get("webhook-id") {
		t.Fatalf("webhook-id %q redelivered as %q", got[0].Get("webhook-id"), got[1].Get("webhook-id"))
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	for i, d := range got {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(d.Get("webhook-id") + "." + d.Get("webhook-timestamp") + "." + d.Get("X-Body")))
		if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); d.Get("webhook-signature") != want {
			t.Fatalf("delivery %d: signature %q, want %q", i, d.Get("webhook-signature"), want)
		}
		if !strings.Contains(d.Get("X-Body"), `"url":"https://desk.example/runs/`+id+`"`) {
			t.Fatalf("delivery %d body lacks the deep link: %s", i, d.Get("X-Body"))
		}
	}
	if got[0].Get("X-Body") != got[1].Get("X-Body") {
		t.Fatalf("the redelivery changed the body:\n%s\n%s", got[0].Get("X-Body"), got[1].Get("X-Body"))
	}

	var list result
	for time.Now().Before(deadline) {
		if list = cliRun(t, env, nil, "notifications", "list"); strings.Contains(list.stdout, " sent ") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(got[0].Get("webhook-id")) + `\s+` + id + `\s+waiting\s+webhook\s+sent\s+2\s`)
	if list.code != exitOK || !row.MatchString(list.stdout) {
		t.Fatalf("notifications list:\n%s%s", list.stdout, list.stderr)
	}
	if failed := cliRun(t, env, nil, "notifications", "list", "--failed"); failed.code != exitOK || strings.Contains(failed.stdout, id) {
		t.Fatalf("notifications list --failed: %+v", failed)
	}
	addr := regexp.MustCompile(`runsdesk is serving on (http://\S+)`).FindStringSubmatch(serve.output.String())[1]
	resp, err := http.Get(strings.TrimSuffix(addr, "/") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`runsdesk_notifications_total{outcome="sent"} 1`, "runsdesk_notifications_oldest_undelivered_age_seconds 0"} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics (%s) lacks %q:\n%s", resp.Status, want, grepLines(string(body), "notif"))
		}
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestNotifySettings: bad notification settings of serve and worker are usage errors naming
// the flag (or variable); the SMTP password never appears in a message.
func TestNotifySettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"relative public url", nil, []string{"serve", "--public-url", "/desk"}, "--public-url must be an absolute http or https URL"},
		{"public url with a query", nil, []string{"worker", "--public-url", "https://desk.example/?a=1"}, "--public-url must be an absolute http or https URL"},
		{"public url from env", environ{"RUNSDESK_PUBLIC_URL": "ftp://desk.example"}, []string{"serve"}, "--public-url must be an absolute"},
		{"notify timeout below a second", nil, []string{"serve", "--notify-timeout", "500ms"}, "--notify-timeout must be at least 1s"},
		{"notify timeout from env", environ{"RUNSDESK_NOTIFY_TIMEOUT": "soon"}, []string{"worker"}, "RUNSDESK_NOTIFY_TIMEOUT"},
		{"no delivery per host", nil, []string{"serve", "--notify-per-host", "0"}, "--notify-per-host must be at least 1, got 0"},
		{"per host from env", environ{"RUNSDESK_NOTIFY_PER_HOST": "many"}, []string{"worker"}, "RUNSDESK_NOTIFY_PER_HOST"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.env, nil, c.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", r.code, r.stderr, exitUsage, c.want)
			}
		})
	}
	env := newDatabase(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "--smtp-url", "smtp://desk:hunter2@mail.example:587"}, "--smtp-url needs --smtp-from"},
		{[]string{"worker", "--smtp-url", "imap://desk:hunter2@mail.example", "--smtp-from", "desk@example.com"}, "--smtp-url must start with smtp://"},
		{[]string{"worker", "--smtp-url", "smtp://desk:hunter2@mail.example", "--smtp-from", "desk"}, "--smtp-from is not an email address"},
	} {
		r := cliRun(t, env, nil, c.args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "hunter2") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %d and %q, no password", c.args, r.code, r.stderr, exitFailure, c.want)
		}
	}
}

// TestApplyWarnsOfUnsetNotifyVariables: apply of a rule whose secret_env is unset where it
// runs succeeds (serve and worker may run elsewhere) and warns, naming the rule and the
// variable.
func TestApplyWarnsOfUnsetNotifyVariables(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	file := filepath.Join(t.TempDir(), "desk.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(hookDesk, "URL", "https://hooks.example/desk", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "runsdesk apply: warning: configuration refunds, notify[0] (webhook): secret_env HOOK_SECRET is not set here"
	for _, args := range [][]string{{"apply", "-f", file, "--dry-run"}, {"apply", "-f", file}} {
		if r := cliRun(t, env, nil, args...); r.code != exitOK || !strings.Contains(r.stderr, want) {
			t.Fatalf("%v: exit %d, stderr:\n%s\nwant 0 and %q", args, r.code, r.stderr, want)
		}
	}
	env["HOOK_SECRET"] = "s"
	if r := cliRun(t, env, nil, "apply", "-f", file); r.code != exitOK || strings.Contains(r.stderr, "warning") {
		t.Fatalf("with the variable: %+v", r)
	}
}

// TestNotificationsList: the listing shows every notification newest first with its state
// (blocked, with the missing variable, for one a dispatcher could not send), attempts and
// last error; --failed only those given up.
func TestNotificationsList(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	ctx := context.Background()
	s := db.New(store(t, env).pool)
	if _, err := s.UpsertConfiguration(ctx, runtime.Configuration{Identifier: "refunds", Name: "Refunds",
		Provider: model.Settings{Kind: model.KindScripted}, Notify: []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyWaiting},
			Channel: runtime.ChannelWebhook, URL: "https://hooks.example/", SecretEnv: "S"}}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.ConfigurationByIdentifier(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	var ids []string
	for range 2 {
		id := uuid.NewString()
		r, err := s.CreateRun(ctx, runtime.NewRun{UUID: id, ConfigurationUID: cfg.UID, QueuedRequest: `{}`,
			Lease: runtime.Lease{Owner: "w", Expires: now + 60, Now: now}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Suspend(ctx, r.UID, "w", runtime.Suspension{Status: runtime.StatusWaitingInput, State: `{}`, Tools: []string{"ask"}}, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	ns, err := s.ClaimNotifications(ctx, "d", now, now+30, 1, runtime.NotifyReach{})
	if err != nil || len(ns) != 1 {
		t.Fatalf("claim: %v %v", ns, err)
	}
	if err := s.NotificationFailed(ctx, ns[0].UID, "d", "the endpoint answered 410 Gone", now); err != nil {
		t.Fatal(err)
	}
	if empty, err := s.ClaimNotifications(ctx, "d", now, now+30, 1, runtime.NotifyReach{
		Blocked: func(runtime.NotifyRule) string { return "environment variable S (the webhook secret) is not set on h" }}); err != nil || len(empty) != 0 {
		t.Fatalf("a blocked claim: %v %v", empty, err)
	}
	all := cliRun(t, env, nil, "notifications", "list")
	lines := strings.Split(strings.TrimSpace(all.stdout), "\n")
	if all.code != exitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") ||
		!strings.Contains(lines[1], ids[1]) || !strings.Contains(lines[1], " blocked ") || !strings.Contains(lines[1], "environment variable S ") ||
		!strings.Contains(lines[2], ids[0]) || !strings.Contains(lines[2], " failed ") || !strings.Contains(lines[2], "the endpoint answered 410 Gone") {
		t.Fatalf("notifications list:\n%s%s", all.stdout, all.stderr)
	}
	failed := cliRun(t, env, nil, "notifications", "list", "--failed")
	if lines := strings.Split(strings.TrimSpace(failed.stdout), "\n"); failed.code != exitOK || len(lines) != 2 || !strings.Contains(lines[1], ids[0]) {
		t.Fatalf("notifications list --failed:\n%s%s", failed.stdout, failed.stderr)
	}
	keys := []string{"id", "run", "event", "channel", "state", "attempts", "created", "due", "sent", "last_error"}
	if js := listJSON(t, env, keys, "notifications", "list"); len(js) != 2 || js[0]["run"] != ids[1] || js[0]["state"] != "blocked" ||
		js[1]["state"] != "failed" || js[1]["attempts"] != 1.0 || js[1]["last_error"] != "the endpoint answered 410 Gone" || js[1]["sent"] != nil {
		t.Fatalf("notifications list --format json: %v", js)
	}
	if js := listJSON(t, env, keys, "notifications", "list", "--failed"); len(js) != 1 || js[0]["run"] != ids[0] {
		t.Fatalf("notifications list --failed --format json: %v", js)
	}
	if r := cliRun(t, env, nil, "notifications", "list", "extra"); r.code != exitUsage {
		t.Fatalf("an extra argument: %+v", r)
	}
}
