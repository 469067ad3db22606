package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// mcpPost posts one JSON-RPC message (protocol 2025-06-18) to /mcp with token and returns
// the status and body (the error's text as body when the post fails).
func (d *waitDesk) mcpPost(token, body string) (int, string) {
	req, err := http.NewRequest(http.MethodPost, d.base+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err.Error()
	}
	return res.StatusCode, string(b)
}

// outsideAgents applies the configuration "outside" (kind external, caller agent, tool
// wire_transfer) and returns the token of service account agent, with scope request.
func (d *waitDesk) outsideAgents(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	a := apply.New(apply.Config{Catalog: d.app.Store, Rules: d.app.Store})
	plan, err := a.Plan(ctx, []byte(`configurations:
  - identifier: outside
    name: Outside agents
    kind: external
    callers: [agent]
    tools: [wire_transfer]
tools:
  - name: wire_transfer
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		t.Fatal(err)
	}
	token, err := db.NewServiceAccounts(d.pool, nil).CreateToken(ctx, "agent", []string{runtime.ScopeRequest})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// TestMCPHeldCallIsLongLived: on the application as served, with the only admission slot
// taken and a 100 ms request deadline, an ordinary MCP call (tools/list) answers 503 while a
// held request_approval takes no slot, joins the hall, outlives the deadline (held 300 ms) and answers
// when the request is withdrawn through the API.
func TestMCPHeldCallIsLongLived(t *testing.T) {
	d := serveWaitDesk(t, Config{MaxInFlight: 1})
	ctx := context.Background()
	token := d.outsideAgents(t)
	release, err := d.app.Gate.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := d.mcpPost(token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); status != http.StatusServiceUnavailable {
		t.Errorf("tools/list with the slot taken: %d, want 503", status)
	}
	held := make(chan string, 1)
	go func() {
		_, body := d.mcpPost(token, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval","arguments":{"action":"wire_transfer","arguments":{"amount":5}}}}`)
		held <- body
	}()
	d.waitFor(t, 1)
	time.Sleep(300 * time.Millisecond)
	release()
	var id string
	if err := d.pool.QueryRow(`SELECT uuid FROM tx_nrllm_agentrun WHERE started_by_service = 'agent'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodDelete, d.base+"/api/v1/requests/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("withdraw: %d", res.StatusCode)
	}
	if body := <-held; !strings.Contains(body, `\"status\":\"cancelled\"`) {
		t.Fatalf("held call answered %s, want the withdrawn request", body)
	}
}
