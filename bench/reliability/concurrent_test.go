package reliability

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// concurrentPosts is how many people-clicks hit the three serve processes at once.
const concurrentPosts = 64

// TestConcurrentInputSubmissions posts one valid input form 64 times at once, spread over
// three serve processes on one database, with three sessions of the same admin (each request
// uses a session that may have signed in on another process). Variant "same form": every
// post carries the same turn digest and idempotency key (a double click, a browser retry);
// variant "different keys": 64 renders of the same turn. Either way exactly one decision and
// one input event are stored and the tool endpoint receives the person's amount once. A post
// of the same form is a 303 to the run page (the first outcome or its replay); a post of
// another form is the run page with 409 naming the decision that came first ("already
// handled" in the audit).
func TestConcurrentInputSubmissions(t *testing.T) {
	d := newDesk(t, "")
	concurrentInputSubmissions(t, d, []*server{d.serve(), d.serve(), d.serve()})
}

// concurrentInputSubmissions is TestConcurrentInputSubmissions on the serve processes
// servers of desk d.
func concurrentInputSubmissions(t *testing.T, d *desk, servers []*server) {
	people := make([]*person, len(servers))
	for i, s := range servers {
		people[i] = login(t, s.url)
	}
	api := newAPI(d.token)
	for _, variant := range []struct {
		name     string
		sameKey  bool
		answered string
	}{
		{"same form", true, "success/replayed"},
		{"different keys", false, "failure/run_already_resuming"},
	} {
		t.Run(variant.name, func(t *testing.T) {
			run := api.waitingRun(t, servers[0].url, cfgAsk)
			key := newKey()
			replies := make([]reply, concurrentPosts)
			var ready, wg sync.WaitGroup
			ready.Add(1)
			for i := range concurrentPosts {
				k := key
				if !variant.sameKey {
					k = newKey()
				}
				srv, who := servers[i%len(servers)], people[(i/len(servers))%len(people)]
				form := who.inputForm(run.Pending.TurnDigest, k, "42.5")
				wg.Go(func() {
					ready.Wait()
					replies[i] = who.submitInput(srv.url, run.UUID, form)
				})
			}
			ready.Done()
			wg.Wait()

			want := "/runs/" + run.UUID
			accepted := 0
			for i, r := range replies {
				switch {
				case r.err == nil && r.status == http.StatusSeeOther && r.location == want:
					accepted++
				case r.err == nil && !variant.sameKey && r.status == http.StatusConflict && strings.Contains(r.body, "This run was already decided"):
				default:
					t.Errorf("post %d: %d Location %q err %v; want 303 to %s, or (another form's) 409 naming the decision", i, r.status, r.location, r.err, want)
				}
			}
			if wantAccepted := map[bool]int{true: concurrentPosts, false: 1}[variant.sameKey]; accepted != wantAccepted {
				t.Errorf("%d posts answered 303, want %d", accepted, wantAccepted)
			}
			final := api.waitStatus(t, servers[1].url, run.UUID, "completed", "failed")
			if final.Status != "completed" {
				t.Errorf("run ended %s (%s), want completed", final.Status, final.TerminationReason)
			}
			if n := decisions(t, d.sql, run.UUID); n != 1 {
				t.Errorf("%d decisions stored, want 1", n)
			}
			if n := events(t, d.sql, run.UUID, "input"); n != 1 {
				t.Errorf("%d input events, want 1", n)
			}
			calls := d.tools.forRun(run.UUID)
			if len(calls) != 1 || !sameJSON(calls[0].Arguments, []byte(`{"order_id":"A-1","amount":42.5}`)) {
				t.Errorf("tool endpoint received %+v; want the overlaid arguments once", calls)
			}
			audit := auditOf(t, d.sql, run.UUID, "input_submit")
			if audit["success/"] != 1 || audit["success/"]+audit[variant.answered] != concurrentPosts || len(audit) > 2 {
				t.Errorf("audit of the %d posts: %v; want 1 success/ and the rest %s", concurrentPosts, audit, variant.answered)
			}
			t.Logf("%d posts over %d processes: %d answered 303, the rest 409; audit %v; decisions 1; tool calls %d",
				concurrentPosts, len(servers), accepted, fmt.Sprint(audit), len(calls))
			checkInvariants(t, d.sql)
		})
	}
}
