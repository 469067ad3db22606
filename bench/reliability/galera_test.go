package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/app"
	"runsdesk/db"
	"runsdesk/internal/testcluster"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
)

// galeraCluster is the 3-node Galera cluster the Galera tests of this binary share; it is
// started by the first of them and stopped by TestMain. Without galera-4 they skip (fail
// with RUNSDESK_REQUIRE_GALERA=1, as in CI).
var galeraCluster testcluster.Harness

// cfgNotify pauses for approval of a read-only HTTP tool marked requires_approval, the kind of
// turn a service account may approve through the API.
const cfgNotify = "notify"

const notifyYAML = `configurations:
  - identifier: notify
    name: Notify the customer
    max_iterations: 5
    tools: [notify]
    provider:
      kind: scripted
      script:
        - tool_calls:
            - name: notify
              arguments: {"order_id": "A-1"}
        - content: Notified.
tools:
  - name: notify
    description: Tell the customer their refund is on its way.
    parameters: {type: object, properties: {order_id: {type: string}}}
    requires_approval: true
    http: {url: "%s/notify", timeout: 10s}
`

// galeraDesk is newDesk on a fresh database of the shared cluster (prepared through node 1,
// with the notify configuration added) and one serve process per node, each with its own DSN
// and env.
func galeraDesk(t *testing.T, env ...string) (*desk, []*server) {
	t.Helper()
	c := galeraCluster.Cluster(t)
	t.Logf("Galera cluster of %d nodes (synced in %s at first use)", c.Size(), galeraCluster.StartTime().Round(time.Second))
	name := c.NewDatabase(t)
	d := newDeskOn(t, "", c.DSN(1, name))
	file := filepath.Join(t.TempDir(), "notify.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(notifyYAML, d.tools.srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	d.mustCLI("", "apply", "-f", file)
	servers := make([]*server, c.Size())
	for i := range servers {
		servers[i] = d.serve(append([]string{"RUNSDESK_DSN=" + c.DSN(i+1, name)}, env...)...)
	}
	return d, servers
}

// approvers creates n service accounts that may approve (the API's rate limit is per token
// and process, so concurrent approvals spread over several).
func approvers(t *testing.T, d *desk, n int) []*apiClient {
	t.Helper()
	out := make([]*apiClient, n)
	for i := range out {
		tok := strings.TrimSpace(d.mustCLI("", "token", "create", "--name", "approver-"+strconv.Itoa(i), "--scopes", "run,read,approve"))
		out[i] = newAPI(tok)
	}
	return out
}

// approve posts an approval of run's pending turn to base.
func (a *apiClient) approve(base, run, digest, key string) reply {
	return a.call(http.MethodPost, base+"/api/v1/runs/"+run+"/approval",
		map[string]any{"approved": true, "turn_digest": digest, "idempotency_key": key})
}

// Several processes migrating one database at once through different nodes apply each file
// once and all succeed: the migration lock is a row the whole cluster agrees on (GET_LOCK,
// local to a node on Galera, let two nodes apply the same file).
func TestGaleraMigrateOnEveryNodeAtOnce(t *testing.T) {
	c := galeraCluster.Cluster(t)
	name := c.NewDatabase(t)
	bin := buildBinary(t, "")
	const perNode = 2
	results := make([]cliResult, c.Size()*perNode)
	var ready, wg sync.WaitGroup
	ready.Add(1)
	for i := range results {
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "RUNSDESK_DSN=" + c.DSN(i%c.Size()+1, name), "RUNSDESK_LOG_LEVEL=warn"}
		wg.Go(func() {
			ready.Wait()
			results[i] = runCLI(t, bin, env, "", "migrate")
		})
	}
	ready.Done()
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("migrate #%d through node %d: exit %d\n%s%s", i, i%c.Size()+1, r.code, r.stdout, r.stderr)
		}
	}
	pool, err := db.Open(t.Context(), c.DSN(2, name))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if n, err := db.Pending(t.Context(), pool); err != nil || n != 0 {
		t.Errorf("pending migrations after %d concurrent runs: %d, %v; want 0", len(results), n, err)
	}
	if n := countOf(t, pool, `SELECT COUNT(*) FROM schema_migrations_lock`); n != 0 {
		t.Errorf("%d migration lock row(s) left, want 0", n)
	}
}

// TestGaleraConcurrentInputSubmissions is TestConcurrentInputSubmissions with each serve
// process on its own node: the same guarded UPDATE succeeds on all three nodes at once and
// certification lets one commit; the losers' whole transactions are retried and find the run
// already resuming.
func TestGaleraConcurrentInputSubmissions(t *testing.T) {
	d, servers := galeraDesk(t)
	concurrentInputSubmissions(t, d, servers)
}

// TestGaleraConcurrentAPIApprovals posts one approval 64 times at once through the API,
// spread over three serve processes on three nodes. Same key: every answer is 202, 63 of
// them replays of the first. Different keys: one 202, the rest 409 "already handled".
// Either way one decision, one approval event and one tool call; no 5xx.
func TestGaleraConcurrentAPIApprovals(t *testing.T) {
	d, servers := galeraDesk(t)
	apis := approvers(t, d, 4)
	for _, variant := range []struct {
		name    string
		sameKey bool
		want    map[int]int
	}{
		{"same key", true, map[int]int{http.StatusAccepted: concurrentPosts}},
		{"different keys", false, map[int]int{http.StatusAccepted: 1, http.StatusConflict: concurrentPosts - 1}},
	} {
		t.Run(variant.name, func(t *testing.T) {
			run := apis[0].waitingRun(t, servers[0].url, cfgNotify)
			key := newKey()
			replies := make([]reply, concurrentPosts)
			var ready, wg sync.WaitGroup
			ready.Add(1)
			for i := range concurrentPosts {
				k := key
				if !variant.sameKey {
					k = newKey()
				}
				srv, api := servers[i%len(servers)], apis[(i/len(servers))%len(apis)]
				wg.Go(func() {
					ready.Wait()
					replies[i] = api.approve(srv.url, run.UUID, run.Pending.TurnDigest, k)
				})
			}
			ready.Done()
			wg.Wait()
			got := map[int]int{}
			for i, r := range replies {
				if r.err != nil || r.status >= 500 {
					t.Errorf("approval %d: %d %v %.200s", i, r.status, r.err, r.body)
				}
				got[r.status]++
			}
			if fmt.Sprint(got) != fmt.Sprint(variant.want) {
				t.Errorf("answers by status: %v, want %v", got, variant.want)
			}
			final := apis[0].waitStatus(t, servers[2].url, run.UUID, "completed", "failed")
			if final.Status != "completed" {
				t.Errorf("run ended %s (%s), want completed", final.Status, final.TerminationReason)
			}
			if n := decisions(t, d.sql, run.UUID); n != 1 {
				t.Errorf("%d decisions stored, want 1", n)
			}
			if n := events(t, d.sql, run.UUID, "approval"); n != 1 {
				t.Errorf("%d approval events, want 1", n)
			}
			if calls := d.tools.forRun(run.UUID); len(calls) != 1 {
				t.Errorf("tool endpoint received %d calls, want 1", len(calls))
			}
			t.Logf("%d approvals over %d processes on %d nodes: %v", concurrentPosts, len(servers), len(servers), got)
			checkInvariants(t, d.sql)
		})
	}
}

// On a Galera node a process opens no batch pool: the cluster reports a transaction it aborted
// to the next command, not to the statement running, so a batched transition could answer
// success for a claim that was rolled back (db.OpenBatches); TestGaleraConcurrentAPIApprovals
// is the race that showed it.
func TestGaleraOpensNoBatchPool(t *testing.T) {
	c := galeraCluster.Cluster(t)
	for i := range c.Size() {
		pool, err := db.OpenBatches(t.Context(), c.DSN(i+1, ""))
		if err != nil || pool != nil {
			t.Errorf("OpenBatches on node %d: pool %v, err %v; want no pool and no error", i+1, pool, err)
		}
	}
}

// A person who submits input through one node and reads the run through another sees their
// decision: runsdesk's pools on a Galera node make reads causal (wsrep_sync_wait = 1).
func TestGaleraDecisionSeenOnAnotherNode(t *testing.T) {
	d, servers := galeraDesk(t)
	var wait int
	if err := d.sql.QueryRow(`SELECT @@session.wsrep_sync_wait`).Scan(&wait); err != nil || wait != 1 {
		t.Fatalf("wsrep_sync_wait of a pool on a Galera node: %d, %v; want 1", wait, err)
	}
	p := login(t, servers[0].url)
	api := newAPI(d.token)
	for i := range 2 * len(servers) {
		post, read := servers[i%len(servers)], servers[(i+1)%len(servers)]
		run := api.waitingRun(t, post.url, cfgAsk)
		r := p.submitInput(post.url, run.UUID, p.inputForm(run.Pending.TurnDigest, newKey(), "7"))
		if r.err != nil || r.status != http.StatusSeeOther || r.location != "/runs/"+run.UUID {
			t.Fatalf("submit: %d Location %q err %v", r.status, r.location, r.err)
		}
		page := p.get(read.url + r.location)
		got, err := api.get(read.url, run.UUID)
		if page.status != http.StatusOK || err != nil || got.Status == "waiting_for_input" {
			t.Errorf("run %s read on another node right after the decision: page %d, API status %q (%v); want the decision seen",
				run.UUID, page.status, got.Status, err)
		}
	}
}

// A decision the load makes: input through the web form or an approval through the API, on
// one serve process, with one idempotency key it keeps until the decision is accepted.
type pendingDecision struct {
	run      runJSON
	srv      *server
	approval bool
	key      string
	accepted bool
	answers  map[string]int
}

func (pd *pendingDecision) try(p *person, api *apiClient) reply {
	if pd.approval {
		return api.approve(pd.srv.url, pd.run.UUID, pd.run.Pending.TurnDigest, pd.key)
	}
	return p.submitInput(pd.srv.url, pd.run.UUID, p.inputForm(pd.run.Pending.TurnDigest, pd.key, "3"))
}

// TestGaleraNodeKilledUnderLoad kills node 3 with SIGKILL for 10 s while clients read the
// inbox, run pages and the API, start runs, submit input and approve through all three serve
// processes. The process on the killed node answers 503 (never a 5xx of another kind, never
// a database detail) and serves again once the node rejoined; the processes on the other two
// nodes serve on (503s only while the cluster evicts the dead node, in the first half of the
// outage). Afterwards every decision was applied exactly once (one decision, one event, one
// tool call, run completed), the data model's invariants hold and no run is stuck.
func TestGaleraNodeKilledUnderLoad(t *testing.T) {
	const killed, outage = 3, 10 * time.Second
	c := galeraCluster.Cluster(t)
	d, servers := galeraDesk(t, "RUNSDESK_REQUEST_TIMEOUT=2s", "RUNSDESK_LEASE=5s", "RUNSDESK_REAP_INTERVAL=1s")
	api := newAPI(d.token)
	api.hc.Timeout = 45 * time.Second
	// One token per API probe and process: the API's rate limit is per token and process.
	clients := approvers(t, d, 1+2*len(servers))
	for _, c := range clients {
		c.hc.Timeout = 45 * time.Second
	}
	approver := clients[0]
	p := login(t, servers[0].url)
	p.hc.Timeout = 45 * time.Second

	waiting := []string{api.waitingRun(t, servers[0].url, cfgAsk).UUID}
	var load []*pendingDecision
	for i := range 12 {
		cfg := cfgAsk
		if i%2 == 1 {
			cfg = cfgNotify
		}
		srv := servers[i%len(servers)]
		load = append(load, &pendingDecision{run: api.waitingRun(t, srv.url, cfg), srv: srv, approval: cfg == cfgNotify,
			key: newKey(), answers: map[string]int{}})
	}
	sets := make([]*probes, len(servers))
	for i, srv := range servers {
		sets[i] = newProbes(srv.url, p, clients[1+2*i], clients[2+2*i], waiting)
		if i+1 != killed {
			survivor := sets[i]
			for _, pr := range survivor.list {
				judge := pr.judge
				pr.judge = func(r reply, base reply) string {
					if r.status == http.StatusServiceUnavailable && survivor.phase() == phaseOutageLate {
						return "503 from a node that stayed in the cluster, after the dead node was evicted"
					}
					return judge(r, base)
				}
			}
		}
		sets[i].baseline(t)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, ps := range sets {
		for _, pr := range ps.list {
			wg.Go(func() { pr.poll(stop) })
		}
	}
	var mu sync.Mutex
	var badDecisions []string
	decide := func(pd *pendingDecision) {
		r := pd.try(p, approver)
		mu.Lock()
		defer mu.Unlock()
		pd.answers[label(r)]++
		switch {
		case !pd.approval && r.err == nil && r.status == http.StatusSeeOther && r.location == "/runs/"+pd.run.UUID,
			pd.approval && r.err == nil && r.status == http.StatusAccepted:
			pd.accepted = true
		case r.err == nil && r.status == http.StatusServiceUnavailable:
		default:
			badDecisions = append(badDecisions, fmt.Sprintf("run %s on %s: %s %.200s", pd.run.UUID, pd.srv.url, label(r), r.body))
		}
	}
	deciding := make(chan struct{})
	go func() {
		defer close(deciding)
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			open := 0
			for _, pd := range load {
				mu.Lock()
				done := pd.accepted
				mu.Unlock()
				if !done {
					open++
					decide(pd)
					time.Sleep(1500 * time.Millisecond / time.Duration(len(servers)))
				}
			}
			if open == 0 {
				return
			}
		}
	}()

	setPhase := func(ph string) {
		for _, ps := range sets {
			ps.setPhase(ph)
		}
	}
	time.Sleep(2 * time.Second)
	setPhase(phaseOutage)
	down := time.Now()
	if err := c.Kill(killed); err != nil {
		t.Fatal(err)
	}
	time.Sleep(outage / 2)
	setPhase(phaseOutageLate)
	if r := p.get(servers[killed-1].url + "/readyz"); r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz of the process on the killed node: %d %v, want 503", r.status, r.err)
	}
	if r := p.get(servers[0].url + "/readyz"); r.status != http.StatusOK {
		t.Errorf("/readyz of the process on node 1 while node %d is down: %d %v, want 200", killed, r.status, r.err)
	}
	time.Sleep(outage / 2)
	setPhase(phaseReturning)
	if err := c.Restart(context.Background(), killed); err != nil {
		t.Fatalf("node %d did not rejoin: %v", killed, err)
	}
	rejoined := time.Since(down)
	back := eventually(90*time.Second, 200*time.Millisecond, func() bool {
		for _, ps := range sets {
			if !ps.recovered() {
				return false
			}
		}
		return true
	})
	setPhase(phaseAfter)
	time.Sleep(time.Second)
	<-deciding
	close(stop)
	wg.Wait()
	if !back {
		t.Errorf("not every page answered as before within 90 s of the node's return")
	}
	for i, ps := range sets {
		for _, pr := range ps.list {
			t.Logf("node %d %-22s %s", i+1, pr.name, pr.summary())
			for _, bad := range pr.bad {
				t.Errorf("node %d %s: %s", i+1, pr.name, bad)
			}
		}
	}
	for _, bad := range badDecisions {
		t.Errorf("decision answered neither as accepted nor 503: %s", bad)
	}
	t.Logf("node %d killed, back and synced after %s", killed, rejoined.Round(100*time.Millisecond))

	for _, pd := range load {
		if !pd.accepted {
			t.Errorf("decision on run %s through %s never accepted: %v", pd.run.UUID, pd.srv.url, pd.answers)
			continue
		}
		kind := "input"
		if pd.approval {
			kind = "approval"
		}
		final := api.waitStatus(t, servers[0].url, pd.run.UUID, "completed", "failed")
		if final.Status != "completed" {
			t.Errorf("run %s ended %s (%s), want completed", pd.run.UUID, final.Status, final.TerminationReason)
		}
		if n, e := decisions(t, d.sql, pd.run.UUID), events(t, d.sql, pd.run.UUID, kind); n != 1 || e != 1 {
			t.Errorf("run %s: %d decisions and %d %s events, want 1 and 1", pd.run.UUID, n, e, kind)
		}
		if calls := d.tools.forRun(pd.run.UUID); len(calls) != 1 {
			t.Errorf("run %s: tool endpoint received %d calls, want 1", pd.run.UUID, len(calls))
		}
		t.Logf("%s on run %s through %s: %v", kind, pd.run.UUID, pd.srv.url, pd.answers)
	}
	stuck := `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status IN ('queued','running')`
	if !eventually(90*time.Second, 500*time.Millisecond, func() bool { return countOf(t, d.sql, stuck) == 0 }) {
		t.Errorf("%d run(s) still queued or running 90 s after the node rejoined", countOf(t, d.sql, stuck))
	}
	started := 0
	for _, ps := range sets {
		started += len(ps.started())
	}
	t.Logf("%d run(s) started through the API during the test; %d requeued by a reaper", started,
		countOf(t, d.sql, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE requeue_count > 0`))
	checkInvariants(t, d.sql)
}

// The reaper running on all three nodes at once over the same lapsed leases requeues or
// dead-letters each run exactly once: a guarded UPDATE that every node runs at once commits
// on one, the others' transactions fail certification and, retried, find the run moved on.
func TestGaleraReapersOnEveryNode(t *testing.T) {
	ctx := t.Context()
	pools := poolPerNode(t)
	pool := pools[0]
	rts := make([]*engine.Runtime, len(pools))
	for i, p := range pools {
		rts[i] = app.NewRuntime(app.Config{DB: p})
	}
	const runs = 60
	now := time.Now().Unix()
	store := db.New(pool)
	wantRequeued := 0
	for i := range runs {
		request := `{"prompt":"resume me"}`
		if i%3 == 0 {
			request = ""
		} else {
			wantRequeued++
		}
		if _, err := store.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), QueuedRequest: request,
			Lease: runtime.Lease{Owner: "worker-that-died", Expires: now - 30, Now: now - 60}, Now: now - 60}); err != nil {
			t.Fatal(err)
		}
	}
	reports := make([]engine.ReapReport, len(rts))
	errs := make([]error, len(rts))
	var ready, wg sync.WaitGroup
	ready.Add(1)
	for i, rt := range rts {
		wg.Go(func() {
			ready.Wait()
			reports[i], errs[i] = rt.Reap(ctx, 2*runs)
		})
	}
	ready.Done()
	wg.Wait()
	requeued, dead := 0, 0
	for i, rep := range reports {
		if errs[i] != nil {
			t.Errorf("reaper on node %d: %v", i+1, errs[i])
		}
		requeued += rep.Requeued
		dead += rep.DeadLettered
		t.Logf("node %d: %s", i+1, rep)
	}
	if requeued != wantRequeued || dead != runs-wantRequeued {
		t.Errorf("reapers on %d nodes together requeued %d and dead-lettered %d, want %d and %d (each run once)",
			len(rts), requeued, dead, wantRequeued, runs-wantRequeued)
	}
	if n := countOf(t, pool, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status = 'queued' AND requeue_count = 1`); n != wantRequeued {
		t.Errorf("%d runs queued with requeue_count 1, want %d", n, wantRequeued)
	}
	if n := countOf(t, pool, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status = 'failed' AND termination_reason = ?`, runtime.ReasonNotRetryable); n != runs-wantRequeued {
		t.Errorf("%d runs dead-lettered, want %d", n, runs-wantRequeued)
	}
	if n := countOf(t, pool, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE requeue_count > 1`); n != 0 {
		t.Errorf("%d runs requeued more than once", n)
	}
}

// Writes outside a transaction are retried too: one person's session row written at once
// through all three nodes (parallel requests of one browser, each changing the session)
// makes Galera reject commits that certify against each other; every write still succeeds
// and the row holds one of the written values.
func TestGaleraSessionWritesOnEveryNodeAtOnce(t *testing.T) {
	ctx := t.Context()
	pools := poolPerNode(t)
	pool := pools[0]
	stores := make([]*db.SessionStore, len(pools))
	for i, p := range pools {
		stores[i] = db.NewSessionStore(p, db.DefaultSessionExpirySlack)
	}
	const writersPerNode, writes = 6, 15
	token := newKey()
	errs := make(chan error, len(stores)*writersPerNode*writes)
	var ready, wg sync.WaitGroup
	ready.Add(1)
	for i := range len(stores) * writersPerNode {
		store := stores[i%len(stores)]
		wg.Go(func() {
			ready.Wait()
			for n := range writes {
				data := []byte(fmt.Sprintf("writer %d write %d", i, n))
				if err := store.CommitCtx(ctx, token, data, time.Now().Add(time.Hour)); err != nil {
					errs <- err
				}
			}
		})
	}
	ready.Done()
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed++; failed <= 3 {
			t.Errorf("session write: %v", err)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d session writes failed", failed, len(stores)*writersPerNode*writes)
	}
	var data string
	if err := pool.QueryRow(`SELECT data FROM sessions WHERE token = ?`, token).Scan(&data); err != nil || !strings.HasPrefix(data, "writer ") {
		t.Errorf("session row after the writes: %q, %v", data, err)
	}
}

// poolPerNode creates a migrated database on the shared cluster and opens one pool to it on
// each node, in node order; the pools are closed when the test ends.
func poolPerNode(t *testing.T) []*sql.DB {
	t.Helper()
	c := galeraCluster.Cluster(t)
	name := c.NewDatabase(t)
	if err := db.Migrate(t.Context(), c.DSN(1, name)); err != nil {
		t.Fatal(err)
	}
	pools := make([]*sql.DB, c.Size())
	for i := range pools {
		p, err := db.Open(t.Context(), c.DSN(i+1, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		pools[i] = p
	}
	return pools
}
