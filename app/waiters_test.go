package app

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/db"
)

// waitDesk is an application served on a real listener, with a service account's token and
// a client whose API calls are checked against the OpenAPI document (apitest).
type waitDesk struct {
	app    *App
	pool   *sql.DB
	base   string
	token  string
	client *http.Client
}

// serveWaitDesk serves a fresh application built from cfg (DB filled in) with a 50 ms wake
// interval and a 100 ms request timeout, so a long-poll outliving the timeout proves it is not
// under it.
func serveWaitDesk(t *testing.T, cfg Config) *waitDesk {
	t.Helper()
	ctx := context.Background()
	cfg.DB = migratedDB(t)
	if cfg.WakeInterval == 0 {
		cfg.WakeInterval = 50 * time.Millisecond
	}
	cfg.RequestTimeout = 100 * time.Millisecond
	a, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Serve(ln) }()
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	token, err := db.NewServiceAccounts(cfg.DB, nil).CreateToken(ctx, "waiter", []string{"read"})
	if err != nil {
		t.Fatal(err)
	}
	return &waitDesk{app: a, pool: cfg.DB, base: "http://" + ln.Addr().String(), token: token, client: checkedClient(t)}
}

// run inserts a run with status, pause_sequence and suspended_at, as another process would.
func (d *waitDesk) run(t *testing.T, uuid, status string, seq, suspendedAt int) {
	t.Helper()
	if _, err := d.pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request,
		pause_sequence, suspended_at) VALUES (?, ?, '', '', ?, ?)`, uuid, status, seq, suspendedAt); err != nil {
		t.Fatal(err)
	}
}

// set changes run uuid from outside the application: another connection, no runtime.
func (d *waitDesk) set(t *testing.T, uuid, status string, seq, suspendedAt int) {
	t.Helper()
	if _, err := d.pool.Exec(`UPDATE tx_nrllm_agentrun SET status = ?, pause_sequence = ?, suspended_at = ?,
		iterations = iterations + 1 WHERE uuid = ?`, status, seq, suspendedAt, uuid); err != nil {
		t.Fatal(err)
	}
}

// answer is one long-poll's outcome.
type answer struct {
	status     int
	code       string
	runStatus  string
	retryAfter string
	took       time.Duration
	err        error
}

// poll GETs run uuid with query, as the desk's service account.
func (d *waitDesk) poll(uuid, query string) answer { return d.pollAs(d.token, uuid, query) }

// pollAs GETs run uuid with query, with token.
func (d *waitDesk) pollAs(token, uuid, query string) answer {
	start := time.Now()
	req, err := http.NewRequest(http.MethodGet, d.base+"/api/v1/runs/"+uuid+query, nil)
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := d.client.Do(req)
	if err != nil {
		return answer{err: err, took: time.Since(start)}
	}
	defer res.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  struct{ Code string }
	}
	err = json.NewDecoder(res.Body).Decode(&body)
	return answer{status: res.StatusCode, code: body.Error.Code, runStatus: body.Status,
		retryAfter: res.Header.Get("Retry-After"), took: time.Since(start), err: err}
}

// pollAsync is poll in a goroutine.
func (d *waitDesk) pollAsync(uuid, query string) <-chan answer {
	ch := make(chan answer, 1)
	go func() { ch <- d.poll(uuid, query) }()
	return ch
}

// waitFor returns once the hall holds n waiters.
func (d *waitDesk) waitFor(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); d.app.Waiters.Waiting() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters after 5s, want %d", d.app.Waiters.Waiting(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const waitRun = "11111111-1111-4111-8111-111111111111"

// TestLongPollAnsweredWhenTheRunFinishes: another connection completes the run; the
// long-poll, held past the 100 ms request timeout, answers within a few wake intervals.
func TestLongPollAnsweredWhenTheRunFinishes(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	d.run(t, waitRun, "running", -1, 0)
	got := d.pollAsync(waitRun, "?wait=20s")
	d.waitFor(t, 1)
	time.Sleep(300 * time.Millisecond)
	d.set(t, waitRun, "completed", -1, 0)
	a := <-got
	if a.err != nil || a.status != http.StatusOK || a.runStatus != "completed" {
		t.Fatalf("long-poll = %+v, want 200 completed", a)
	}
	if a.took > 2*time.Second {
		t.Errorf("answered after %v, want within a few wake intervals of the change", a.took)
	}
}

// TestLongPollAnsweredAtANewPause: a run waiting at one pause resumes (no answer: still
// held), then reaches a new pause: the long-poll answers with it.
func TestLongPollAnsweredAtANewPause(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	d.run(t, waitRun, "waiting_for_approval", 3, 1000)
	got := d.pollAsync(waitRun, "?wait=20s")
	d.waitFor(t, 1)
	time.Sleep(200 * time.Millisecond)
	d.set(t, waitRun, "running", -1, 0)
	select {
	case a := <-got:
		t.Fatalf("answered %+v when the run resumed, want held until its next pause", a)
	case <-time.After(400 * time.Millisecond):
	}
	d.set(t, waitRun, "waiting_for_approval", 7, 2000)
	a := <-got
	if a.err != nil || a.status != http.StatusOK || a.runStatus != "waiting_for_approval" || a.took > 3*time.Second {
		t.Fatalf("long-poll = %+v, want 200 waiting_for_approval soon after the new pause", a)
	}
}

// TestLongPollAnsweredAtTheLimit: nothing changes; the long-poll answers the run as it is at
// its limit, not cut by the 100 ms request timeout. Without wait, and with bad waits, the
// GET answers at once.
func TestLongPollAnsweredAtTheLimit(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	d.run(t, waitRun, "running", -1, 0)
	a := d.poll(waitRun, "?wait=1s")
	if a.err != nil || a.status != http.StatusOK || a.runStatus != "running" || a.took < time.Second || a.took > 3*time.Second {
		t.Fatalf("long-poll = %+v, want 200 running after about 1s", a)
	}
	if a := d.poll(waitRun, ""); a.status != http.StatusOK || a.took > time.Second {
		t.Errorf("GET without wait = %+v, want 200 at once", a)
	}
	for _, q := range []string{"?wait=soon", "?wait=-1s", "?wait=1s&wait=2s"} {
		if a := d.poll(waitRun, q); a.status != http.StatusBadRequest || a.code != "invalid_request" {
			t.Errorf("GET %s = %+v, want 400 invalid_request", q, a)
		}
	}
}

// TestLongPollCapped: past --max-waiters the next long-poll is 503 with Retry-After, while
// an ordinary GET is still served.
func TestLongPollCapped(t *testing.T) {
	d := serveWaitDesk(t, Config{MaxWaiters: 2})
	d.run(t, waitRun, "running", -1, 0)
	held := []<-chan answer{d.pollAsync(waitRun, "?wait=20s"), d.pollAsync(waitRun, "?wait=20s")}
	d.waitFor(t, 2)
	if a := d.poll(waitRun, "?wait=20s"); a.status != http.StatusServiceUnavailable || a.code != "unavailable" || a.retryAfter == "" {
		t.Errorf("third long-poll = %+v, want 503 unavailable with Retry-After", a)
	}
	if a := d.poll(waitRun, ""); a.status != http.StatusOK {
		t.Errorf("GET without wait with the hall full = %+v, want 200", a)
	}
	d.set(t, waitRun, "completed", -1, 0)
	for _, ch := range held {
		if a := <-ch; a.status != http.StatusOK {
			t.Errorf("held long-poll = %+v, want 200", a)
		}
	}
}

// TestLongPollCutOffWhenTheTokenIsDisabled: the token is disabled while it waits; at the
// wake that follows the long-poll is answered 401 as authentication answers it.
func TestLongPollCutOffWhenTheTokenIsDisabled(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	d.run(t, waitRun, "running", -1, 0)
	got := d.pollAsync(waitRun, "?wait=20s")
	d.waitFor(t, 1)
	time.Sleep(200 * time.Millisecond)
	if err := db.NewServiceAccounts(d.pool, nil).DisableToken(context.Background(), "waiter", nil); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.status != http.StatusUnauthorized || a.code != "invalid_token" || a.took > 3*time.Second {
		t.Fatalf("long-poll after its token was disabled = %+v, want 401 invalid_token soon", a)
	}
}

// TestShutdownEndsWaiters: with long-polls held, Close returns within 2 s and each is
// answered with the run as it is.
func TestShutdownEndsWaiters(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	d.run(t, waitRun, "running", -1, 0)
	var held []<-chan answer
	for range 5 {
		held = append(held, d.pollAsync(waitRun, "?wait=30s"))
	}
	d.waitFor(t, 5)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.app.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close with 5 long-polls held took %v, want at most 2s", took)
	}
	for _, ch := range held {
		if a := <-ch; a.status != http.StatusOK || a.runStatus != "running" {
			t.Errorf("long-poll at shutdown = %+v, want 200 running", a)
		}
	}
}

// TestManyWaitersWokenByOnePoll: 200 long-polls on one run (from 20 tokens, each within its
// rate limit) and 10 on others; one change answers the 200 at once, the others stay held. Run
// it with -race.
func TestManyWaitersWokenByOnePoll(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	d.run(t, waitRun, "running", -1, 0)
	const many, others = 200, 10
	tokens := make([]string, many/10)
	for i := range tokens {
		var err error
		if tokens[i], err = db.NewServiceAccounts(d.pool, nil).CreateToken(context.Background(), fmt.Sprint("waiter-", i), []string{"read"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	results := make(chan answer, many)
	for i := range many {
		wg.Go(func() { results <- d.pollAs(tokens[i%len(tokens)], waitRun, "?wait=30s") })
	}
	var rest []<-chan answer
	for i := range others {
		uuid := fmt.Sprintf("22222222-2222-4222-8222-%012d", i)
		d.run(t, uuid, "running", -1, 0)
		rest = append(rest, d.pollAsync(uuid, "?wait=30s"))
	}
	d.waitFor(t, many+others)
	time.Sleep(200 * time.Millisecond)
	changed := time.Now()
	d.set(t, waitRun, "failed", -1, 0)
	wg.Wait()
	close(results)
	for a := range results {
		if a.status != http.StatusOK || a.runStatus != "failed" {
			t.Fatalf("long-poll = %+v, want 200 failed", a)
		}
	}
	if took := time.Since(changed); took > 5*time.Second {
		t.Errorf("%d waiters answered %v after the change, want within a few wake intervals", many, took)
	}
	if n := d.app.Waiters.Waiting(); n != others {
		t.Errorf("%d waiters held after the change, want the %d on other runs", n, others)
	}
	_ = d.app.Close(context.Background())
	for _, ch := range rest {
		if a := <-ch; a.status != http.StatusOK || a.runStatus != "running" {
			t.Errorf("other long-poll = %+v, want 200 running", a)
		}
	}
}

// TestLongPollTakesNoSlot: with the only admission slot taken, an ordinary GET answers 503 at
// its deadline while a long-poll is held and answered when the run finishes.
func TestLongPollTakesNoSlot(t *testing.T) {
	d := serveWaitDesk(t, Config{MaxInFlight: 1})
	d.run(t, waitRun, "running", -1, 0)
	release, err := d.app.Gate.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if a := d.poll(waitRun, ""); a.status != http.StatusServiceUnavailable {
		t.Errorf("GET without wait, slot taken = %+v, want 503", a)
	}
	got := d.pollAsync(waitRun, "?wait=20s")
	d.waitFor(t, 1)
	d.set(t, waitRun, "cancelled", -1, 0)
	if a := <-got; a.status != http.StatusOK || a.runStatus != "cancelled" {
		t.Errorf("long-poll, slot taken = %+v, want 200 cancelled", a)
	}
}

// TestShutdownEndsEventStreams: Close ends the open event streams at once, each cleanly (the
// body ends without an error), before the server stops.
func TestShutdownEndsEventStreams(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	const streams = 5
	ended := make(chan error, streams)
	for range streams {
		req, err := http.NewRequest(http.MethodGet, d.base+"/api/v1/events", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+d.token)
		res, err := d.client.Do(req)
		if err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET /api/v1/events: %v %v", res, err)
		}
		go func() {
			defer res.Body.Close()
			_, err := io.Copy(io.Discard, res.Body)
			ended <- err
		}()
	}
	d.waitFor(t, streams)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.app.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close with %d streams open took %v, want at most 2s", streams, took)
	}
	for range streams {
		if err := <-ended; err != nil {
			t.Errorf("a stream ended with %v at shutdown, want a clean end", err)
		}
	}
}

// TestEventStreamResyncsAfterABurst: when more runs change within one poll than the desk's
// feed follows (1,000), every open stream is told to resync, and goes on from there; a client
// resuming from an id before the burst resyncs too.
func TestEventStreamResyncsAfterABurst(t *testing.T) {
	d := serveWaitDesk(t, Config{})
	req, err := http.NewRequest(http.MethodGet, d.base+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	res, err := d.client.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/events: %v %v", res, err)
	}
	defer res.Body.Close()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(prefix string) string {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("the stream ended before a line %q", prefix)
				}
				if strings.HasPrefix(line, prefix) {
					return line
				}
			case <-timeout:
				t.Fatalf("no line %q within 10s", prefix)
			}
		}
	}
	next("id: ")
	if _, err := d.pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request)
		SELECT CONCAT('burst-', seq), 'running', '', '' FROM seq_1_to_1000`); err != nil {
		t.Fatal(err)
	}
	next("event: resync")
	old, err := http.NewRequest(http.MethodGet, d.base+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	old.Header.Set("Authorization", "Bearer "+d.token)
	old.Header.Set("Last-Event-ID", "1")
	res2, err := d.client.Do(old)
	if err != nil || res2.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/events from id 1: %v %v", res2, err)
	}
	r := bufio.NewReader(res2.Body)
	first, _ := r.ReadString('\n')
	for strings.HasPrefix(first, "retry:") || first == "\n" {
		first, _ = r.ReadString('\n')
	}
	res2.Body.Close()
	if first != "event: resync\n" {
		t.Errorf("a stream from an id before the burst began %q, want event: resync", first)
	}
	d.run(t, waitRun, "waiting_for_approval", 1, 1)
	if got := next(`data: {"uuid"`); got != `data: {"uuid":"`+waitRun+`","status":"waiting_for_approval"}` {
		t.Errorf("after the resync: %s, want the next change", got)
	}
}
