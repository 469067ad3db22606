package reliability

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"runsdesk/db/mysqld"
)

// outage is one way the database goes away for a while.
type outage struct {
	name string
	// begin takes the database away; end brings it back.
	begin, end func(t *testing.T, db *privateDB)
}

// privateDB is a MariaDB server of this test alone, so it can be stopped.
type privateDB struct {
	srv     *mysqld.Server
	dataDir string
}

func startPrivateDB(t *testing.T) *privateDB {
	t.Helper()
	p := &privateDB{dataDir: filepath.Join(t.TempDir(), "mysql")}
	p.start(t)
	t.Cleanup(func() {
		p.signal(syscall.SIGCONT)
		_ = p.srv.Stop(context.Background())
	})
	return p
}

func (p *privateDB) start(t *testing.T) {
	t.Helper()
	srv, err := mysqld.Start(context.Background(), mysqld.Options{DataDir: p.dataDir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	p.srv = srv
}

// signal sends sig to the server process named by its pid file.
func (p *privateDB) signal(sig syscall.Signal) {
	b, err := os.ReadFile(filepath.Join(p.dataDir, "mysqld.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		_ = syscall.Kill(pid, sig)
	}
}

// outages are the two variants: a server that hangs (SIGSTOP … SIGCONT) and one that is down
// (stopped, then started again on the same data).
func outages() []outage {
	return []outage{
		{"down", func(t *testing.T, p *privateDB) {
			if err := p.srv.Stop(context.Background()); err != nil {
				t.Fatalf("stop MariaDB: %v", err)
			}
		}, func(t *testing.T, p *privateDB) { p.start(t) }},
		{"hang", func(_ *testing.T, p *privateDB) { p.signal(syscall.SIGSTOP) },
			func(_ *testing.T, p *privateDB) { p.signal(syscall.SIGCONT) }},
	}
}

// TestDatabaseOutageUnderLoad takes the database away for a few seconds while clients poll the
// inbox, a run page, the start page and the API and start runs through the API. It runs the
// "down" variant for 3 s by default; with RUNSDESK_LONG=1 both variants for 10 s each.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	length, variants := 3*time.Second, outages()[:1]
	if os.Getenv(longEnv) == "1" {
		length, variants = 10*time.Second, outages()
	}
	for _, o := range variants {
		t.Run(o.name, func(t *testing.T) {
			pdb := startPrivateDB(t)
			if err := pdb.srv.EnsureDatabase(context.Background(), "runsdesk"); err != nil {
				t.Fatal(err)
			}
			d := newDeskOn(t, "", pdb.srv.DSN("runsdesk"))
			// A segment whose writes fail while the database is away leaves its run running
			// until the lease lapses; a short lease lets this serve's reaper recover it.
			s := d.serve("RUNSDESK_REQUEST_TIMEOUT=2s", "RUNSDESK_LEASE=5s", "RUNSDESK_REAP_INTERVAL=1s")
			api := newAPI(d.token)
			api.hc.Timeout = 45 * time.Second
			var waiting []string
			for range 2 {
				waiting = append(waiting, api.waitingRun(t, s.url, cfgAsk).UUID)
			}
			p := login(t, s.url)
			p.hc.Timeout = 45 * time.Second
			probes := newProbes(s.url, p, api, api, waiting)
			probes.baseline(t)

			stop := make(chan struct{})
			var wg sync.WaitGroup
			for _, pr := range probes.list {
				wg.Go(func() { pr.poll(stop) })
			}
			time.Sleep(time.Second)
			probes.setPhase(phaseOutage)
			down := time.Now()
			probes.quiet(func() { o.begin(t, pdb) })
			time.Sleep(length / 2)
			probes.setPhase(phaseOutageLate)
			time.Sleep(length / 2)
			probes.setPhase(phaseReturning)
			o.end(t, pdb)
			back := eventually(90*time.Second, 200*time.Millisecond, probes.recovered)
			probes.setPhase(phaseAfter)
			time.Sleep(time.Second)
			close(stop)
			wg.Wait()
			if !back {
				t.Errorf("not every page answered as before within 90 s of the database's return: %s", probes.lastSeen())
			}
			if s.done() {
				t.Fatal("serve exited during the outage")
			}
			for _, pr := range probes.list {
				t.Logf("%-22s %s", pr.name, pr.summary())
				for _, bad := range pr.bad {
					t.Errorf("%s: %s", pr.name, bad)
				}
			}
			t.Logf("outage %s of %s (database away %s)", o.name, length, time.Since(down).Round(time.Second))
			for _, uuid := range probes.started() {
				api.waitStatus(t, s.url, uuid, "waiting_for_input")
			}
			stuck := countOf(t, d.sql, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE requeue_count > 0`)
			t.Logf("%d run(s) started through the API; %d recovered by the reaper", len(probes.started()), stuck)
			checkInvariants(t, d.sql)
			if n := countOf(t, d.sql, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status IN ('queued','running')`); n != 0 {
				t.Errorf("%d run(s) still queued or running after recovery", n)
			}
		})
	}
}

// Phases of an outage test.
const (
	phaseBefore     = "before"
	phaseOutage     = "outage"
	phaseOutageLate = "outage-late"
	phaseReturning  = "returning"
	phaseAfter      = "after"
)

// probe is one client that polls one endpoint and judges every answer.
type probe struct {
	name  string
	do    func() reply
	judge func(r reply, base reply) string
	set   *probes
	base  reply

	mu      sync.Mutex
	counts  map[string]int
	bad     []string
	last    reply
	slowest time.Duration
}

func (pr *probe) poll(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		pr.set.gate.RLock()
		phase, began := pr.set.phase(), time.Now()
		r := pr.do()
		took := time.Since(began)
		pr.set.gate.RUnlock()
		verdict := pr.judge(r, pr.base)
		if ended := pr.set.phase(); verdict == "" && phase == phaseOutage && ended != phaseOutage && ended != phaseOutageLate {
			verdict = "a request made in the first half of the outage was answered (" + label(r) + ") only after the database returned"
		}
		pr.mu.Lock()
		pr.last = r
		pr.slowest = max(pr.slowest, took)
		key := phase + ":" + label(r)
		pr.counts[key]++
		if verdict != "" && len(pr.bad) < 5 {
			pr.bad = append(pr.bad, phase+": "+verdict)
		}
		pr.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

func label(r reply) string {
	if r.err != nil {
		return "no-answer"
	}
	return strconv.Itoa(r.status)
}

func (pr *probe) summary() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	var parts []string
	for _, ph := range []string{phaseBefore, phaseOutage, phaseOutageLate, phaseReturning, phaseAfter} {
		var seen []string
		for k, n := range pr.counts {
			if rest, ok := strings.CutPrefix(k, ph+":"); ok {
				seen = append(seen, rest+"×"+strconv.Itoa(n))
			}
		}
		if len(seen) > 0 {
			parts = append(parts, ph+" "+strings.Join(seen, " "))
		}
	}
	return strings.Join(parts, "; ") + "; slowest answer " + pr.slowest.Round(10*time.Millisecond).String()
}

// probes is the set of clients of one outage test.
type probes struct {
	// gate lets the database stop between requests (quiet), not in the middle of one: a
	// store call failing mid-request is TestPagesAnswer503WhenAStoreFails.
	gate    sync.RWMutex
	mu      sync.Mutex
	current string
	list    []*probe
	runs    []string
}

func (ps *probes) phase() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.current
}

func (ps *probes) setPhase(p string) {
	ps.mu.Lock()
	ps.current = p
	ps.mu.Unlock()
}

// quiet runs f while no request is in flight.
func (ps *probes) quiet(f func()) {
	ps.gate.Lock()
	defer ps.gate.Unlock()
	f()
}

func (ps *probes) addStarted(uuid string) {
	ps.mu.Lock()
	ps.runs = append(ps.runs, uuid)
	ps.mu.Unlock()
}

// started returns the runs the API accepted (201) while the test ran.
func (ps *probes) started() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]string(nil), ps.runs...)
}

// baseline records every endpoint's answer while the database is up.
func (ps *probes) baseline(t *testing.T) {
	t.Helper()
	for _, pr := range ps.list {
		pr.base = pr.do()
		if pr.base.err != nil || pr.base.status >= 500 {
			t.Fatalf("%s before the outage: %d %v", pr.name, pr.base.status, pr.base.err)
		}
	}
}

// recovered reports whether every endpoint answers as it did before the outage.
func (ps *probes) recovered() bool {
	for _, pr := range ps.list {
		if r := pr.do(); r.err != nil || r.status != pr.base.status {
			return false
		}
	}
	return true
}

func (ps *probes) lastSeen() string {
	var out []string
	for _, pr := range ps.list {
		pr.mu.Lock()
		out = append(out, pr.name+"="+label(pr.last))
		pr.mu.Unlock()
	}
	return strings.Join(out, " ")
}

// newProbes builds the clients: the inbox, a run page and the start page (HTML, signed in),
// and the API's run endpoint (reader's token) and start endpoint (starter's token).
func newProbes(base string, p *person, reader, starter *apiClient, waiting []string) *probes {
	ps := &probes{current: phaseBefore}
	page := func(path string) func() reply { return func() reply { return p.get(base + path) } }
	ps.list = []*probe{
		{name: "GET /runs", do: page("/runs"), judge: judgeInbox(waiting)},
		{name: "GET /runs/{uuid}", do: page("/runs/" + waiting[0]), judge: judgePage},
		{name: "GET /", do: page("/"), judge: judgePage},
		{name: "GET /api/v1/runs/{uuid}", do: func() reply { return reader.call(http.MethodGet, base+"/api/v1/runs/"+waiting[0], nil) }, judge: judgeAPI},
		{name: "POST /api/v1/runs", judge: judgeAPI},
	}
	start := ps.list[len(ps.list)-1]
	start.do = func() reply {
		r := starter.call(http.MethodPost, base+"/api/v1/runs", map[string]string{"configuration": cfgAsk, "prompt": "during the outage"})
		var run runJSON
		if r.err == nil && r.status == http.StatusCreated && json.Unmarshal([]byte(r.body), &run) == nil {
			ps.addStarted(run.UUID)
		}
		return r
	}
	for _, pr := range ps.list {
		pr.set, pr.counts = ps, map[string]int{}
	}
	return ps
}

// leaks are words that must not appear in an error page or body: details of the database.
func leaks() []string {
	return []string{"mysql", "mariadb", "wsrep", "sql:", "driver", "dial unix", "mysqld.sock", "connection refused", "broken pipe", "invalid connection", "goroutine"}
}

func leaked(body string) string {
	low := strings.ToLower(body)
	for _, w := range leaks() {
		if strings.Contains(low, w) {
			return w
		}
	}
	return ""
}

// judgePage accepts the page's usual answer or an honest 503 HTML error page.
func judgePage(r reply, base reply) string {
	switch {
	case r.err != nil:
		return "no answer: " + r.err.Error()
	case r.status == base.status:
		return ""
	case r.status != http.StatusServiceUnavailable:
		return "status " + strconv.Itoa(r.status) + ", want " + strconv.Itoa(base.status) + " or 503: " + tail(r.body, 200)
	case !strings.HasPrefix(r.ctype, "text/html"):
		return "503 of type " + r.ctype
	case leaked(r.body) != "":
		return "503 page names " + leaked(r.body)
	}
	return ""
}

// judgeInbox is judgePage, and a 200 inbox must still list the waiting runs.
func judgeInbox(waiting []string) func(reply, reply) string {
	return func(r reply, base reply) string {
		if v := judgePage(r, base); v != "" {
			return v
		}
		if r.status != http.StatusOK {
			return ""
		}
		for _, uuid := range waiting {
			if !strings.Contains(r.body, uuid) {
				return "200 inbox without the waiting run " + uuid
			}
		}
		return ""
	}
}

// judgeAPI accepts a 2xx or a JSON 503 {"error":{"code","message"}}.
func judgeAPI(r reply, _ reply) string {
	if r.err != nil {
		return "no answer: " + r.err.Error()
	}
	if r.status < 300 {
		return ""
	}
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	switch {
	case r.status != http.StatusServiceUnavailable:
		return "status " + strconv.Itoa(r.status) + ": " + tail(r.body, 200)
	case !strings.HasPrefix(r.ctype, "application/json") || json.Unmarshal([]byte(r.body), &body) != nil || body.Error.Code == "":
		return "503 that is not the API's JSON error: " + tail(r.body, 200)
	case leaked(r.body) != "":
		return "503 names " + leaked(r.body)
	}
	return ""
}
