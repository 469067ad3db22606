package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestEveryEventRenders: each of the five events has its webhook type, its subject and, while
// the run still waits, who may act; the body carries the deadline when there is one and never
// more fields than documented.
func TestEveryEventRenders(t *testing.T) {
	cases := []struct {
		event   runtime.NotifyEvent
		status  runtime.Status
		subject string
		mayAct  bool
	}{
		{runtime.NotifyWaiting, runtime.StatusWaitingApproval, "[runsdesk] Refund assistant waits for your approval", true},
		{runtime.NotifyReminder, runtime.StatusWaitingApproval, "[runsdesk] Reminder: Refund assistant still waits for your approval", true},
		{runtime.NotifyEscalated, runtime.StatusWaitingApproval, "[runsdesk] Escalated: Refund assistant waits for your approval", true},
		{runtime.NotifyExpired, runtime.StatusRunning, "[runsdesk] Refund assistant: the wait for approval expired", false},
		{runtime.NotifyDecided, runtime.StatusRunning, "[runsdesk] Refund assistant: the approval was decided", false},
	}
	for _, c := range cases {
		n := runtime.Notification{UID: 7, RunUUID: "6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10", Event: c.event, Status: c.status,
			Kind: "approval", Tool: "issue_refund", ConfigurationIdentifier: "refunds", ConfigurationName: "Refund assistant",
			AdminOnly: true, FourEyes: true, WaitingSince: 1_800_000_000, ExpiresAt: 1_800_003_600, OccurredAt: 1_800_000_060}
		m := render(n, "https://desk.example/")
		if m.subject() != c.subject {
			t.Errorf("%s: subject %q, want %q", c.event, m.subject(), c.subject)
		}
		const who = "Admins may act on it (the tool is admin-only), except the person who started the run (a second approver is required)."
		if got := m.mayAct == who; got != c.mayAct {
			t.Errorf("%s: may act %q", c.event, m.mayAct)
		}
		body, err := m.body()
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Type      string         `json:"type"`
			Timestamp string         `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		if p.Type != "run."+string(c.event) || p.Timestamp != "2027-01-15T08:01:00Z" || p.Data["expires_at"] != "2027-01-15T09:00:00Z" ||
			p.Data["status"] != string(c.status) || p.Data["url"] != "https://desk.example/runs/6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10" || len(p.Data) != 8 {
			t.Errorf("%s: body %s", c.event, body)
		}
		if text := strings.Join(m.lines(), "\n"); !strings.Contains(text, "Expires at: 2027-01-15T09:00:00Z") {
			t.Errorf("%s: text lacks the deadline:\n%s", c.event, text)
		}
	}
}
