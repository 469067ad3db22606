package seed

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The pause statuses a Template may have.
const (
	StatusApproval = "waiting_for_approval"
	StatusInput    = "waiting_for_input"
)

const sqlRunsHead = `INSERT INTO tx_nrllm_agentrun (uid, uuid, status, configuration_uid,
	configuration_identifier, be_user, iterations, total_prompt_tokens, total_completion_tokens,
	total_tokens, estimated_cost, termination_reason, error_class, suspended_state,
	queued_request, claimed_by, lease_expires, pending_tools, started_at, finished_at,
	suspended_at, tstamp, crdate, pause_sequence, has_drafts, assignee, assignee_name, assigned_at) VALUES `

const runColumnsN = 28

const sqlEventsHead = `INSERT INTO tx_nrllm_agentrun_event
	(run, sequence, kind, round, duration_ms, payload, crdate) VALUES `

const eventColumnsN = 7

const sqlDecisionsHead = `INSERT INTO tx_runsdesk_decision
	(run, idempotency_key, kind, approved, decided_by, crdate, arguments) VALUES `

const decisionColumnsN = 7

type runRow struct {
	uid                              int64
	uuid, status, cfgIdent           string
	cfgUID, beUser                   int64
	iterations                       int
	prompt, completion               int64
	cost                             float64
	reason, errorClass               string
	state, request, claimedBy, tools string
	lease, started, finished         int64
	suspended, tstamp, crdate        int64
	// pauseSequence is the next event sequence of a waiting run (its events are 0…n-1), as a
	// suspend records it; -1 for the others. hasDrafts is false for a waiting run (it has
	// none, as after a suspend).
	pauseSequence int
	hasDrafts     bool
	// assignee (0: unassigned), assigneeName and assignedAt are a waiting run's assignment.
	assignee     int64
	assigneeName string
	assignedAt   int64
}

type eventRow struct {
	run        int64
	sequence   int
	kind       string
	round      int
	durationMS float64
	payload    string
	crdate     int64
}

type decisionRow struct {
	run       int64
	key, kind string
	approved  bool
	decidedBy int64
	crdate    int64
}

type batch struct {
	runs      []runRow
	events    []eventRow
	decisions []decisionRow
}

func (b batch) runArgs() []any {
	out := make([]any, 0, len(b.runs)*runColumnsN)
	for _, r := range b.runs {
		out = append(out, r.uid, r.uuid, r.status, r.cfgUID, r.cfgIdent, r.beUser, r.iterations,
			r.prompt, r.completion, r.prompt+r.completion, r.cost, r.reason, r.errorClass,
			r.state, r.request, r.claimedBy, r.lease, r.tools, r.started, r.finished,
			r.suspended, r.tstamp, r.crdate, r.pauseSequence, r.hasDrafts, r.assignee, r.assigneeName, r.assignedAt)
	}
	return out
}

func (b batch) eventArgs() []any {
	out := make([]any, 0, len(b.events)*eventColumnsN)
	for _, e := range b.events {
		out = append(out, e.run, e.sequence, e.kind, e.round, e.durationMS, e.payload, e.crdate)
	}
	return out
}

func (b batch) decisionArgs() []any {
	out := make([]any, 0, len(b.decisions)*decisionColumnsN)
	for _, d := range b.decisions {
		out = append(out, d.run, d.key, d.kind, d.approved, d.decidedBy, d.crdate, "")
	}
	return out
}

// generator produces the rows of consecutive batches deterministically.
type generator struct {
	o        Options
	rnd      *rand.Rand
	next     int64
	i        int
	byKind   map[string][]Template
	kinds    []string
	paused   int
	running  int
	terminal int
	// runsOnly generates runs without events and decisions.
	runsOnly bool
}

func newGenerator(o Options, first int64) *generator {
	g := &generator{o: o, rnd: newRand(o.RandSeed, 0x5eed), next: first, byKind: map[string][]Template{}}
	for _, t := range o.Templates {
		if g.byKind[t.Status] == nil {
			g.kinds = append(g.kinds, t.Status)
		}
		g.byKind[t.Status] = append(g.byKind[t.Status], t)
	}
	return g
}

func (g *generator) batch(n int) batch {
	var b batch
	b.runs = make([]runRow, 0, n)
	for range n {
		r := g.run()
		b.runs = append(b.runs, r)
		switch {
		case g.runsOnly:
		case r.suspended > 0:
			b.events = append(b.events, g.events(r)...)
		case r.finished > 0 && g.terminal%5 == 0:
			b.decisions = append(b.decisions, g.decision(r))
		}
	}
	return b
}

// run returns the next row: per hundred, WaitingPercent paused, then one queued, one
// running, the rest terminal.
func (g *generator) run() runRow {
	k := g.i % 100
	g.i++
	uid := g.next
	g.next++
	now := g.o.Now
	spread := int64(g.o.Spread.Seconds())
	r := runRow{uid: uid, uuid: g.uuid(), beUser: 1 + g.rnd.Int64N(int64(g.o.BeUsers)), pauseSequence: -1, hasDrafts: true}
	r.crdate = now - g.rnd.Int64N(spread)
	r.started, r.tstamp = r.crdate, r.crdate
	w := g.o.WaitingPercent
	switch {
	case k < w:
		g.paused++
		kind := g.kinds[g.paused%len(g.kinds)]
		ts := g.byKind[kind]
		t := ts[(g.paused/len(g.kinds))%len(ts)]
		r.status, r.cfgUID, r.cfgIdent = t.Status, t.ConfigurationUID, t.ConfigurationIdentifier
		r.state, r.tools = t.State, strings.Join(t.Tools, ",")
		r.iterations = 1 + g.rnd.IntN(4)
		r.prompt, r.completion = 200+g.rnd.Int64N(4000), 20+g.rnd.Int64N(400)
		r.suspended = min(now, r.crdate+1+g.rnd.Int64N(600))
		r.tstamp = r.suspended
		r.pauseSequence, r.hasDrafts = g.o.EventsPerWaiting, false
		g.assign(&r)
	case k == w:
		g.pickConfiguration(&r)
		r.status, r.started = "queued", 0
		r.crdate = now - g.rnd.Int64N(3600)
		r.tstamp = r.crdate
		r.request = fmt.Sprintf(`{"kind":"start","prompt":"Seeded run %d: please look at order A-%04d.","requestedBy":%d}`, uid, g.rnd.IntN(10000), r.beUser)
	case k == w+1:
		g.pickConfiguration(&r)
		r.status, r.claimedBy = "running", "worker:seed:1:00000000"
		r.crdate = now - g.rnd.Int64N(3600)
		r.started, r.tstamp = r.crdate, r.crdate
		g.running++
		r.lease = now + 900
		if g.running%2 == 0 {
			r.lease = now - 1 - g.rnd.Int64N(600)
		}
		r.request = `{"kind":"start","prompt":"Seeded running run."}`
	default:
		g.terminal++
		g.pickConfiguration(&r)
		g.settle(&r)
	}
	return r
}

// assign gives waiting run r its share of the assignment: of len(Assignees)+1 equal shares,
// picked by a hash of the uid (so the share is independent of the run's kind and template,
// and of the random stream), the first stays unassigned and each other goes to one assignee.
func (g *generator) assign(r *runRow) {
	n := uint64(len(g.o.Assignees))
	if n == 0 {
		return
	}
	share := (uint64(r.uid) * 0x9e3779b97f4a7c15 >> 32) % (n + 1)
	if share == 0 {
		return
	}
	a := g.o.Assignees[share-1]
	r.assignee, r.assigneeName, r.assignedAt = a.UID, a.Name, r.suspended
}

func (g *generator) pickConfiguration(r *runRow) {
	t := g.o.Templates[g.rnd.IntN(len(g.o.Templates))]
	r.cfgUID, r.cfgIdent = t.ConfigurationUID, t.ConfigurationIdentifier
}

func (g *generator) settle(r *runRow) {
	r.finished = min(g.o.Now, r.crdate+1+g.rnd.Int64N(3600))
	r.tstamp = r.finished
	r.iterations = 1 + g.rnd.IntN(8)
	r.prompt, r.completion = 500+g.rnd.Int64N(20000), 50+g.rnd.Int64N(2000)
	r.cost = float64(r.prompt+r.completion) * 0.000002
	switch p := g.rnd.IntN(100); {
	case p < 90:
		r.status, r.reason = "completed", "completed"
	case p < 96:
		r.status, r.reason, r.errorClass = "failed", "provider_failed", "ProviderError"
	default:
		r.status, r.reason = "cancelled", "cancelled"
	}
}

var eventKinds = []string{"request", "llm", "tool", "llm", "tool", "llm"}

func (g *generator) events(r runRow) []eventRow {
	out := make([]eventRow, g.o.EventsPerWaiting)
	for i := range out {
		kind := eventKinds[i%len(eventKinds)]
		payload := `{"configuration":"` + r.cfgIdent + `","promptLength":64,"requestedBy":1}`
		switch kind {
		case "llm":
			payload = fmt.Sprintf(`{"promptTokens":%d,"completionTokens":%d,"toolCalls":1}`, r.prompt, r.completion)
		case "tool":
			payload = `{"tool":"lookup_order","callId":"call_0_0","isError":false}`
		}
		out[i] = eventRow{run: r.uid, sequence: i, kind: kind, round: i / 2, durationMS: float64(g.rnd.IntN(200000)) / 100,
			payload: payload, crdate: min(r.suspended, r.crdate+int64(i))}
	}
	return out
}

func (g *generator) decision(r runRow) decisionRow {
	var key [16]byte
	for i := range key {
		key[i] = byte(g.rnd.Uint32())
	}
	kind := "approval"
	if g.terminal%10 == 0 {
		kind = "input"
	}
	return decisionRow{run: r.uid, key: hex.EncodeToString(key[:]), kind: kind, approved: true,
		decidedBy: 1 + g.rnd.Int64N(int64(g.o.BeUsers)), crdate: r.finished}
}

// uuid returns a random (version 4 layout) UUID from the seeded generator.
func (g *generator) uuid() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := g.rnd.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
