package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
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
	runs    []target
	next    atomic.Int64
	digest  string
	state   string
	form    url.Values
	actor   runtime.Actor
	env     *benchenv.Env
	susp    suspender
}

func newBench(ctx context.Context, o options, env *benchenv.Env, desk *benchenv.Desk, log *slog.Logger) (*bench, error) {
	keys, err := sealDesk(ctx, o, desk)
	if err != nil {
		return nil, err
	}
	app, err := benchapp.Start(ctx, benchapp.Options{DSN: desk.DSN, Workers: o.workers, Logger: log, MaxInFlight: o.maxInFlight, Keys: keys})
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, app: app, env: env, actor: runtime.Actor{UserUID: 1, Name: benchenv.Users[0].Name, Role: runtime.RoleAdmin}}
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
	return b, nil
}

func (b *bench) close() {
	b.susp.close()
	for _, a := range append([]*benchapp.App{b.app}, b.others...) {
		if err := a.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "submit: close:", err)
		}
	}
}

// load reads the waiting runs (oldest first), the digest of their form (all seeded runs share
// one state) and builds the posted form from the schema's field names.
func (b *bench) load(ctx context.Context) error {
	rows, err := b.app.Pool.QueryContext(ctx, `SELECT uid, uuid FROM tx_nrllm_agentrun
		WHERE status = 'waiting_for_input' AND configuration_identifier = 'bench-input' ORDER BY uid`)
	if err != nil {
		return fmt.Errorf("read waiting runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t target
		if err := rows.Scan(&t.uid, &t.uuid); err != nil {
			return fmt.Errorf("read waiting runs: %w", err)
		}
		b.runs = append(b.runs, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read waiting runs: %w", err)
	}
	if len(b.runs) < 2 {
		return errors.New("the desk has no waiting runs")
	}
	v, err := b.app.Runtime.Get(ctx, b.actor, b.runs[len(b.runs)-1].uuid)
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

// take returns the next unused waiting run.
func (b *bench) take() (target, error) {
	i := b.next.Add(1) - 1
	if int(i) >= len(b.runs) {
		return target{}, errors.New("out of waiting runs: seed more with -runs")
	}
	return b.runs[i], nil
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
	s := fmt.Sprintf("phase=%s round=%d settled=%d in %s (drain %s) = %.0f/s; per run: %.1f statements, %.1f commits, %.1f writes, CPU app %s db %s; calls: %s",
		r.phase, r.round, r.settled, r.total.Round(time.Millisecond), r.drain.Round(time.Millisecond), r.perSecond,
		r.statements, r.commits, r.writes, load.Ms(r.appCPU), load.Ms(r.dbCPU), r.res)
	if r.suspendCall > 0 {
		s += fmt.Sprintf("; Suspend call mean %s, %d notifications undelivered", load.Ms(r.suspendCall), r.undelivered)
	}
	return s
}

func (b *bench) phase(ctx context.Context, name string, round int) (result, error) {
	base, full := strings.CutSuffix(name, fullSuffix)
	op := map[string]func(context.Context, int) error{"floor": b.floor, "floor-events": b.floorEvents, "floor-transitions": b.floorTransitions, "runtime": b.viaRuntime, "http": b.viaHTTP,
		phaseSuspend: b.susp.op(phaseSuspend), phaseSuspendNotify: b.susp.op(phaseSuspendNotify)}[base]
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
	before, err := b.settled(ctx)
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
	app0, db0 := load.CPUOrZero(0), b.serverCPU()
	start := time.Now()
	res := load.Run(ctx, b.o.clients, b.o.duration, op)
	loaded := time.Since(start)
	err = b.drain(ctx)
	total := time.Since(start)
	stop()
	app1, db1 := load.CPUOrZero(0), b.serverCPU()
	if err != nil {
		return result{}, err
	}
	after, err := b.settled(ctx)
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
		per := func(k string) float64 { return float64(status1[k]-status0[k]) / float64(r.settled) }
		r.statements, r.commits, r.writes = per("Questions"), per("Com_commit"), per("Com_insert")+per("Com_update")+per("Com_delete")
		r.appCPU, r.dbCPU = (app1-app0)/time.Duration(r.settled), (db1-db0)/time.Duration(r.settled)
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
	if _, err := b.app.Pool.ExecContext(ctx, `UPDATE tx_nrllm_configuration SET privacy = ? WHERE identifier = 'bench-input'`, string(mode)); err != nil {
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
	if err := os.MkdirAll(b.o.cpuprof, 0o755); err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	f, err := os.Create(filepath.Join(b.o.cpuprof, fmt.Sprintf("submit-%s-%d.pprof", name, round)))
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// settled counts the bench-input runs that finished.
func (b *bench) settled(ctx context.Context) (int, error) {
	var n int
	err := b.app.Pool.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun
		WHERE configuration_identifier = 'bench-input' AND finished_at > 0`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count settled runs: %w", err)
	}
	return n, nil
}

// drain waits until no bench-input run is running or queued (at most two minutes).
func (b *bench) drain(ctx context.Context) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var n int
		err := b.app.Pool.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun
			WHERE status IN ('running', 'queued') AND configuration_identifier = 'bench-input'`).Scan(&n)
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

// serverStatus reads the server's statement counters (every client's; during a phase the
// application is the only busy one, besides the bench's own few bookkeeping queries).
func (b *bench) serverStatus(ctx context.Context) (map[string]int64, error) {
	rows, err := b.app.Pool.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN
		('Questions', 'Com_commit', 'Com_insert', 'Com_update', 'Com_delete')`)
	if err != nil {
		return nil, fmt.Errorf("server status: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("server status: %w", err)
		}
		out[k] = v
	}
	return out, rows.Err()
}

func (b *bench) viaRuntime(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.take()
	if err != nil {
		return err
	}
	_, err = b.app.Runtime.SubmitInput(ctx, b.actor, t.uuid, runtime.InputSubmission{
		Data: benchenv.RefundForm(), TurnDigest: b.digest, IdempotencyKey: newKey()})
	return err
}

func (b *bench) viaHTTP(ctx context.Context, c int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.take()
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
