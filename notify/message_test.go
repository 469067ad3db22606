package notify

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"

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

// TestSubjectOnlyWhenCarried: a notification with a subject (its rule includes it) shows it
// in the webhook body, the email's text and HTML (escaped) and the Slack message (escaped);
// one without has no subject anywhere.
func TestSubjectOnlyWhenCarried(t *testing.T) {
	n := runtime.Notification{UID: 7, RunUUID: "6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10", Event: runtime.NotifyWaiting,
		Status: runtime.StatusWaitingApproval, Kind: "approval", Tool: "issue_refund", ConfigurationIdentifier: "refunds",
		ConfigurationName: "Refund assistant", WaitingSince: 1_800_000_000, OccurredAt: 1_800_000_000,
		Subject: "Refund <A-1001> & more"}
	for _, carried := range []bool{true, false} {
		if !carried {
			n.Subject = ""
		}
		m := render(n, "")
		body, err := m.body()
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		slack, err := m.slackBody()
		if err != nil {
			t.Fatal(err)
		}
		mail, err := m.email(mailAddress("desk@example.com"), []string{"f@example.com"}, n.MessageID(), time.Unix(1_800_000_000, 0))
		if err != nil {
			t.Fatal(err)
		}
		decoded := decodeQP(t, mail)
		got := []bool{p.Data["subject"] == "Refund <A-1001> & more", strings.Contains(strings.Join(m.lines(), "\n"), "Subject: Refund <A-1001> & more"),
			strings.Contains(decoded, "<td>Refund &lt;A-1001&gt; &amp; more</td>"), strings.Contains(string(slack), `Refund \u0026lt;A-1001\u0026gt; \u0026amp; more`)}
		for i, where := range []string{"webhook", "email text", "email HTML", "slack"} {
			if got[i] != carried {
				t.Errorf("carried %v: subject in the %s: %v\n%s\n%s\n%s", carried, where, got[i], body, decoded, slack)
			}
		}
		if !carried && (strings.Contains(string(body), "subject") || strings.Contains(decoded, "A-1001")) {
			t.Errorf("a notification without a subject mentions one:\n%s\n%s", body, decoded)
		}
	}
}

// decodeQP is raw with quoted-printable undone (the headers pass through as they are).
func decodeQP(t *testing.T, raw []byte) string {
	t.Helper()
	b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mailAddress(addr string) mail.Address { return mail.Address{Address: addr} }
