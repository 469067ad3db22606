package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
)

// target is one waiting run.
type target struct {
	uid  int64
	uuid string
}

// bench holds the application, the signed-in clients and the waiting runs the phases consume.
type bench struct {
	o   options
	app *benchapp.App
	// others are the applications on the -spread nodes.
	others  []*benchapp.App
	clients []*benchapp.Client
	// voters are the second voters of the quorum phases, signed in as the bench reviewer (one
	// per client; none unless a quorum phase runs).
	voters []*benchapp.Client
	// input are the runs waiting for bench-input's form, quorum those waiting for two approvals.
	input, quorum queue
	digest        string
	state         string
	form          url.Values
	// approval is the turn and pin digest the quorum phases' approvals echo (all seeded
	// approval pauses share one state).
	approval struct{ digest, pin string }
	actor    runtime.Actor
	env      *benchenv.Env
	susp     suspender
	// trips counts the round trips of the application's pools (the floors' included); books
	// is a pool of its own for the bench's bookkeeping (counts, drain, server status), so
	// those round trips are not counted.
	trips *benchapp.RoundTrips
	books *sql.DB
}

// queue is waiting runs the phases consume, oldest first.
type queue struct {
	runs []target
	next atomic.Int64
}

// take returns the next unused run of q.
func (q *queue) take() (target, error) {
	i := q.next.Add(1) - 1
	if int(i) >= len(q.runs) {
		return target{}, errors.New("out of waiting runs: seed more with -runs")
	}
	return q.runs[i], nil
}

func newBench(ctx context.Context, o options, env *benchenv.Env, desk *benchenv.Desk, log *slog.Logger) (*bench, error) {
	keys, err := sealDesk(ctx, o, desk)
	if err != nil {
		return nil, err
	}
	books, err := db.Open(ctx, desk.DSN)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping pool: %w", err)
	}
	trips := &benchapp.RoundTrips{}
	app, err := benchapp.Start(ctx, benchapp.Options{DSN: desk.DSN, Workers: o.workers, Logger: log, MaxInFlight: o.maxInFlight, Keys: keys, RoundTrips: trips})
	if err != nil {
		books.Close()
		return nil, err
	}
	b := &bench{o: o, app: app, env: env, actor: runtime.Actor{UserUID: 1, Name: benchenv.Users[0].Name, Role: runtime.RoleAdmin},
		trips: trips, books: books}
	if err := b.load(ctx); err != nil {
		b.close()
		return nil, err
	}
	urls := []string{app.URL}
	for _, dsn := range o.spread {
		other, err := benchapp.StartOn(ctx, benchapp.Options{Workers: o.workers, Logger: log, MaxInFlight: o.maxInFlight, Keys: keys}, dsn, desk.Name)
		if err != nil {
			b.close()
			return nil, err
		}
		b.others = append(b.others, other)
		urls = append(urls, other.URL)
	}
	if b.clients, err = benchapp.SignIn(ctx, urls, o.clients); err != nil {
		b.close()
		return nil, err
	}
	if o.quorum() {
		if b.voters, err = benchapp.SignInAs(ctx, urls, o.clients, benchenv.Users[1].Name); err != nil {
			b.close()
			return nil, err
		}
	}
	return b, nil
}

func (b *bench) close() {
	b.susp.close()
	for _, a := range append([]*benchapp.App{b.app}, b.others...) {
		if err := a.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "submit: close:", err)
		}
	}
	b.books.Close()
}

// load reads the waiting runs (oldest first), the digest of their form (all seeded runs share
// one state) and builds the posted form from the schema's field names; with a quorum phase,
// also the runs waiting for two approvals and the digests their approvals echo.
func (b *bench) load(ctx context.Context) error {
	if err := b.waiting(ctx, &b.input, "waiting_for_input", "bench-input"); err != nil {
		return err
	}
	if b.o.quorum() {
		if err := b.waiting(ctx, &b.quorum, "waiting_for_approval", quorumConfiguration); err != nil {
			return err
		}
		v, err := b.app.Runtime.Get(ctx, b.actor, b.quorum.runs[len(b.quorum.runs)-1].uuid)
		if err != nil || v.Pause == nil {
			return fmt.Errorf("read the approval of a seeded run: %v", err)
		}
		b.approval.digest, b.approval.pin = v.Pause.Digest, v.Pause.PinDigest
	}
	v, err := b.app.Runtime.Get(ctx, b.actor, b.input.runs[len(b.input.runs)-1].uuid)
	if err != nil || v.Pause == nil {
		return fmt.Errorf("read the form of a seeded run: %v", err)
	}
	b.digest, b.state = v.Pause.Digest, v.Run.SuspendedState
	sch, err := schema.Compile(v.Pause.InputSchema)
	if err != nil {
		return fmt.Errorf("compile the seeded schema: %w", err)
	}
	b.form = url.Values{}
	values := benchenv.RefundForm()
	for _, f := range sch.Fields() {
		if v, ok := values[f.Name]; ok && f.Pointer == "/"+f.Name {
			b.form.Set(f.FormName, fmt.Sprint(v))
		}
	}
	if len(b.form) != len(values) {
		return fmt.Errorf("the seeded schema has fields %v, want one for each of %v", b.form, values)
	}
	return nil
}

// waiting reads into q the runs of configuration that wait in status, oldest first.
func (b *bench) waiting(ctx context.Context, q *queue, status, configuration string) error {
	rows, err := b.books.QueryContext(ctx, `SELECT uid, uuid FROM tx_nrllm_agentrun
		WHERE status = ? AND configuration_identifier = ? ORDER BY uid`, status, configuration)
	if err != nil {
		return fmt.Errorf("read waiting runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t target
		if err := rows.Scan(&t.uid, &t.uuid); err != nil {
			return fmt.Errorf("read waiting runs: %w", err)
		}
		q.runs = append(q.runs, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read waiting runs: %w", err)
	}
	if len(q.runs) < 2 {
		return fmt.Errorf("the desk has no runs of %s waiting (%s)", configuration, status)
	}
	return nil
}

func newKey() string {
	var k [12]byte
	_, _ = rand.Read(k[:])
	return hex.EncodeToString(k[:])
}

// result is one phase of one round.
type result struct {
	phase        string
	round        int
	res          load.Result
	settled      int
	drain, total time.Duration
	perSecond    float64
	// statements, commits and writes (INSERT, UPDATE, DELETE) the server ran per settled run.
	statements, commits, writes float64
	// trips are the round trips of the application's (and the floors') connections per
	// settled run: a batched transaction counts one.
	trips float64
	// appCPU and dbCPU are the CPU time this process and the database server used per settled
	// run (dbCPU 0 when the server is not a local process): steadier than rates on a shared
	// machine.
	appCPU, dbCPU time.Duration
	// suspendCall is the mean time of the Suspend call of a suspend phase, whose settled
	// counts suspends; undelivered the outbox rows not yet sent when it ended.
	suspendCall time.Duration
	undelivered int
}

func (r result) String() string {
	s := fmt.Sprintf("phase=%s round=%d settled=%d in %s (drain %s) = %.0f/s; per run: %.1f statements in %.1f round trips, %.1f commits, %.1f writes, CPU app %s db %s; calls: %s",
		r.phase, r.round, r.settled, r.total.Round(time.Millisecond), r.drain.Round(time.Millisecond), r.perSecond,
		r.statements, r.trips, r.commits, r.writes, load.Ms(r.appCPU), load.Ms(r.dbCPU), r.res)
	if r.suspendCall > 0 {
		s += fmt.Sprintf("; Suspend call mean %s, %d notifications undelivered", load.Ms(r.suspendCall), r.undelivered)
	}
	return s
}

func (b *bench) phase(ctx context.Context, name string, round int) (result, error) {
	base, full := strings.CutSuffix(name, fullSuffix)
	op := map[string]func(context.Context, int) error{"floor": b.floor, "floor-events": b.floorEvents, "floor-transitions": b.floorTransitions, "runtime": b.viaRuntime, "http": b.viaHTTP,
		phaseSuspend: b.susp.op(phaseSuspend), phaseSuspendNotify: b.susp.op(phaseSuspendNotify),
		phaseQuorum2: b.quorum2, phaseQuorum2First: b.quorum2First}[base]
	if full {
		if err := b.setPrivacy(ctx, runtime.PrivacyFull); err != nil {
			return result{}, err
		}
		defer func() {
			if err := b.setPrivacy(context.WithoutCancel(ctx), runtime.PrivacyMetadata); err != nil {
				fmt.Fprintln(os.Stderr, "submit:", err)
			}
		}()
	}
	suspending := name == phaseSuspend || name == phaseSuspendNotify
	if suspending {
		if err := b.susp.setUp(ctx, b); err != nil {
			return result{}, fmt.Errorf("set up the suspend phases: %w", err)
		}
		b.susp.mean(name)
	}
	if err := b.env.Quiesce(ctx); err != nil {
		return result{}, err
	}
	before, err := b.settled(ctx, name)
	if err != nil {
		return result{}, err
	}
	status0, err := b.serverStatus(ctx)
	if err != nil {
		return result{}, err
	}
	stop, err := b.profile(name, round)
	if err != nil {
		return result{}, err
	}
	app0, db0, trips0 := load.CPUOrZero(0), b.serverCPU(), b.trips.Count()
	start := time.Now()
	res := load.Run(ctx, b.o.clients, b.o.duration, op)
	loaded := time.Since(start)
	err = b.drain(ctx)
	total := time.Since(start)
	stop()
	app1, db1, trips1 := load.CPUOrZero(0), b.serverCPU(), b.trips.Count()
	if err != nil {
		return result{}, err
	}
	after, err := b.settled(ctx, name)
	if err != nil {
		return result{}, err
	}
	status1, err := b.serverStatus(ctx)
	if err != nil {
		return result{}, err
	}
	r := result{phase: name, round: round, res: res, settled: after - before, drain: total - loaded, total: total}
	if suspending {
		r.settled, r.suspendCall = res.Requests-res.Errors, b.susp.mean(name)
		if r.undelivered, err = b.susp.undelivered(ctx, b); err != nil {
			return result{}, err
		}
	}
	r.perSecond = float64(r.settled) / total.Seconds()
	if r.settled > 0 {
		per := func(k string) float64 { return (status1[k] - status0[k]) / float64(r.settled) }
		r.statements, r.commits, r.writes = per("Questions"), per("Com_commit"), per("Com_insert")+per("Com_update")+per("Com_delete")
		r.appCPU, r.dbCPU = (app1-app0)/time.Duration(r.settled), (db1-db0)/time.Duration(r.settled)
		r.trips = float64(trips1-trips0) / float64(r.settled)
	}
	if quorumPhase(name) && r.settled != res.Requests-res.Errors {
		fmt.Printf("#   %s round %d: %d calls answered but %d settled: some approvals were refused\n", name, round, res.Requests-res.Errors, r.settled)
	}
	if res.FirstError != nil {
		fmt.Printf("#   %s round %d: first error: %v\n", name, round, res.FirstError)
	}
	return r, nil
}

// fullSuffix marks a phase run with bench-input at privacy: full (runtime-full, http-full):
// every step's content is kept, sealed when -seal is set, beside its event.
const fullSuffix = "-full"

// setPrivacy sets bench-input's privacy mode; decisions read the configuration as it is at
// each decision, so the next submission uses it.
func (b *bench) setPrivacy(ctx context.Context, mode runtime.Privacy) error {
	if _, err := b.books.ExecContext(ctx, `UPDATE tx_nrllm_configuration SET privacy = ? WHERE identifier = 'bench-input'`, string(mode)); err != nil {
		return fmt.Errorf("set bench-input's privacy to %s: %w", mode, err)
	}
	return nil
}

// serverCPU returns the private database server's CPU time, 0 when it is not a local process.
func (b *bench) serverCPU() time.Duration {
	pid := b.env.ServerPID()
	if pid <= 0 {
		return 0
	}
	return load.CPUOrZero(pid)
}

func (b *bench) profile(name string, round int) (func(), error) {
	if b.o.cpuprof == "" {
		return func() {}, nil
	}
	return benchcmd.CPUProfile(b.o.cpuprof, fmt.Sprintf("submit-%s-%d.pprof", name, round))
}

// settled counts what phase settles: the finished runs of its configuration (bench-quorum
// for quorum2, else bench-input), or for quorum2-first the votes recorded.
func (b *bench) settled(ctx context.Context, phase string) (int, error) {
	var n int
	var err error
	switch phase {
	case phaseQuorum2First:
		err = b.books.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_vote`).Scan(&n)
	default:
		configuration := "bench-input"
		if phase == phaseQuorum2 {
			configuration = quorumConfiguration
		}
		err = b.books.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun
			WHERE configuration_identifier = ? AND finished_at > 0`, configuration).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("count settled runs: %w", err)
	}
	return n, nil
}

// drain waits until no bench-input or bench-quorum run is running or queued (at most two
// minutes).
func (b *bench) drain(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var n int
		err := b.books.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun
			WHERE status IN ('running', 'queued') AND configuration_identifier IN ('bench-input', ?)`, quorumConfiguration).Scan(&n)
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if n == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("drain: runs still running after two minutes")
}

// statementCounters are the server's statement counters a phase is measured by (every
// client's; during a phase the application is the only busy one, besides the bench's own few
// bookkeeping queries).
var statementCounters = []string{"Questions", "Com_commit", "Com_insert", "Com_update", "Com_delete"}

// serverStatus reads statementCounters.
func (b *bench) serverStatus(ctx context.Context) (map[string]float64, error) {
	out, err := benchcmd.Status(ctx, b.books, statementCounters)
	if err != nil {
		return nil, fmt.Errorf("server status: %w", err)
	}
	return out, nil
}

func (b *bench) viaRuntime(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.input.take()
	if err != nil {
		return err
	}
	_, err = b.app.Runtime.SubmitInput(ctx, b.actor, t.uuid, runtime.InputSubmission{
		Data: benchenv.RefundForm(), TurnDigest: b.digest, IdempotencyKey: newKey()})
	return err
}

func (b *bench) viaHTTP(ctx context.Context, c int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.input.take()
	if err != nil {
		return err
	}
	form := url.Values{"_csrf": {b.clients[c].CSRF()}, "turn_digest": {b.digest}, "idempotency_key": {newKey()}}
	for k, v := range b.form {
		form[k] = v
	}
	status, body, err := b.clients[c].PostForm(ctx, "/runs/"+url.PathEscape(t.uuid)+"/input", form)
	if err != nil {
		return err
	}
	if status != http.StatusSeeOther {
		return fmt.Errorf("POST input: status %d: %.200s", status, body)
	}
	return nil
}
