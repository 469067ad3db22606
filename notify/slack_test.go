package notify_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"runsdesk/runtime"
)

// TestSlackMessage: a Slack rule posts an incoming-webhook message to the URL its variable
// holds: text with the link, a section and a button linking to the run.
func TestSlackMessage(t *testing.T) {
	ep := newEndpoint(t, http.StatusOK)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelSlack,
		WebhookURLEnv: "SLACK_WEBHOOK_URL"})
	run := d.wait(t)
	if _, err := d.dispatcher(&clock{now: t0}, map[string]string{"SLACK_WEBHOOK_URL": ep.srv.URL + "/services/T/B/x"}, nil, nil).Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs := ep.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text struct {
				Type, Text string
			} `json:"text"`
			Elements []struct {
				Type string `json:"type"`
				Text struct{ Text string }
				URL  string `json:"url"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(reqs[0].body, &msg); err != nil {
		t.Fatal(err)
	}
	link := "https://desk.example/runs/" + run.UUID
	if want := "Refund assistant waits for your input: <" + link + "|open the run>"; msg.Text != want {
		t.Fatalf("text %q, want %q", msg.Text, want)
	}
	if len(msg.Blocks) != 2 || msg.Blocks[0].Type != "section" || msg.Blocks[1].Type != "actions" {
		t.Fatalf("blocks %+v", msg.Blocks)
	}
	if want := "*Refund assistant waits for your input*\nRun `" + run.UUID + "` of refunds, tool `ask_refund_amount`\nAdmins and reviewers may act on it."; msg.Blocks[0].Text.Text != want {
		t.Fatalf("section %q, want %q", msg.Blocks[0].Text.Text, want)
	}
	b := msg.Blocks[1].Elements
	if len(b) != 1 || b[0].Type != "button" || b[0].URL != link || b[0].Text.Text != "Open the run" {
		t.Fatalf("button %+v", b)
	}
	if got := reqs[0].header.Get("Content-Type"); got != "application/json" {
		t.Fatalf("Content-Type %q", got)
	}
	if d.notifications(t, run.UID)[0].State != runtime.NotificationSent {
		t.Fatal("not recorded as sent")
	}
}
