package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/load"
	"runsdesk/handlers/mcpserver"
	"runsdesk/runtime"
)

// held measures o.calls MCP request_approval calls held at once on a child server: its RSS
// and CPU idle and with the calls held, then a person approves each request on its run page,
// one every o.gap, and each decision's time to its held call's answer is taken.
func held(ctx context.Context, o options, d *desk) error {
	args := []string{"-serve", d.DSN, "-calls", fmt.Sprint(o.calls)}
	if o.wake > 0 {
		args = append(args, "-wake-interval", o.wake.String())
	}
	srv, err := benchapp.StartChild(args...)
	if err != nil {
		return err
	}
	defer srv.Stop()
	pid := srv.PID()
	person, err := benchapp.SignIn(ctx, []string{srv.URL}, 1)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	rssIdle, _ := load.RSS(pid)
	idleCPU := load.CPUOver(pid, o.quiet)
	peak := load.SamplePeak(pid, 100*time.Millisecond)

	started := time.Now()
	calls, err := startCalls(ctx, srv.URL, d.tokens[:o.calls])
	if err != nil {
		return err
	}
	defer calls.close()
	ids, err := waitingRequests(ctx, d, o.calls)
	if err != nil {
		return err
	}
	fmt.Printf("held: %d calls held in %s\n", o.calls, since(started))
	time.Sleep(2 * time.Second)
	rssHeld, _ := load.RSS(pid)
	heldCPU := load.CPUOver(pid, o.quiet)

	cpu0, t0 := load.CPUOrZero(pid), time.Now()
	for _, id := range ids {
		calls.expect(id)
		if err := approve(ctx, person[0], id); err != nil {
			return err
		}
		time.Sleep(o.gap)
	}
	latencies, missed := calls.await(10 * time.Second)
	decideCPU := load.CPUOrZero(pid) - cpu0 - time.Duration(float64(heldCPU)*float64(time.Since(t0))/float64(o.quiet))
	rssAfter, _ := load.RSS(pid)
	rssPeak := peak.Stop()

	slices.Sort(latencies)
	perCall := (load.PerSecond(heldCPU, o.quiet) - load.PerSecond(idleCPU, o.quiet)) / time.Duration(o.calls)
	fmt.Printf("server RSS: %s idle, %s with %d calls held (%.1f KiB per call), %s after the decisions, %s peak\n",
		load.MiB(rssIdle), load.MiB(rssHeld), o.calls, float64(rssHeld-rssIdle)/1024/float64(o.calls), load.MiB(rssAfter), load.MiB(rssPeak))
	fmt.Printf("decision → its held call's answer: p50 %s, p99 %s, max %s (%d answered, %d missed, %d errors, first: %v)\n",
		load.Percentile(latencies, 0.50), load.Percentile(latencies, 0.99), load.Percentile(latencies, 1), len(latencies), missed,
		calls.errs, calls.firstErr)
	fmt.Printf("server CPU: quiet %s/s idle, %s/s with the calls held: %s per held call per minute; %s per decision beyond the held rate\n",
		load.Ms(load.PerSecond(idleCPU, o.quiet)), load.Ms(load.PerSecond(heldCPU, o.quiet)), load.Ms(perCall*60),
		load.Ms(decideCPU/time.Duration(max(len(ids), 1))))
	return nil
}

// waitingRequests returns the ids of the n requests of bench-requests waiting for approval
// once there are n (within a minute).
func waitingRequests(ctx context.Context, d *desk, n int) ([]string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		rows, err := d.books.QueryContext(ctx, `SELECT uuid FROM tx_nrllm_agentrun
			WHERE configuration_identifier = ? AND status = ? ORDER BY uid`, configuration, string(runtime.StatusWaitingApproval))
		if err != nil {
			return nil, fmt.Errorf("read the waiting requests: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read the waiting requests: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) >= n {
			return ids, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d requests waiting after a minute", len(ids), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heldCalls are the MCP clients' calls and the arrivals of their answers.
type heldCalls struct {
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	sessions []*mcp.ClientSession

	mu       sync.Mutex
	decided  map[string]time.Time
	answered map[string]time.Time
	errs     int
	firstErr error
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// startCalls connects one Go SDK client per token to base's /mcp and starts its
// request_approval call (with a progress token, as agents' hosts send), held until answered.
func startCalls(ctx context.Context, base string, tokens []string) (*heldCalls, error) {
	ctx, cancel := context.WithCancel(ctx)
	h := &heldCalls{cancel: cancel, decided: map[string]time.Time{}, answered: map[string]time.Time{}}
	shared := &http.Transport{MaxIdleConnsPerHost: len(tokens) + 10, DisableCompression: true}
	h.sessions = make([]*mcp.ClientSession, len(tokens))
	errs := make([]error, len(tokens))
	var connect sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i, token := range tokens {
		connect.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, &mcp.ClientOptions{})
			h.sessions[i], errs[i] = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + mcpserver.Path,
				HTTPClient: &http.Client{Transport: bearer{token: token, next: shared}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		})
	}
	connect.Wait()
	if err := errors.Join(errs...); err != nil {
		h.close()
		return nil, fmt.Errorf("connect the MCP clients: %w", err)
	}
	for i, cs := range h.sessions {
		h.wg.Go(func() { h.call(ctx, cs, i) })
	}
	return h, nil
}

// call makes one held request_approval call and notes its answer's arrival.
func (h *heldCalls) call(ctx context.Context, cs *mcp.ClientSession, i int) {
	params := &mcp.CallToolParams{Name: mcpserver.ToolRequestApproval, Arguments: map[string]any{
		"configuration": configuration, "action": action, "arguments": json.RawMessage(arguments), "title": title}}
	params.SetProgressToken(fmt.Sprintf("bench-%d", i))
	res, err := cs.CallTool(ctx, params)
	now := time.Now()
	var ans runtime.RequestAnswer
	if err == nil {
		err = answerOf(res, &ans)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		h.fail(err)
	case ans.Status != runtime.RequestApproved:
		h.fail(fmt.Errorf("request %s answered %s, want approved", ans.ID, ans.Status))
	default:
		h.answered[ans.ID] = now
	}
}

func (h *heldCalls) fail(err error) {
	h.errs++
	if h.firstErr == nil {
		h.firstErr = err
	}
}

// answerOf decodes a tool result's text as a request's answer.
func answerOf(res *mcp.CallToolResult, ans *runtime.RequestAnswer) error {
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("tool error or %d contents", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return fmt.Errorf("content %T, want text", res.Content[0])
	}
	return json.Unmarshal([]byte(text.Text), ans)
}

// expect notes that request id is being decided now.
func (h *heldCalls) expect(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.decided[id] = time.Now()
}

// await waits until every decided request's call answered or timeout passed, and returns the
// times from decision to answer and how many did not answer.
func (h *heldCalls) await(timeout time.Duration) ([]time.Duration, int) {
	deadline := time.Now().Add(timeout)
	for {
		h.mu.Lock()
		done := len(h.answered)+h.errs >= len(h.decided) || time.Now().After(deadline)
		if done {
			var out []time.Duration
			for id, at := range h.decided {
				if got, ok := h.answered[id]; ok {
					out = append(out, got.Sub(at))
				}
			}
			h.mu.Unlock()
			return out, len(h.decided) - len(out)
		}
		h.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *heldCalls) close() {
	h.cancel()
	h.wg.Wait()
	for _, cs := range h.sessions {
		if cs != nil {
			_ = cs.Close()
		}
	}
}
