package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"runsdesk/app"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/demo"
)

// server is an in-process `runsdesk serve` (or worker) the test stops by cancelling.
type server struct {
	cancel context.CancelFunc
	done   chan int
	stdout *syncBuffer
	stderr *syncBuffer
}

func start(t *testing.T, env environ, args ...string) *server {
	t.Helper()
	return startOn(t, false, env, args...)
}

// startOn is start with the CLI taking its streams for a terminal, or not.
func startOn(t *testing.T, terminal bool, env environ, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{cancel: cancel, done: make(chan int, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	c := &cli{stdout: s.stdout, stderr: s.stderr, getenv: env.get, terminal: func(io.Writer) bool { return terminal }}
	go func() { s.done <- c.run(ctx, args) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// waitFor waits until stdout matches re and returns the first submatch.
func (s *server) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(s.stdout.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-s.done:
			s.done <- code
			t.Fatalf("exited %d before printing %s:\n%s\n%s", code, re, s.stdout, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("never printed %s:\n%s\n%s", re, s.stdout, s.stderr)
	return ""
}

// stop cancels the command (like SIGINT) and returns its exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		s.done <- code
		return code
	case <-time.After(time.Minute):
		t.Fatal("did not stop within a minute")
		return -1
	}
}

var urlLine = regexp.MustCompile(`(http://127\.0\.0\.1:[0-9]+/)`)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeDemoThenStop(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	env["RUNSDESK_ADDR"] = "127.0.0.1:0"
	s := start(t, env, "serve", "--demo", "--workers", "2")
	url := s.waitFor(t, regexp.MustCompile(`runsdesk demo desk: (http://\S+)`))
	if !strings.Contains(s.stdout.String(), "admin     (admin)     password: ") {
		t.Errorf("stdout:\n%s", s.stdout)
	}
	for path, want := range map[string]int{"healthz": 200, "readyz": 200, "login": 200} {
		if code, body := get(t, url+path); code != want {
			t.Errorf("GET /%s = %d %q", path, code, body)
		}
	}
	waitForPauses(t, env, 2, 2)
	if code := s.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, s.stderr)
	}
	passwords := regexp.MustCompile(`password: (\S+)`).FindAllStringSubmatch(s.stdout.String(), -1)
	if len(passwords) != 3 {
		t.Errorf("%d passwords printed, want 3", len(passwords))
	}
	for _, p := range passwords {
		if strings.Contains(s.stderr.String(), p[1]) {
			t.Errorf("a password reached the log")
		}
	}

	s = start(t, env, "serve", "--demo")
	s.waitFor(t, regexp.MustCompile(`runsdesk demo desk: (http://\S+)`))
	s.waitFor(t, regexp.MustCompile(`(Lost it\?)`))
	if out := s.stdout.String(); strings.Contains(out, "password:") || !strings.Contains(out, "already set up") {
		t.Errorf("second start:\n%s", out)
	}
	if code := s.stop(t); code != exitOK {
		t.Errorf("second serve exited %d", code)
	}
	if n := countRuns(t, env); n != 4 {
		t.Errorf("%d runs after the second start, want the 4 of the first", n)
	}
}

func TestServePlain(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	s := start(t, env, "serve", "--addr", "127.0.0.1:0", "--no-migrate")
	url := s.waitFor(t, regexp.MustCompile(`runsdesk is serving on (http://\S+)`))
	if !urlLine.MatchString(url) {
		t.Errorf("url %q", url)
	}
	if code, _ := get(t, url+"readyz"); code != 200 {
		t.Errorf("readyz = %d", code)
	}
	if code, body := get(t, url+"metrics"); code != 200 || !strings.Contains(body, "runsdesk_runs{") {
		t.Errorf("metrics = %d\n%s", code, body)
	}
	if code := s.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, s.stderr)
	}
}

func TestServeAddressInUse(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	s := start(t, env, "serve", "--addr", "127.0.0.1:0")
	url := s.waitFor(t, regexp.MustCompile(`runsdesk is serving on (http://\S+)`))
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	r := cliRun(t, env, nil, "serve", "--addr", addr)
	if r.code != exitFailure || !strings.Contains(r.stderr, "listen on "+addr) {
		t.Errorf("second serve on %s: %+v", addr, r)
	}
}

func TestWorkerExecutesQueuedRuns(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	c := store(t, env)
	tools := demo.Tools()
	rt := app.NewRuntime(app.Config{DB: c.pool, Getenv: env.get, Tools: tools})
	if _, err := setUpDemo(context.Background(), c, rt, tools, env.get); err != nil {
		t.Fatal(err)
	}
	rt.Close()
	if n := countRuns(t, env); n != 4 {
		t.Fatalf("%d demo runs queued, want 4", n)
	}
	w := start(t, env, "worker", "--demo", "--workers", "3")
	w.waitFor(t, regexp.MustCompile(`(3 worker\(s\) running)`))
	waitForPauses(t, env, 2, 2)
	if code := w.stop(t); code != exitOK {
		t.Errorf("worker exited %d:\n%s", code, w.stderr)
	}
}

// waitForPauses waits until the database holds input runs waiting for input and approval
// runs waiting for approval.
func waitForPauses(t *testing.T, env environ, input, approval int) {
	t.Helper()
	st := db.New(store(t, env).pool)
	deadline := time.Now().Add(time.Minute)
	for {
		counts, err := st.CountWaiting(context.Background(), runtime.WaitingQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if counts.Input == input && counts.Approval == approval {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting runs: %+v, want %d input and %d approval", counts, input, approval)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countRuns(t *testing.T, env environ) int {
	t.Helper()
	var n int
	if err := store(t, env).pool.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM tx_nrllm_agentrun").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServeTrustedProxies checks that --trusted-proxies (and RUNSDESK_TRUSTED_PROXIES) reach
// the router: behind a trusted peer a failed sign-in is audited under the forwarded client
// address, and a value that is no CIDR list is a usage error.
func TestServeTrustedProxies(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	if r := cliRun(t, env, nil, "serve", "--no-migrate", "--trusted-proxies", "10.0.0.0/8,proxy.example"); r.code != exitUsage || !strings.Contains(r.stderr, "proxy.example") {
		t.Errorf("serve with a bad --trusted-proxies: %+v, want exit %d naming the entry", r, exitUsage)
	}
	env["RUNSDESK_TRUSTED_PROXIES"] = "127.0.0.1"
	s := start(t, env, "serve", "--addr", "127.0.0.1:0", "--no-migrate")
	url := s.waitFor(t, regexp.MustCompile(`runsdesk is serving on (http://\S+)`))
	req, err := http.NewRequest(http.MethodPost, url+"login", strings.NewReader("username=nobody&password=x"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", "203.0.113.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ip string
	if err := store(t, env).pool.QueryRow(`SELECT ip FROM tx_runsdesk_audit ORDER BY uid DESC LIMIT 1`).Scan(&ip); err != nil || ip != "203.0.113.5" {
		t.Errorf("audit of a refused sign-in behind the trusted proxy: ip %q (%v), want 203.0.113.5", ip, err)
	}
}

// TestServeProcessesShareTheSignInForm: behind a load balancer the sign-in form may be served
// by one process and posted to another; both take the form's key from the database.
func TestServeProcessesShareTheSignInForm(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	const password = "a long passphrase for two processes"
	if r := cliRun(t, env, strings.NewReader(password+"\n"), "user", "add", "--username", "ann", "--role", "admin"); r.code != exitOK {
		t.Fatalf("user add: %+v", r)
	}
	serving := regexp.MustCompile(`runsdesk is serving on (http://\S+)`)
	a := start(t, env, "serve", "--addr", "127.0.0.1:0", "--no-migrate").waitFor(t, serving)
	b := start(t, env, "serve", "--addr", "127.0.0.1:0", "--no-migrate").waitFor(t, serving)
	browser := newBrowserless(t, strings.TrimSuffix(a, "/"))
	form := browser.form("/login", "/login")
	form.Set("username", "ann")
	form.Set("password", password)
	browser.base = strings.TrimSuffix(b, "/")
	if code, _ := browser.post("/login", form); code != http.StatusSeeOther {
		t.Errorf("the form of one process posted to another: %d, want 303", code)
	}
}
