package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/handlers/mcpserver"
	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool/mcptest"
	"runsdesk/views"
)

// mcpDesk is an app whose external configuration "outside" takes requests from the service
// account agent, and agent's token (scope request).
type mcpDesk struct {
	*testApp
	token string
}

// newMCPDesk applies the external configurations of the MCP tests: outside (declared
// approvals wire_transfer and Bash, both editable, and the question ask_budget) and, after
// it, later (taking the same caller, with ad_hoc: true; the default is outside, the first);
// the API and the MCP server write the audit trail.
func newMCPDesk(t *testing.T, opts appOptions) *mcpDesk {
	t.Helper()
	opts.auditAPI = true
	app := newDeskAppWith(t, opts)
	a := apply.New(apply.Config{Catalog: app.store, Rules: app.store})
	plan, err := a.Plan(t.Context(), []byte(`configurations:
  - identifier: outside
    name: Outside agents
    kind: external
    callers: [agent]
    tools: [wire_transfer, ask_budget, Bash]
  - identifier: later
    name: Later agents
    kind: external
    callers: [agent]
    ad_hoc: true
    tools: [wire_transfer]
tools:
  - name: wire_transfer
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
    editable: true
  - name: Bash
    parameters: {type: object, properties: {command: {type: string}}}
    effect: non_idempotent_write
    editable: true
  - name: ask_budget
    input_schema: {type: object, required: [budget], properties: {budget: {type: integer, title: Budget}}}
`))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(t.Context(), plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
	token, err := app.tokens.CreateToken(t.Context(), "agent", []string{runtime.ScopeRequest})
	if err != nil {
		t.Fatal(err)
	}
	return &mcpDesk{testApp: app, token: token}
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

// progressLog records the progress notifications a client got.
type progressLog struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (p *progressLog) add(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, r.Params)
}

func (p *progressLog) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.notes)
}

// connect is a Go SDK client of the desk's /mcp with token, recording its progress
// notifications in progress (when not nil); closed when the test ends.
func (d *mcpDesk) connect(ctx context.Context, token string, progress *progressLog) *mcp.ClientSession {
	d.t.Helper()
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.add
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.srv.URL + mcpserver.Path,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: d.srv.Client().Transport}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		d.t.Fatalf("connect: %v", err)
	}
	d.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls tool with args and returns its result's text (failing the test on a protocol
// error).
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args any, progressToken any) (*mcp.CallToolResult, string) {
	t.Helper()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if progressToken != nil {
		params.SetProgressToken(progressToken)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d contents, want 1", tool, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content %T, want text", tool, res.Content[0])
	}
	return res, text.Text
}

// callAsync is call in a goroutine; the channel receives its text.
func callAsync(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args any, progressToken any) <-chan string {
	ch := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(ctx, withProgress(&mcp.CallToolParams{Name: tool, Arguments: args}, progressToken))
		switch {
		case err != nil:
			ch <- "error: " + err.Error()
		case len(res.Content) != 1:
			ch <- "error: no content"
		default:
			text, _ := res.Content[0].(*mcp.TextContent)
			ch <- text.Text
		}
	}()
	return ch
}

func withProgress(p *mcp.CallToolParams, token any) *mcp.CallToolParams {
	if token != nil {
		p.SetProgressToken(token)
	}
	return p
}

// received is what ch receives within 20 s.
func received(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("the held call did not return within 20s")
	}
	return ""
}

// waitingRequest is the id of the newest request waiting for a person, once there is one
// besides those in seen.
func (d *mcpDesk) waitingRequest(seen ...string) string {
	d.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var id string
		err := d.pool.QueryRowContext(d.t.Context(), `SELECT uuid FROM tx_nrllm_agentrun WHERE started_by_service = 'agent'
			AND status IN ('waiting_for_approval', 'waiting_for_input') ORDER BY uid DESC LIMIT 1`).Scan(&id)
		if err == nil && !contains(seen, id) {
			return id
		}
	}
	d.t.Fatal("no request waits for a person")
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decide has a reviewer approve or deny request id on its run page, with reason, and with
// edits (JSON Patch operations on its one call's arguments) when not "".
func (d *mcpDesk) decide(id, decision, reason, edits string) {
	d.t.Helper()
	rita := d.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(id, decision)
	form.Set(views.FieldReason, reason)
	if edits != "" {
		patch := `{"request-` + id + `":` + edits + `}`
		form.Set(views.FieldEdits, patch)
		form.Set(views.FieldPatchDigest, patchDigestOf(d.t, form.Get("turn_digest"), patch))
	}
	wantSeeOther(d.t, decision, rita.postForm(views.RunPath(id)+"/approval", form), views.RunPath(id))
}

// answerOf decodes a tool's text as a request's answer.
func answerOf(t *testing.T, text string) runtime.RequestAnswer {
	t.Helper()
	var ans runtime.RequestAnswer
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		t.Fatalf("answer %q: %v", text, err)
	}
	return ans
}

// TestMCPApprovalHeldUntilAPersonApproves: a Go SDK client (protocol 2026-07-28) asks for an
// approval; the call holds, sending progress notifications, while the request waits in the
// inbox under its title; a reviewer approves on the run page and the held call returns the
// decision, as structured content and as text.
func TestMCPApprovalHeldUntilAPersonApproves(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	ctx := t.Context()
	progress := &progressLog{}
	cs := d.connect(ctx, d.token, progress)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated protocol %q, want 2026-07-28", v)
	}
	held := callAsync(t, ctx, cs, mcpserver.ToolRequestApproval, map[string]any{"action": "wire_transfer", "arguments": map[string]any{"amount": 125},
		"title": "Pay the invoice", "message": "Invoice 42 is due"}, "p-1")
	id := d.waitingRequest()
	for deadline := time.Now().Add(5 * time.Second); progress.count() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if progress.count() == 0 {
		t.Error("no progress notification while the call was held")
	}
	rita := d.login(runtime.RoleReviewer)
	if inbox := rita.get("/runs?status=waiting").body; !strings.Contains(inbox, "Pay the invoice") {
		t.Error("the inbox does not list the request under its title")
	}
	if run := d.row(id); run.ConfigurationIdentifier != "outside" {
		t.Errorf("request in configuration %q, want the default outside (the first taking agent)", run.ConfigurationIdentifier)
	}
	d.decide(id, views.DecisionApprove, "known vendor", "")
	ans := answerOf(t, received(t, held))
	if ans.ID != id || ans.Status != runtime.RequestApproved || ans.Decision == nil || !ans.Decision.Approved ||
		ans.Decision.DecidedByName != testUsers[runtime.RoleReviewer] || ans.Decision.Reason != "known vendor" {
		t.Fatalf("held call answered %+v, want rita's approval of %s", ans, id)
	}
	res, _ := call(t, ctx, cs, mcpserver.ToolAwaitDecision, map[string]any{"request_id": id}, nil)
	structured, _ := json.Marshal(res.StructuredContent)
	if answerOf(t, string(structured)).Status != runtime.RequestApproved {
		t.Errorf("structured content %s, want the decision", structured)
	}
}

// TestMCPHeldCallTimesOutThenAwaitDecision: a call whose hold ends undecided answers pending
// with the request's id; await_decision, called later (by a new client), gets the decision.
func TestMCPHeldCallTimesOutThenAwaitDecision(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{mcpHold: 300 * time.Millisecond})
	ctx := t.Context()
	cs := d.connect(ctx, d.token, nil)
	_, text := call(t, ctx, cs, mcpserver.ToolRequestApproval, map[string]any{"configuration": "later", "action": "wire_transfer", "arguments": map[string]any{"amount": 9}}, nil)
	var pending struct {
		Status      string `json:"status"`
		RequestID   string `json:"request_id"`
		PollAfterMS int    `json:"poll_after_ms"`
	}
	if err := json.Unmarshal([]byte(text), &pending); err != nil || pending.Status != "pending" || pending.PollAfterMS != 5000 || pending.RequestID == "" {
		t.Fatalf("answer %s, want pending with a request_id and poll_after_ms 5000", text)
	}
	if run := d.row(pending.RequestID); run.ConfigurationIdentifier != "later" || run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("request %s/%s, want waiting in later", run.ConfigurationIdentifier, run.Status)
	}
	if _, text := call(t, ctx, cs, mcpserver.ToolAwaitDecision, map[string]any{"request_id": pending.RequestID}, nil); !strings.Contains(text, `"status":"pending"`) {
		t.Fatalf("await_decision before a decision: %s, want pending", text)
	}
	d.decide(pending.RequestID, views.DecisionDeny, "not this month", "")
	again := d.connect(ctx, d.token, nil)
	_, text = call(t, ctx, again, mcpserver.ToolAwaitDecision, map[string]any{"request_id": pending.RequestID}, nil)
	if ans := answerOf(t, text); ans.Status != runtime.RequestDenied || ans.Decision == nil || ans.Decision.Reason != "not this month" {
		t.Fatalf("await_decision after the decision: %s", text)
	}
}

// TestMCPRequestOutlivesItsClient: a client that asks and then goes away (its call
// cancelled mid-hold) leaves the request waiting in the inbox, and a person can still decide
// it; await_decision picks the decision up. The same for a client of an earlier protocol,
// whose call the SDK itself would hold on: the call ends with its POST.
func TestMCPRequestOutlivesItsClient(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cs := d.connect(ctx, d.token, nil)
	held := callAsync(t, ctx, cs, mcpserver.ToolRequestApproval, map[string]any{"action": "wire_transfer", "arguments": map[string]any{"amount": 3}, "title": "Orphan"}, nil)
	id := d.waitingRequest()
	cancel()
	if got := received(t, held); !strings.HasPrefix(got, "error:") {
		t.Fatalf("the cancelled call answered %s", got)
	}
	for deadline := time.Now().Add(5 * time.Second); d.hall.Waiting() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.hall.Waiting(); n != 0 {
		t.Errorf("%d waiters left in the hall after the client went away", n)
	}
	if run := d.row(id); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("request %s after its client went away, want waiting_for_approval", run.Status)
	}
	if inbox := d.login(runtime.RoleReviewer).get("/runs?status=waiting").body; !strings.Contains(inbox, views.RunPath(id)) {
		t.Fatal("the inbox does not list the orphaned request")
	}
	d.decide(id, views.DecisionApprove, "", "")
	_, text := call(t, t.Context(), d.connect(t.Context(), d.token, nil), mcpserver.ToolAwaitDecision, map[string]any{"request_id": id}, nil)
	if answerOf(t, text).Status != runtime.RequestApproved {
		t.Fatalf("await_decision: %s", text)
	}

	// A client of protocol 2025-06-18 whose POST goes away: its call leaves the hall too.
	gone, hangUp := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(gone, http.MethodPost, d.srv.URL+mcpserver.Path, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval","arguments":{"action":"wire_transfer","arguments":{"amount":2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Authorization": {"Bearer " + d.token}, "Mcp-Protocol-Version": {"2025-06-18"}}
	posted := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		posted <- err
	}()
	second := d.waitingRequest(id)
	for deadline := time.Now().Add(5 * time.Second); d.hall.Waiting() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	hangUp()
	<-posted
	for deadline := time.Now().Add(5 * time.Second); d.hall.Waiting() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.hall.Waiting(); n != 0 {
		t.Errorf("%d waiters left in the hall after a 2025-06-18 client went away", n)
	}
	if run := d.row(second); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("request %s after its 2025-06-18 client went away, want waiting_for_approval", run.Status)
	}
}

// TestMCPApproveToolUse: Claude Code's permission prompt allows with the reviewer's edited
// input, allows with the input as given (a tool nothing declares too, where the
// configuration sets ad_hoc), denies saying who and why, refuses an undeclared tool
// elsewhere, and, when no one
// decides in time (or its token is disabled meanwhile), denies and withdraws the request;
// its text is exactly what Claude Code reads.
func TestMCPApproveToolUse(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{toolUseHold: time.Second})
	ctx := t.Context()
	cs := d.connect(ctx, d.token, nil)
	ask := func(command, toolUseID string) <-chan string {
		return callAsync(t, ctx, cs, mcpserver.ToolApproveToolUse, map[string]any{"tool_name": "Bash", "input": map[string]any{"command": command},
			"tool_use_id": toolUseID}, nil)
	}
	t.Run("allow edited", func(t *testing.T) {
		held := ask("rm -rf /tmp/x", "toolu_1")
		id := d.waitingRequest()
		if run := d.row(id); run.ExternalID != "toolu_1" {
			t.Errorf("external id %q, want the tool use id", run.ExternalID)
		}
		d.decide(id, views.DecisionApprove, "", `[{"op":"replace","path":"/command","value":"rm -rf /tmp/x/cache"}]`)
		if got := received(t, held); got != `{"behavior":"allow","updatedInput":{"command":"rm -rf /tmp/x/cache"}}` {
			t.Fatalf("answer %s", got)
		}
	})
	t.Run("allow as given", func(t *testing.T) {
		held := ask("ls", "toolu_2")
		d.decide(d.waitingRequest(), views.DecisionApprove, "", "")
		if got := received(t, held); got != `{"behavior":"allow","updatedInput":{"command":"ls"}}` {
			t.Fatalf("answer %s", got)
		}
	})
	t.Run("deny", func(t *testing.T) {
		held := ask("curl evil.example", "toolu_3")
		d.decide(d.waitingRequest(), views.DecisionDeny, "no network", "")
		if got := received(t, held); got != `{"behavior":"deny","message":"denied by rita: no network"}` {
			t.Fatalf("answer %s", got)
		}
	})
	t.Run("undecided", func(t *testing.T) {
		_, got := call(t, ctx, cs, mcpserver.ToolApproveToolUse, map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "sleep 1"}}, nil)
		if got != `{"behavior":"deny","message":"no decision within 1 second"}` {
			t.Fatalf("answer %s", got)
		}
		var status string
		if err := d.pool.QueryRowContext(ctx, `SELECT status FROM tx_nrllm_agentrun WHERE started_by_service = 'agent' ORDER BY uid DESC LIMIT 1`).Scan(&status); err != nil || status != string(runtime.StatusCancelled) {
			t.Fatalf("the undecided request is %q (%v), want withdrawn (cancelled)", status, err)
		}
	})
	t.Run("undeclared tool", func(t *testing.T) {
		_, got := call(t, ctx, cs, mcpserver.ToolApproveToolUse, map[string]any{"tool_name": "Write", "input": map[string]any{}}, nil)
		if got != `{"behavior":"deny","message":"runsdesk could not ask: unknown_tool: the configuration declares no such tool for requests"}` {
			t.Fatalf("answer %s", got)
		}
	})
	t.Run("ad hoc tool", func(t *testing.T) {
		held := callAsync(t, ctx, cs, mcpserver.ToolApproveToolUse, map[string]any{"tool_name": "Write", "input": map[string]any{"path": "notes.md"},
			"configuration": "later"}, nil)
		d.decide(d.waitingRequest(), views.DecisionApprove, "", "")
		if got := received(t, held); got != `{"behavior":"allow","updatedInput":{"path":"notes.md"}}` {
			t.Fatalf("answer %s", got)
		}
	})
	t.Run("token disabled while held", func(t *testing.T) {
		held := ask("make deploy", "toolu_9")
		id := d.waitingRequest()
		for deadline := time.Now().Add(5 * time.Second); d.hall.Waiting() == 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if err := d.tokens.DisableToken(ctx, "agent", nil); err != nil {
			t.Fatal(err)
		}
		if got := received(t, held); got != `{"behavior":"deny","message":"runsdesk could not wait for the decision: invalid_token: the token is not valid"}` {
			t.Fatalf("answer %s", got)
		}
		if run := d.row(id); run.Status != runtime.StatusCancelled {
			t.Fatalf("request %s, want withdrawn", run.Status)
		}
	})
}

// TestMCPRequestInputAndCancel: a declared question, and an ad hoc one with its own schema
// where the configuration sets ad_hoc, are answered by a person on the run page and the held
// calls return the values; a schema elsewhere, an unusable one, or neither tool nor schema
// is refused;
// cancel_request withdraws a waiting request, and a second cancel is refused; creations and
// withdrawals are audited as the API's are.
func TestMCPRequestInputAndCancel(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	ctx := t.Context()
	cs := d.connect(ctx, d.token, nil)
	held := callAsync(t, ctx, cs, mcpserver.ToolRequestInput, map[string]any{"tool": "ask_budget", "title": "Budget?", "message": "How much may I spend?"}, nil)
	id := d.waitingRequest()
	rita := d.login(runtime.RoleReviewer)
	form, _ := rita.inputFormOf(id)
	form.Set("input/budget", "900")
	wantSeeOther(t, "answer", rita.postForm(views.RunPath(id)+"/input", form), views.RunPath(id))
	if ans := answerOf(t, received(t, held)); ans.Status != runtime.RequestAnswered || ans.Decision == nil || ans.Decision.Values["budget"] != float64(900) {
		t.Fatalf("answer %+v", ans)
	}
	colour := map[string]any{"type": "object", "required": []string{"colour"}, "properties": map[string]any{"colour": map[string]any{"type": "string", "title": "Colour"}}}
	held = callAsync(t, ctx, cs, mcpserver.ToolRequestInput, map[string]any{"configuration": "later", "title": "Colour?", "message": "Which colour?", "schema": colour}, nil)
	adHoc := d.waitingRequest(id)
	form, doc := rita.inputFormOf(adHoc)
	if doc.Find(`input[name="input/colour"]`).Length() != 1 {
		t.Fatal("the ad hoc question's form has no colour field")
	}
	form.Set("input/colour", "teal")
	wantSeeOther(t, "answer", rita.postForm(views.RunPath(adHoc)+"/input", form), views.RunPath(adHoc))
	if ans := answerOf(t, received(t, held)); ans.Status != runtime.RequestAnswered || ans.Decision == nil || ans.Decision.Values["colour"] != "teal" {
		t.Fatalf("ad hoc answer %+v", ans)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"without ad_hoc", map[string]any{"title": "Colour?", "message": "Which?", "schema": colour}, "unknown_tool: "},
		{"unusable schema", map[string]any{"configuration": "later", "title": "Colour?", "message": "Which?", "schema": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "nonsense"}}}}, "invalid_schema: "},
		{"neither tool nor schema", map[string]any{"title": "Colour?", "message": "Which?"}, "invalid_request: name a question"},
		{"schema of a declared question", map[string]any{"tool": "ask_budget", "title": "Budget?", "message": "How much?", "schema": colour}, "invalid_request: "},
	} {
		res, text := call(t, ctx, cs, mcpserver.ToolRequestInput, c.args, nil)
		if !res.IsError || !strings.HasPrefix(text, c.want) {
			t.Errorf("%s: %v %s, want %s…", c.name, res.IsError, text, c.want)
		}
	}

	short := d.connect(ctx, d.token, nil)
	pendingHeld := callAsync(t, ctx, short, mcpserver.ToolRequestApproval, map[string]any{"action": "wire_transfer", "arguments": map[string]any{"amount": 1}}, nil)
	id = d.waitingRequest(id, adHoc)
	_, text := call(t, ctx, cs, mcpserver.ToolCancelRequest, map[string]any{"request_id": id}, nil)
	if ans := answerOf(t, text); ans.Status != runtime.RequestCancelled {
		t.Fatalf("cancel_request: %s", text)
	}
	if ans := answerOf(t, received(t, pendingHeld)); ans.Status != runtime.RequestCancelled {
		t.Errorf("the held call of the withdrawn request answered %+v", ans)
	}
	res, text := call(t, ctx, cs, mcpserver.ToolCancelRequest, map[string]any{"request_id": id}, nil)
	if !res.IsError || !strings.HasPrefix(text, "run_not_cancellable: ") {
		t.Errorf("a second cancel: %v %s", res.IsError, text)
	}
	audit := strings.Join(d.auditActions(), ",")
	for _, want := range []string{"api_request_create/success", "api_request_withdraw/success", "api_request_withdraw/run_not_cancellable"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit %s: want %s", audit, want)
		}
	}
}

// TestMCPAuth: /mcp authenticates as the API does: no token or a bad one is 401 with
// WWW-Authenticate, a token without scope request 403; another service account's request is
// not found to await or cancel. GET and DELETE are 405.
func TestMCPAuth(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	reader, err := d.tokens.CreateToken(t.Context(), "reader", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(token, method string) *http.Response {
		req, err := http.NewRequest(method, d.srv.URL+mcpserver.Path, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for _, c := range []struct {
		name, token, method string
		status              int
		challenge           string
	}{
		{"no token", "", http.MethodPost, http.StatusUnauthorized, `Bearer realm="runsdesk"`},
		{"bad token", "rd_nope", http.MethodPost, http.StatusUnauthorized, `Bearer realm="runsdesk", error="invalid_token"`},
		{"scope read", reader, http.MethodPost, http.StatusForbidden, `Bearer realm="runsdesk", error="insufficient_scope", scope="request"`},
		{"GET", d.token, http.MethodGet, http.StatusMethodNotAllowed, ""},
		{"DELETE", d.token, http.MethodDelete, http.StatusMethodNotAllowed, ""},
		{"initialize", d.token, http.MethodPost, http.StatusOK, ""},
	} {
		res := post(c.token, c.method)
		if res.StatusCode != c.status || res.Header.Get("WWW-Authenticate") != c.challenge {
			t.Errorf("%s: %d %q, want %d %q", c.name, res.StatusCode, res.Header.Get("WWW-Authenticate"), c.status, c.challenge)
		}
	}

	other, err := d.tokens.CreateToken(t.Context(), "other", []string{runtime.ScopeRequest})
	if err != nil {
		t.Fatal(err)
	}
	id := d.request(runtime.RequestApproval, "wire_transfer", `{"amount":1}`)
	cs := d.connect(t.Context(), other, nil)
	for _, tool := range []string{mcpserver.ToolAwaitDecision, mcpserver.ToolCancelRequest} {
		res, text := call(t, t.Context(), cs, tool, map[string]any{"request_id": id}, nil)
		if !res.IsError || !strings.HasPrefix(text, "run_not_found: ") {
			t.Errorf("%s of another's request: %v %s", tool, res.IsError, text)
		}
	}
	res, text := call(t, t.Context(), cs, mcpserver.ToolRequestApproval, map[string]any{"action": "wire_transfer", "arguments": map[string]any{}}, nil)
	if !res.IsError || !strings.HasPrefix(text, "configuration_not_found: ") {
		t.Errorf("a caller no configuration takes: %v %s", res.IsError, text)
	}
}

// TestMCPEarlierProtocols: a client that initializes with 2025-06-18 (or 2025-03-26) is
// answered in that version and can list and call the tools over plain JSON-RPC posts.
func TestMCPEarlierProtocols(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{mcpHold: 100 * time.Millisecond})
	for _, version := range []string{"2025-06-18", "2025-03-26", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			got := d.rpc(t, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			if !strings.Contains(got, `"protocolVersion":"`+version+`"`) {
				t.Fatalf("initialize %s: %s", version, got)
			}
			got = d.rpc(t, version, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval","arguments":{"action":"wire_transfer","arguments":{"amount":2}}}}`)
			if !strings.Contains(got, `\"status\":\"pending\"`) {
				t.Fatalf("tools/call %s: %s", version, got)
			}
		})
	}
}

// rpc posts one JSON-RPC message to /mcp as agent (with the protocol version header when
// not "") and returns the body.
func (d *mcpDesk) rpc(t *testing.T, version, body string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.srv.URL+mcpserver.Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+d.token)
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, res.Body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /mcp: %d %s", res.StatusCode, b.String())
	}
	return b.String()
}

// TestMCPToolsList: tools/list is stable: the tools, their descriptions, input schemas and
// annotations are testdata/mcp_tools.json (RUNSDESK_UPDATE_GOLDEN=1 rewrites it).
func TestMCPToolsList(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	res, err := d.connect(t.Context(), d.token, nil).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "mcp_tools.json")
	if os.Getenv("RUNSDESK_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("tools/list changed; if on purpose, run with RUNSDESK_UPDATE_GOLDEN=1 and review the diff of %s:\n%s", golden, got)
	}
}

// TestMCPTypeScriptClient: the TypeScript SDK client (tools/mcp-ts/client.mjs,
// @modelcontextprotocol/sdk 1.32) asks for an approval with a progress token; the call
// holds, notifying progress, until a reviewer approves on the run page, and the client
// prints the decision.
func TestMCPTypeScriptClient(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	ts := mcptest.StartTypeScriptClient(t, d.srv.URL+mcpserver.Path, d.token, mcpserver.ToolRequestApproval,
		`{"action":"wire_transfer","arguments":{"amount":77},"title":"From TypeScript"}`)
	next := func() string {
		t.Helper()
		select {
		case line, ok := <-ts.Lines:
			if !ok {
				t.Fatal("the TypeScript client exited early")
			}
			return line
		case <-time.After(30 * time.Second):
			t.Fatal("the TypeScript client printed nothing within 30s")
		}
		return ""
	}
	if line := next(); !strings.HasPrefix(line, "connected ") {
		t.Fatalf("first line %q, want connected", line)
	} else {
		t.Logf("TypeScript SDK client %s", line)
	}
	id := d.waitingRequest()
	if line := next(); !strings.HasPrefix(line, "progress ") {
		t.Fatalf("line %q, want a progress notification while held", line)
	}
	d.decide(id, views.DecisionApprove, "fine", "")
	var line string
	for line = next(); strings.HasPrefix(line, "progress "); line = next() {
	}
	var result struct {
		Content []struct {
			Type, Text string
		}
		StructuredContent runtime.RequestAnswer
		IsError           bool
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "result ")), &result); err != nil || result.IsError {
		t.Fatalf("line %q: %v", line, err)
	}
	if ans := result.StructuredContent; ans.ID != id || ans.Status != runtime.RequestApproved || ans.Decision == nil || ans.Decision.Reason != "fine" {
		t.Fatalf("the TypeScript client got %+v", ans)
	}
	if len(result.Content) != 1 || answerOf(t, result.Content[0].Text).Status != runtime.RequestApproved {
		t.Fatalf("the TypeScript client's text content %+v", result.Content)
	}
}

// TestMCPConcurrentCancels: many clients withdraw the same waiting request at once while a
// reviewer approves it: exactly one of them wins (one cancel, or the approval and no
// cancel), every other cancel is refused run_not_cancellable, and the request ends once.
func TestMCPConcurrentCancels(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	id := d.request(runtime.RequestApproval, "wire_transfer", `{"amount":8}`)
	rita := d.login(runtime.RoleReviewer)
	approve := rita.approvalFormOf(id, views.DecisionApprove)
	const clients = 8
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = d.connect(t.Context(), d.token, nil)
	}
	var wg sync.WaitGroup
	texts := make([]string, clients)
	start := make(chan struct{})
	for i, cs := range sessions {
		wg.Go(func() {
			<-start
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolCancelRequest, Arguments: map[string]any{"request_id": id}})
			if err != nil {
				texts[i] = "error: " + err.Error()
				return
			}
			texts[i] = res.Content[0].(*mcp.TextContent).Text
		})
	}
	var approved response
	wg.Go(func() {
		<-start
		approved = rita.postForm(views.RunPath(id)+"/approval", approve)
	})
	close(start)
	wg.Wait()
	cancels := 0
	for _, text := range texts {
		switch {
		case strings.Contains(text, `"status":"cancelled"`):
			cancels++
		case !strings.HasPrefix(text, "run_not_cancellable: "):
			t.Errorf("a cancel answered %s", text)
		}
	}
	run := d.row(id)
	switch {
	case cancels == 1 && run.Status == runtime.StatusCancelled:
	case cancels == 0 && run.Status == runtime.StatusCompleted && run.TerminationReason == runtime.ReasonDecided:
	default:
		t.Fatalf("%d cancels won, the approval answered %d, the request is %s/%s: want exactly one winner", cancels, approved.status, run.Status, run.TerminationReason)
	}
}

// TestMCPHeldCallEndsWhenTheTokenIsDisabled: a held call checks its token again when woken;
// once the token is disabled it ends with the API's refusal, and the request still waits.
func TestMCPHeldCallEndsWhenTheTokenIsDisabled(t *testing.T) {
	t.Parallel()
	d := newMCPDesk(t, appOptions{})
	cs := d.connect(t.Context(), d.token, nil)
	held := callAsync(t, t.Context(), cs, mcpserver.ToolRequestApproval, map[string]any{"action": "wire_transfer", "arguments": map[string]any{"amount": 4}}, nil)
	id := d.waitingRequest()
	for deadline := time.Now().Add(5 * time.Second); d.hall.Waiting() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.tokens.DisableToken(t.Context(), "agent", nil); err != nil {
		t.Fatal(err)
	}
	if got := received(t, held); got != "invalid_token: the token is not valid" {
		t.Fatalf("held call answered %q, want the token refused", got)
	}
	if run := d.row(id); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("request %s, want still waiting", run.Status)
	}
}

// TestMCPApproveToolUseEndsOnce: a reviewer approves just before, at or just after the moment
// approve_tool_use's hold ends undecided: whichever wins, the agent's answer and the request
// agree — allow and the request approved, or deny and the request withdrawn — never allow
// with a withdrawn request nor deny with an approved one.
func TestMCPApproveToolUseEndsOnce(t *testing.T) {
	t.Parallel()
	const hold = 300 * time.Millisecond
	d := newMCPDesk(t, appOptions{toolUseHold: hold})
	cs := d.connect(t.Context(), d.token, nil)
	rita := d.login(runtime.RoleReviewer)
	var seen []string
	for i, offset := range []time.Duration{-60, -20, -5, 0, 5, 20} {
		offset *= time.Millisecond
		started := time.Now()
		held := callAsync(t, t.Context(), cs, mcpserver.ToolApproveToolUse, map[string]any{"tool_name": "Bash", "input": map[string]any{"command": fmt.Sprint("echo ", i)}}, nil)
		id := d.waitingRequest(seen...)
		seen = append(seen, id)
		form := rita.approvalFormOf(id, views.DecisionApprove)
		time.Sleep(time.Until(started.Add(hold + offset)))
		rita.postForm(views.RunPath(id)+"/approval", form)
		got := received(t, held)
		run := d.row(id)
		t.Logf("approval at the hold's end %+v: %s", offset, got)
		switch {
		case strings.HasPrefix(got, `{"behavior":"allow"`) && run.Status == runtime.StatusCompleted && run.TerminationReason == runtime.ReasonDecided:
		case strings.HasPrefix(got, `{"behavior":"deny","message":"no decision within`) && run.Status == runtime.StatusCancelled:
		default:
			t.Errorf("offset %s: answered %s, request %s/%s", offset, got, run.Status, run.TerminationReason)
		}
	}
}
