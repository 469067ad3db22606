package handlers

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
)

// sseEvent is one event or comment a stream sent.
type sseEvent struct {
	name, id, data string
	comment        string
}

// sseStream is an open event stream: its response and the events read from it.
type sseStream struct {
	t       *testing.T
	backlog []sseEvent
	res     *http.Response
	events  chan sseEvent
	cancel  context.CancelFunc
}

// openStream opens the event stream at path with header, for the client's cookies. A
// response other than 200 is returned whole, with no stream.
func (c *client) openStream(path string, header http.Header) (*sseStream, response) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.app.srv.URL+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.http.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("GET %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		defer cancel()
		defer res.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&b)
		return nil, response{status: res.StatusCode, header: res.Header, body: b.String()}
	}
	s := &sseStream{t: c.t, res: res, events: make(chan sseEvent, 1000), cancel: cancel}
	go s.read()
	c.t.Cleanup(s.close)
	return s, response{status: res.StatusCode, header: res.Header}
}

// read parses the stream into events until it ends, then closes s.events.
func (s *sseStream) read() {
	defer close(s.events)
	sc := bufio.NewScanner(s.res.Body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if ev != (sseEvent{}) {
				s.events <- ev
			}
			ev = sseEvent{}
		case field == "":
			ev.comment = value
		case field == "event":
			ev.name = value
		case field == "id":
			ev.id = value
		case field == "data":
			ev.data = value
		}
	}
}

func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
}

// next returns the next event named name (""; one without a name: a comment, an id alone),
// keeping the others it reads for later calls, failing after 5 s.
func (s *sseStream) next(name string) sseEvent {
	s.t.Helper()
	for i, ev := range s.backlog {
		if ev.name == name {
			s.backlog = append(s.backlog[:i:i], s.backlog[i+1:]...)
			return ev
		}
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the stream ended before event %q", name)
			}
			if ev.name == name {
				return ev
			}
			s.backlog = append(s.backlog, ev)
		case <-timeout:
			s.t.Fatalf("no event %q within 5s", name)
		}
	}
}

// untilRun returns the events named run until one reports uuid with status.
func (s *sseStream) untilRun(uuid string, status runtime.Status) []sseEvent {
	s.t.Helper()
	var seen []sseEvent
	want := fmt.Sprintf(`{"uuid":%q,"status":%q}`, uuid, status)
	for {
		ev := s.next("run")
		seen = append(seen, ev)
		if ev.data == want {
			return seen
		}
	}
}

// ended reports whether the stream ends within 5 s.
func (s *sseStream) ended() bool {
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

// waitStreams returns once the hall holds n waiters.
func (a *testApp) waitStreams(n int) {
	a.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); a.hall.Waiting() != n; {
		if time.Now().After(deadline) {
			a.t.Fatalf("%d streams open after 5s, want %d", a.hall.Waiting(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The web stream is a Server-Sent Events response that support staff, who may read every
// run, follow too: a run another person starts and another decides arrives as its uuid and
// status alone, and the inbox's counts with it.
func TestEventsStreamRunsAndInboxToSignedInPeople(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	sam := app.login(runtime.RoleSupport)
	s, res := sam.openStream("/events", nil)
	if s == nil {
		t.Fatalf("GET /events as support: %d, want 200", res.status)
	}
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := res.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	app.waitStreams(1)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	s.untilRun(uuid, runtime.StatusWaitingApproval)
	if inbox := s.next("inbox"); inbox.data != `{"approval":1,"input":0,"capped":false}` || inbox.id == "" {
		t.Errorf("inbox event after a pause: %+v, want the counts with an id", inbox)
	}
	rita := app.login(runtime.RoleReviewer)
	if res := rita.postForm("/runs/"+uuid+"/approval", rita.approvalFormOf(uuid, "approve")); res.status != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.status)
	}
	app.rt.Wait()
	final := app.row(uuid).Status
	events := s.untilRun(uuid, final)
	for _, ev := range events {
		if !strings.HasPrefix(ev.data, `{"uuid":"`+uuid+`","status":"`) || strings.Count(ev.data, ",") != 1 {
			t.Errorf("run event data %s, want exactly uuid and status", ev.data)
		}
	}
	inbox := s.next("inbox")
	for inbox.data == `{"approval":1,"input":0,"capped":false}` {
		inbox = s.next("inbox") // a poll nudged by the pause may repeat its counts
	}
	if inbox.data != `{"approval":0,"input":0,"capped":false}` {
		t.Errorf("inbox event after the decision: %+v, want no run waiting", inbox)
	}
}

// A quiet stream sends a heartbeat comment every heartbeat; anonymous visitors are sent to
// sign in, not streamed to.
func TestEventsHeartbeatAndSignInRequired(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{heartbeat: 50 * time.Millisecond})
	s, _ := app.login(runtime.RoleReviewer).openStream("/events", nil)
	for ev := s.next(""); ev.comment != "heartbeat"; ev = s.next("") {
		if ev.comment != "" {
			t.Errorf("comment %q, want heartbeats only", ev.comment)
		}
	}
	if _, res := app.newClient().openStream("/events", nil); res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/login") {
		t.Errorf("anonymous GET /events: %d %q, want 303 to /login", res.status, res.header.Get("Location"))
	}
}

// A client that comes back with the Last-Event-ID it was sent is sent what changed since.
func TestEventsResumeAfterLastEventID(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ada := app.login(runtime.RoleAdmin)
	s, _ := ada.openStream("/events", nil)
	first := s.firstID()
	app.waitStreams(1)
	s.close()
	app.waitStreams(0)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	again, _ := ada.openStream("/events", http.Header{"Last-Event-Id": {first}})
	seen := again.untilRun(uuid, runtime.StatusWaitingApproval)
	if last := seen[len(seen)-1]; len(last.id) < len(first) || last.id <= first {
		t.Errorf("run event %+v, want an id after %s", last, first)
	}
}

// A client whose Last-Event-ID is no id the server gave is told to resync, with the id to go
// on from; a new client is not. (Ids older than the server can tell: app's burst test.)
func TestEventsResyncWhenTheServerCannotTell(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ada := app.login(runtime.RoleAdmin)
	app.pause(runtime.RoleAdmin, "mail")
	fresh, _ := ada.openStream("/events", nil)
	fresh.firstID()
	bogus, _ := ada.openStream("/events", http.Header{"Last-Event-Id": {"not-an-id"}})
	if ev := bogus.next("resync"); ev.id == "" || ev.data != "{}" {
		t.Errorf("resync event %+v, want {} and the id to go on from", ev)
	}
	if len(fresh.backlog) != 0 {
		t.Errorf("a new client was sent %+v, want nothing but its id", fresh.backlog)
	}
}

// firstID returns the first id the stream gave on its own (the cursor a new client resumes
// after, sent once the hall has read the desk).
func (s *sseStream) firstID() string {
	s.t.Helper()
	ev := s.next("")
	for ev.id == "" {
		ev = s.next("")
	}
	return ev.id
}

// The session is read again at every wake: signing out ends the stream.
func TestEventsEndWhenTheSessionEnds(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{heartbeat: 50 * time.Millisecond})
	rita := app.login(runtime.RoleReviewer)
	s, _ := rita.openStream("/events", nil)
	app.waitStreams(1)
	if res := rita.postForm("/logout", url.Values{"_csrf": {rita.token()}}); res.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.status)
	}
	if !s.ended() {
		t.Fatal("the stream of a signed-out session is still open")
	}
	app.waitStreams(0)
}

// A stream of a session signed out from another one (the session index) ends too.
func TestEventsEndWhenSignedOutFromAnotherSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{heartbeat: 50 * time.Millisecond})
	phone := app.login(runtime.RoleReviewer)
	laptop := app.login(runtime.RoleReviewer)
	s, _ := phone.openStream("/events", nil)
	app.waitStreams(1)
	if res := laptop.postForm("/account/sessions/end-others", url.Values{"_csrf": {laptop.token()}}); res.status != http.StatusSeeOther {
		t.Fatalf("sign out all others: %d", res.status)
	}
	if !s.ended() {
		t.Fatal("the stream of a session signed out from another one is still open")
	}
	app.waitStreams(0)
}

// More streams than the hall holds are refused 503 with Retry-After, on the page and the API.
func TestEventsRefusedWhenTheHallIsFull(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{maxWaiters: 1})
	ada := app.login(runtime.RoleAdmin)
	ada.openStream("/events", nil)
	app.waitStreams(1)
	if _, res := ada.openStream("/events", nil); res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
		t.Errorf("second stream: %d Retry-After %q, want 503 with Retry-After", res.status, res.header.Get("Retry-After"))
	}
	token, err := app.tokens.CreateToken(t.Context(), "watcher", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	_, res := ada.openStream("/api/v1/events", http.Header{"Authorization": {"Bearer " + token}})
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" || !strings.Contains(res.body, `"unavailable"`) {
		t.Errorf("API stream: %d %q %s, want 503 JSON with Retry-After", res.status, res.header.Get("Retry-After"), res.body)
	}
}

// The API's stream takes a token with scope read, sends what changed, and ends when the token
// is disabled.
func TestAPIEventsFollowTheTokenAndEndWhenItIsDisabled(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ctx := t.Context()
	token, err := app.tokens.CreateToken(ctx, "watcher", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	noRead, err := app.tokens.CreateToken(ctx, "starter", []string{runtime.ScopeRun})
	if err != nil {
		t.Fatal(err)
	}
	c := app.newClient()
	if _, res := c.openStream("/api/v1/events", http.Header{"Authorization": {"Bearer " + noRead}}); res.status != http.StatusForbidden {
		t.Errorf("token without scope read: %d, want 403", res.status)
	}
	if _, res := c.openStream("/api/v1/events", nil); res.status != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", res.status)
	}
	s, res := c.openStream("/api/v1/events", http.Header{"Authorization": {"Bearer " + token}})
	if s == nil || res.header.Get("Content-Type") != "text/event-stream" || res.header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("API stream: %d %v", res.status, res.header)
	}
	app.waitStreams(1)
	uuid := app.pause(runtime.RoleReviewer, "mail")
	s.untilRun(uuid, runtime.StatusWaitingApproval)
	if err := app.tokens.DisableToken(ctx, "watcher", nil); err != nil {
		t.Fatal(err)
	}
	if !s.ended() {
		t.Fatal("the stream of a disabled token is still open")
	}
}

// A token that expires while its stream is open ends the stream at the next wake, however
// recently its account was read.
func TestAPIEventsEndWhenTheTokenExpires(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	expires := time.Now().Add(2 * time.Second)
	token, err := app.tokens.CreateTokenUntil(t.Context(), "watcher", []string{runtime.ScopeRead}, expires)
	if err != nil {
		t.Fatal(err)
	}
	s, res := app.newClient().openStream("/api/v1/events", http.Header{"Authorization": {"Bearer " + token}})
	if s == nil {
		t.Fatalf("API stream: %d", res.status)
	}
	app.waitStreams(1)
	time.Sleep(time.Until(expires.Truncate(time.Second).Add(time.Second)))
	app.pause(runtime.RoleReviewer, "mail")
	if !s.ended() {
		t.Fatal("the stream of an expired token is still open")
	}
}

// Many streams and many concurrent changes: every stream is sent every change, the same
// events in the same order, ending with each run's last status, and nothing else.
func TestEventsManyStreamsSeeEveryChange(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	const streams, writers, runsEach = 12, 6, 3
	token, err := app.tokens.CreateToken(t.Context(), "watcher", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	open := make([]*sseStream, streams)
	for i := range open {
		if i%2 == 0 {
			open[i], _ = app.login(runtime.RoleSupport).openStream("/events", nil)
		} else {
			open[i], _ = app.newClient().openStream("/api/v1/events", http.Header{"Authorization": {"Bearer " + token}})
		}
	}
	app.waitStreams(streams)
	for _, s := range open {
		s.firstID()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range runsEach {
				uuid := fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", w, r)
				if _, err := app.pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, suspended_state, queued_request)
					VALUES (?, 'running', '', '')`, uuid); err != nil {
					t.Error(err)
					return
				}
				if _, err := app.pool.Exec(`UPDATE tx_nrllm_agentrun SET status = 'completed' WHERE uuid = ?`, uuid); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	var first []string
	for i, s := range open {
		final := map[string]string{}
		var got []string
		for len(final) < writers*runsEach || !allCompleted(final) {
			ev := s.next("run")
			got = append(got, ev.data)
			uuid, status, _ := strings.Cut(strings.TrimPrefix(ev.data, `{"uuid":"`), `","status":"`)
			final[uuid] = strings.TrimSuffix(status, `"}`)
		}
		if len(final) != writers*runsEach {
			t.Errorf("stream %d: events for %d runs, want %d", i, len(final), writers*runsEach)
		}
		if i == 0 {
			first = got
		} else if strings.Join(got, "\n") != strings.Join(first, "\n") {
			t.Errorf("stream %d was sent\n%s\nwant what stream 0 was sent\n%s", i, strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
	time.Sleep(100 * time.Millisecond)
	for i, s := range open {
		select {
		case ev := <-s.events:
			if ev.name == "run" {
				t.Errorf("stream %d: a further run event %+v after every run completed", i, ev)
			}
		default:
		}
	}
}

func allCompleted(final map[string]string) bool {
	for _, status := range final {
		if status != string(runtime.StatusCompleted) {
			return false
		}
	}
	return true
}
