package app

import (
	"context"
	"encoding/json"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
)

// request posts an approval of wire_transfer to configuration outside with token and returns
// the request's id (its Location's last segment).
func (d *waitDesk) request(t *testing.T, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.base+"/api/v1/requests",
		strings.NewReader(`{"configuration":"outside","kind":"approval","tool":"wire_transfer","arguments":{"amount":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := d.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/requests: %d, want 201", res.StatusCode)
	}
	return path.Base(res.Header.Get("Location"))
}

// awaitRequest GETs request id with ?wait=30s as token and sends its answer's status, or the
// error's text, on the channel it returns.
func (d *waitDesk) awaitRequest(token, id string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		req, err := http.NewRequest(http.MethodGet, d.base+"/api/v1/requests/"+id+"?wait=30s", nil)
		if err != nil {
			ch <- err.Error()
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := d.client.Do(req)
		if err != nil {
			ch <- err.Error()
			return
		}
		defer res.Body.Close()
		var body struct{ Status string }
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			ch <- err.Error()
			return
		}
		ch <- body.Status
	}()
	return ch
}

// approve approves request id as a reviewer of the desk, through the runtime of the process
// that holds its callers.
func (d *waitDesk) approve(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	accounts, err := db.NewAccounts(d.pool, nil, 0, db.CheapHashes())
	if err != nil {
		t.Fatal(err)
	}
	uid, err := accounts.CreateUser(ctx, "rita-"+id[:8], "a long enough password 1", runtime.RoleReviewer)
	if err != nil {
		t.Fatal(err)
	}
	rita := runtime.Actor{UserUID: uid, Name: "rita-" + id[:8], Role: runtime.RoleReviewer}
	view, err := d.app.Runtime.Get(ctx, rita, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.Runtime.Approve(ctx, rita, id, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest}); err != nil {
		t.Fatal(err)
	}
}

// TestDecisionWakesHeldCallersAtOnce: in a hall polling only every 10 s, a request awaited
// with GET /api/v1/requests/{id}?wait= and one held by the MCP server's request_approval each
// answer approved well within a second of a person's approval in the same process: the
// runtime's transitions nudge the hall (app wires engine.Config.Changed to Hall.Nudge).
func TestDecisionWakesHeldCallersAtOnce(t *testing.T) {
	d := serveWaitDesk(t, Config{WakeInterval: 10 * time.Second})
	token := d.outsideAgents(t)

	id := d.request(t, token)
	awaited := d.awaitRequest(token, id)
	d.waitFor(t, 1)
	time.Sleep(100 * time.Millisecond)
	d.approve(t, id)
	decided := time.Now()
	select {
	case status := <-awaited:
		if status != runtime.RequestApproved {
			t.Fatalf("awaited request answered %q, want approved", status)
		}
		if took := time.Since(decided); took > 700*time.Millisecond {
			t.Errorf("awaited request answered %v after the approval, want well within a second", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("awaited request not answered 5 s after the approval: the hall was not nudged")
	}

	held := make(chan string, 1)
	go func() {
		_, body := d.mcpPost(token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"request_approval","arguments":{"action":"wire_transfer","arguments":{"amount":7}}}}`)
		held <- body
	}()
	d.waitFor(t, 1)
	var mcpID string
	if err := d.pool.QueryRow(`SELECT uuid FROM tx_nrllm_agentrun WHERE started_by_service = 'agent' AND uuid <> ?`, id).Scan(&mcpID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	d.approve(t, mcpID)
	decided = time.Now()
	select {
	case body := <-held:
		if !strings.Contains(body, `\"status\":\"approved\"`) {
			t.Fatalf("held MCP call answered %s, want the approved request", body)
		}
		if took := time.Since(decided); took > 700*time.Millisecond {
			t.Errorf("held MCP call answered %v after the approval, want well within a second", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("held MCP call not answered 5 s after the approval: the hall was not nudged")
	}
}
