package wait_test

import (
	"encoding/json"
	"testing"
	"time"

	"runsdesk/runtime/wait"
)

// TestResolve: the tool's policy wins except that the earlier expiry applies; the floor turns
// an answer that does not fit into a denial; an escalation cut off by an earlier expiry goes
// straight to after_escalation.
func TestResolve(t *testing.T) {
	const since = 1000
	answer := json.RawMessage(`{"amount":0}`)
	cfg4h := wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Cancel, RemindAfter: time.Hour}
	cases := []struct {
		name      string
		cfg, tool wait.Policy
		pause     wait.Traits
		want      wait.Deadline
		ok        bool
	}{
		{"none", wait.Policy{}, wait.Policy{}, wait.Traits{}, wait.Deadline{}, false},
		{"configuration only", cfg4h, wait.Policy{}, wait.Traits{}, wait.Deadline{ExpiresAt: since + 4*3600, RemindAt: since + 3600, Action: wait.Cancel}, true},
		{"tool wins", cfg4h, wait.Policy{ExpiresAfter: 30 * time.Minute, OnExpiry: wait.Answer, Answer: answer}, wait.Traits{Input: true},
			wait.Deadline{ExpiresAt: since + 1800, Action: wait.Answer, Answer: answer}, true},
		{"earlier expiry of the two", wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Cancel}, wait.Policy{ExpiresAfter: 8 * time.Hour, OnExpiry: wait.Deny}, wait.Traits{},
			wait.Deadline{ExpiresAt: since + 3600, Action: wait.Deny}, true},
		{"answer on a write denies", wait.Policy{}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Answer, Answer: answer}, wait.Traits{Input: true, Write: true},
			wait.Deadline{ExpiresAt: since + 3600, Action: wait.Deny}, true},
		{"answer on an approval denies", wait.Policy{}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Answer, Answer: answer}, wait.Traits{},
			wait.Deadline{ExpiresAt: since + 3600, Action: wait.Deny}, true},
		{"escalate", wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Escalate, EscalateAfter: 2 * time.Hour}, wait.Policy{}, wait.Traits{},
			wait.Deadline{ExpiresAt: since + 4*3600, EscalateAt: since + 2*3600, Action: wait.Escalate, AfterEscalation: wait.Deny}, true},
		{"escalation cut off", wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny}, wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Escalate, EscalateAfter: 2 * time.Hour, AfterEscalation: wait.Cancel}, wait.Traits{},
			wait.Deadline{ExpiresAt: since + 3600, Action: wait.Cancel}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := wait.Resolve(c.cfg, c.tool, c.pause, since)
			if ok != c.ok || got.ExpiresAt != c.want.ExpiresAt || got.RemindAt != c.want.RemindAt || got.EscalateAt != c.want.EscalateAt ||
				got.Action != c.want.Action || got.AfterEscalation != c.want.AfterEscalation || string(got.Answer) != string(c.want.Answer) {
				t.Fatalf("Resolve = %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// TestDeadlineSteps: Due is the next step still to happen; Final never approves and follows
// after_escalation once escalated.
func TestDeadlineSteps(t *testing.T) {
	d := wait.Deadline{ExpiresAt: 400, RemindAt: 100, EscalateAt: 200, Action: wait.Escalate, AfterEscalation: wait.Cancel}
	if d.Due(false) != 100 {
		t.Fatalf("due = %d, want the reminder", d.Due(false))
	}
	d.RemindAt = 0
	if d.Due(false) != 200 || d.Due(true) != 400 {
		t.Fatalf("due = %d / %d", d.Due(false), d.Due(true))
	}
	if d.Final(false) != wait.Deny || d.Final(true) != wait.Cancel {
		t.Fatalf("final = %s / %s", d.Final(false), d.Final(true))
	}
	if _, err := wait.DecodeDeadline(`{"action":"approve"}`); err == nil {
		t.Fatal("a stored approve decoded")
	}
	if _, err := wait.Decode(`{"expires_after":1,"on_expiry":"approve"}`); err == nil {
		t.Fatal("a stored approve policy decoded")
	}
}
