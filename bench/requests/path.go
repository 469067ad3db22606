package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
	"runsdesk/runtime"
)

// pathBench is the request path's application in this process, its agents' HTTP client, the
// people deciding and the round-trip counter of the
// application's pools (the floor's included).
type pathBench struct {
	o      options
	env    *benchenv.Env
	d      *desk
	app    *benchapp.App
	agents *http.Client
	// people are the signed-in people who decide, each deciding one request at a time.
	people chan *benchapp.Client
	trips  *benchapp.RoundTrips
	next   atomic.Int64
	// session is a session of the bench admin, for the floor.
	session personSession
	waits   latencies
}

func newPathBench(ctx context.Context, o options, env *benchenv.Env, d *desk, log *slog.Logger) (*pathBench, error) {
	trips := &benchapp.RoundTrips{}
	app, err := benchapp.Start(ctx, benchapp.Options{DSN: d.DSN, Logger: log, RoundTrips: trips, WakeInterval: o.wake})
	if err != nil {
		return nil, err
	}
	b := &pathBench{o: o, env: env, d: d, app: app, trips: trips,
		agents: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.clients * 2, DisableCompression: true}}}
	people, err := benchapp.SignIn(ctx, []string{app.URL}, o.people)
	if err != nil {
		b.close()
		return nil, err
	}
	b.people = make(chan *benchapp.Client, len(people))
	for _, p := range people {
		b.people <- p
	}
	if err := d.books.QueryRowContext(ctx, `SELECT s.token, x.session_id FROM sessions s, tx_runsdesk_session x
		WHERE x.be_user = 1 ORDER BY x.uid LIMIT 1`).Scan(&b.session.token, &b.session.id); err != nil {
		b.close()
		return nil, fmt.Errorf("read a session for the floor: %w", err)
	}
	return b, nil
}

func (b *pathBench) close() {
	if err := b.app.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "requests: close:", err)
	}
}

// result is one path phase of one round.
type result struct {
	phase   string
	round   int
	res     load.Result
	decided int
	// perSecond is decided requests per second.
	perSecond float64
	// statements, commits and round trips per decided request; appCPU (this process: the
	// application and its HTTP clients) and dbCPU (the private server) per decided request.
	statements, commits, trips float64
	appCPU, dbCPU              time.Duration
	// waits are the times from a person's decision to the long-poll's answer (http only).
	waits []time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("phase=%s round=%d decided=%d = %.0f/s; per request: %.1f statements in %.1f round trips, %.1f commits, CPU app %s db %s; decision → answer p50 %s p99 %s; calls: %s",
		r.phase, r.round, r.decided, r.perSecond, r.statements, r.trips, r.commits, load.Ms(r.appCPU), load.Ms(r.dbCPU),
		load.Percentile(r.waits, 0.5), load.Percentile(r.waits, 0.99), r.res)
}

var statementCounters = []string{"Questions", "Com_commit"}

func (b *pathBench) phase(ctx context.Context, name string, round int) (result, error) {
	op := map[string]load.Op{phaseHTTP: b.viaHTTP, phaseFloor: b.floor}[name]
	if err := b.env.Quiesce(ctx); err != nil {
		return result{}, err
	}
	b.waits.take()
	before, err := b.decided(ctx)
	if err != nil {
		return result{}, err
	}
	status0, err := benchcmd.Status(ctx, b.d.books, statementCounters)
	if err != nil {
		return result{}, err
	}
	app0, db0, trips0 := load.CPUOrZero(0), load.CPUOrZero(b.env.ServerPID()), b.trips.Count()
	res := load.Run(ctx, b.o.clients, b.o.duration, op)
	app1, db1, trips1 := load.CPUOrZero(0), load.CPUOrZero(b.env.ServerPID()), b.trips.Count()
	status1, err := benchcmd.Status(ctx, b.d.books, statementCounters)
	if err != nil {
		return result{}, err
	}
	after, err := b.decided(ctx)
	if err != nil {
		return result{}, err
	}
	n := after - before
	r := result{phase: name, round: round, res: res, decided: n, perSecond: float64(n) / res.Elapsed.Seconds()}
	if n > 0 {
		per := float64(n)
		r.statements = (status1["Questions"] - status0["Questions"] - 2) / per
		r.commits = (status1["Com_commit"] - status0["Com_commit"]) / per
		r.trips = float64(trips1-trips0) / per
		r.appCPU, r.dbCPU = (app1-app0)/time.Duration(n), (db1-db0)/time.Duration(n)
	}
	r.waits = b.waits.take()
	return r, nil
}

// decided counts the requests of bench-requests that ended decided.
func (b *pathBench) decided(ctx context.Context) (int, error) {
	var n int
	if err := b.d.books.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun
		WHERE configuration_identifier = ? AND termination_reason = ?`, configuration, string(runtime.ReasonDecided)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count decided requests: %w", err)
	}
	return n, nil
}

// agent is the next agent's token and service account, round-robin.
func (b *pathBench) agent() (token, name string) {
	i := int(b.next.Add(1)) % min(pathAgents, len(b.d.tokens))
	return b.d.tokens[i], b.d.names[i]
}

// viaHTTP is one request's whole path as an agent and a person take it: the agent creates
// the request (POST /api/v1/requests) and long-polls for its answer (GET
// /api/v1/requests/{id}?wait=50s) while a person approves it on its run page; the long-poll
// answers the decision.
func (b *pathBench) viaHTTP(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	token, _ := b.agent()
	body := `{"configuration":"` + configuration + `","kind":"approval","tool":"` + action + `","arguments":` + arguments + `,"title":"` + title + `"}`
	var created struct {
		UUID string `json:"uuid"`
	}
	if err := b.api(ctx, http.MethodPost, "/api/v1/requests", token, body, http.StatusCreated, &created); err != nil {
		return err
	}
	answered := make(chan error, 1)
	var ans runtime.RequestAnswer
	go func() {
		answered <- b.api(ctx, http.MethodGet, "/api/v1/requests/"+created.UUID+"?wait=50s", token, "", http.StatusOK, &ans)
	}()
	person := <-b.people
	decided := time.Now()
	err := approve(ctx, person, created.UUID)
	b.people <- person
	if err != nil {
		<-answered
		return err
	}
	if err := <-answered; err != nil {
		return err
	}
	b.waits.add(time.Since(decided))
	if ans.Status != runtime.RequestApproved {
		return fmt.Errorf("request %s answered %s, want approved", created.UUID, ans.Status)
	}
	return nil
}

// latencies are the times from a decision to its answer, gathered by the path's clients.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d)
}

// take returns the latencies gathered since the last take, sorted, and forgets them.
func (l *latencies) take() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.all
	l.all = nil
	slices.Sort(out)
	return out
}

// api calls the JSON API as an agent with token and decodes its answer into out.
func (b *pathBench) api(ctx context.Context, method, path, token, body string, want int, out any) error {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.app.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := b.agents.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %.200s", method, path, res.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// execer is a pool or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}
