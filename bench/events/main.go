// Command events measures the live desk's event streams: -connections open streams (GET
// /api/v1/events, one service account token each) on one server process, then -changes
// changes of waiting runs written to the database as another process would, one every -gap.
// It reports the server's RSS before and with the streams open, the latency from each change
// to its run event on every stream (p50, p99, max), the server's CPU per change (beyond its
// idle rate) and per open stream while quiet (goals: RSS ≤ 150 MiB and p99 ≤ 1 s with 1,000
// streams).
//
// The server runs in a child process (this command with -serve), so its RSS and CPU are its
// own; both processes raise their open-file limit for the connections.
//
//	go run ./bench/events -connections 1000 -changes 20
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchcmd"
	"runsdesk/bench/benchenv"
	"runsdesk/bench/load"
	"runsdesk/db"
	"runsdesk/runtime"
)

// options are the command's flags.
type options struct {
	connections int
	changes     int
	runs        int
	gap         time.Duration
	quiet       time.Duration
	dataDir     string
	serve       string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var o options
	f := flag.NewFlagSet("events", flag.ExitOnError)
	f.IntVar(&o.connections, "connections", 1000, "event streams held open")
	f.IntVar(&o.changes, "changes", 20, "changes of waiting runs, each awaited on every stream")
	f.IntVar(&o.runs, "runs", 10000, "runs on the desk (10 % waiting)")
	f.DurationVar(&o.gap, "gap", time.Second, "pause between changes")
	f.DurationVar(&o.quiet, "quiet", 10*time.Second, "quiet time measured with and without the streams open")
	f.StringVar(&o.dataDir, "data-dir", benchenv.DefaultDataDir(), "data dir of the private server (ignored with RUNSDESK_DSN)")
	f.StringVar(&o.serve, "serve", "", "internal: serve the desk at this DSN and print its URL")
	_ = f.Parse(os.Args[1:])
	if err := benchcmd.RaiseFileLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
	}
	run := measure
	if o.serve != "" {
		run = func(ctx context.Context, o options) error {
			return benchapp.ServeChild(ctx, benchapp.Options{DSN: o.serve, MaxWaiters: o.connections + 100})
		}
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

func measure(ctx context.Context, o options) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	env, err := benchenv.Start(ctx, benchenv.Options{DSN: os.Getenv(benchenv.EnvDSN), DataDir: o.dataDir, Logger: log})
	if err != nil {
		return err
	}
	defer env.Close()
	desk, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindInbox, Runs: o.runs, Fresh: true})
	if err != nil {
		return err
	}
	pool, err := db.Open(ctx, desk.DSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	tokens, err := createTokens(ctx, pool, o.connections)
	if err != nil {
		return err
	}
	targets, err := waitingRuns(ctx, pool, o.changes)
	if err != nil {
		return err
	}
	srv, err := benchapp.StartChild("-serve", desk.DSN, "-connections", fmt.Sprint(o.connections))
	if err != nil {
		return err
	}
	defer srv.Stop()
	pid := srv.PID()
	fmt.Printf("# %s\n# events: %d streams, %d changes %s apart, %d runs; load average %s\n",
		env.Settings(ctx), o.connections, o.changes, o.gap, o.runs, benchcmd.LoadAverage())

	time.Sleep(2 * time.Second)
	rssIdle, _ := load.RSS(pid)
	idleCPU := load.CPUOver(pid, o.quiet)

	streams, err := openStreams(ctx, srv.URL, tokens)
	if err != nil {
		return err
	}
	defer streams.close()
	time.Sleep(2 * time.Second)
	rssOpen, _ := load.RSS(pid)
	quietCPU := load.CPUOver(pid, o.quiet)

	var latencies []time.Duration
	missed := 0
	cpu0, start := load.CPUOrZero(pid), time.Now()
	for _, uuid := range targets {
		at := streams.expect(uuid)
		if _, err := pool.ExecContext(ctx, `UPDATE tx_nrllm_agentrun SET status = ?, suspended_at = 0, pending_tools = ''
			WHERE uuid = ?`, string(runtime.StatusCancelled), uuid); err != nil {
			return fmt.Errorf("change run %s: %w", uuid, err)
		}
		got := streams.await(uuid, 10*time.Second)
		for _, arrived := range got {
			latencies = append(latencies, arrived.Sub(at))
		}
		missed += o.connections - len(got)
		time.Sleep(o.gap)
	}
	changeCPU := load.CPUOrZero(pid) - cpu0 - time.Duration(float64(quietCPU)*float64(time.Since(start))/float64(o.quiet))
	rssPeak, _ := load.RSS(pid)

	slices.Sort(latencies)
	fmt.Printf("server RSS: %s idle, %s with %d streams open (%s per stream), %s after the changes\n",
		load.MiB(rssIdle), load.MiB(rssOpen), o.connections, kib(rssOpen-rssIdle, o.connections), load.MiB(rssPeak))
	fmt.Printf("change → run event on every stream: p50 %s, p99 %s, max %s (%d arrivals, %d missed)\n",
		load.Percentile(latencies, 0.50), load.Percentile(latencies, 0.99), load.Percentile(latencies, 1), len(latencies), missed)
	fmt.Printf("server CPU: %s per change beyond the quiet rate (%s per change per stream); quiet: %s/s idle, %s/s with the streams (%s/s per stream)\n",
		load.Ms(changeCPU/time.Duration(max(len(targets), 1))), us(changeCPU/time.Duration(max(len(targets)*o.connections, 1))),
		load.Ms(load.PerSecond(idleCPU, o.quiet)), load.Ms(load.PerSecond(quietCPU, o.quiet)),
		us((load.PerSecond(quietCPU, o.quiet)-load.PerSecond(idleCPU, o.quiet))/time.Duration(o.connections)))
	return nil
}

// createTokens gives each stream a service account of its own with scope read (the API's
// rate limit is per token).
func createTokens(ctx context.Context, pool *sql.DB, n int) ([]string, error) {
	accounts := db.NewServiceAccounts(pool, nil)
	tokens := make([]string, n)
	for i := range tokens {
		var err error
		if tokens[i], err = accounts.CreateToken(ctx, fmt.Sprintf("events-bench-%d", i), []string{runtime.ScopeRead}); err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

// waitingRuns are the uuids of n waiting runs, the ones the changes decide.
func waitingRuns(ctx context.Context, pool *sql.DB, n int) ([]string, error) {
	runs, err := db.New(pool).ListWaiting(ctx, runtime.WaitingQuery{Limit: n})
	if err != nil {
		return nil, err
	}
	if len(runs) < n {
		return nil, fmt.Errorf("%d waiting runs on the desk, want %d: raise -runs", len(runs), n)
	}
	uuids := make([]string, n)
	for i, r := range runs {
		uuids[i] = r.UUID
	}
	return uuids, nil
}

func kib(n int64, per int) string {
	return fmt.Sprintf("%.1f KiB", float64(n)/1024/float64(max(per, 1)))
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }

// streams are the open event streams and the arrivals of the run events awaited.
type streams struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	n       int
	mu      sync.Mutex
	waiting map[string][]time.Time
}

// openStreams opens one stream per token and returns once every one has been sent its id.
func openStreams(ctx context.Context, base string, tokens []string) (*streams, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &streams{cancel: cancel, n: len(tokens), waiting: map[string][]time.Time{}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: len(tokens), DisableCompression: true}}
	ready := make(chan error, len(tokens))
	for _, token := range tokens {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.follow(ctx, client, base, token, ready)
		}()
	}
	for range tokens {
		if err := <-ready; err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// follow reads one stream, noting the arrival of every run event awaited.
func (s *streams) follow(ctx context.Context, client *http.Client, base, token string, ready chan<- error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/events", nil)
	if err != nil {
		ready <- err
		return
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		ready <- err
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		ready <- fmt.Errorf("GET /api/v1/events: %s", res.Status)
		return
	}
	sc := bufio.NewScanner(res.Body)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: ") && !signalled:
			signalled = true
			ready <- nil
		case strings.HasPrefix(line, `data: {"uuid":"`):
			uuid, _, _ := strings.Cut(strings.TrimPrefix(line, `data: {"uuid":"`), `"`)
			s.note(uuid)
		}
	}
	if !signalled {
		ready <- errors.New("a stream ended before its first id")
	}
}

// expect starts awaiting uuid's run event and returns the time it starts.
func (s *streams) expect(uuid string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting[uuid] = []time.Time{}
	return time.Now()
}

func (s *streams) note(uuid string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.waiting[uuid]; ok {
		s.waiting[uuid] = append(got, now)
	}
}

// await returns the arrivals of uuid's run event once every stream has been sent it or
// timeout has passed.
func (s *streams) await(uuid string, timeout time.Duration) []time.Time {
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		got := s.waiting[uuid]
		done := len(got) >= s.n || time.Now().After(deadline)
		s.mu.Unlock()
		if done {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *streams) close() {
	s.cancel()
	s.wg.Wait()
}
