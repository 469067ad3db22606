package notify_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/db"
	"runsdesk/notify"
	"runsdesk/runtime"
	"runsdesk/seal"
)

// finishedOutput is a run's output with markup and a line break.
const finishedOutput = "Refund <b>issued</b>\nsecond line"

// finish creates a running run of "refunds" and settles it completed with finishedOutput.
func (d *desk) finish(t *testing.T) runtime.Run {
	t.Helper()
	ctx := context.Background()
	r, err := d.store.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: d.cfg, ConfigurationIdentifier: "refunds",
		BeUser: 1, QueuedRequest: `{}`, Lease: runtime.Lease{Owner: "w", Expires: t0.Unix() + 60, Now: t0.Unix()}, Now: t0.Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.store.Finish(ctx, r.UID, "w", runtime.Settlement{Status: runtime.StatusCompleted, Reason: runtime.ReasonCompleted,
		Output: finishedOutput}, t0.Unix()); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFinishedWebhookCarriesOutputOnlyWhenAsked: a finished run's run.finished webhook has
// its status and termination reason; the output only for the rule with include_output.
func TestFinishedWebhookCarriesOutputOnlyWhenAsked(t *testing.T) {
	with, without := newEndpoint(t, http.StatusNoContent), newEndpoint(t, http.StatusNoContent)
	finished := []runtime.NotifyEvent{runtime.NotifyFinished}
	d := newDesk(t,
		runtime.NotifyRule{Events: finished, Channel: runtime.ChannelWebhook, URL: with.srv.URL, SecretEnv: "HOOK", IncludeOutput: true},
		runtime.NotifyRule{Events: finished, Channel: runtime.ChannelWebhook, URL: without.srv.URL, SecretEnv: "HOOK"})
	run := d.finish(t)
	if n, err := d.dispatcher(&clock{now: t0.Add(time.Second)}, map[string]string{"HOOK": "secret"}, nil, nil).Pass(t.Context()); err != nil || n != 2 {
		t.Fatalf("Pass: %d, %v", n, err)
	}
	for name, ep := range map[string]*endpoint{"include_output": with, "without": without} {
		reqs := ep.requests()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests, want 1", name, len(reqs))
		}
		var body struct {
			Type string                     `json:"type"`
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(reqs[0].body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Type != "run.finished" || string(body.Data["status"]) != `"completed"` || string(body.Data["termination_reason"]) != `"completed"` ||
			string(body.Data["run"]) != `"`+run.UUID+`"` {
			t.Fatalf("%s: body %s", name, reqs[0].body)
		}
		output, has := body.Data["output"]
		if name == "without" {
			if has || strings.Contains(string(reqs[0].body), "second line") {
				t.Fatalf("without include_output the body holds the output: %s", reqs[0].body)
			}
			continue
		}
		var o struct{ Text, Finished string }
		if err := json.Unmarshal(output, &o); err != nil || o.Text != finishedOutput || o.Finished != "2027-01-15T08:00:00Z" {
			t.Fatalf("include_output: output %s (%v), want the run's", output, err)
		}
	}
}

// TestFinishedEmailCarriesOutput: over the test SMTP server, an email rule with include_output
// sends the output in both parts, escaped in the HTML one; the cancel of a waiting run writes
// run.finished with reason cancelled.
func TestFinishedEmailCarriesOutput(t *testing.T) {
	cert, roots := testCertificate(t)
	box := newMailbox(t, &cert, false)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyFinished}, Channel: runtime.ChannelEmail,
		To: []string{"ops@example.com"}, IncludeOutput: true})
	run := d.finish(t)
	mailer, err := notify.NewMailer("smtp://desk:hunter2@"+box.addr, "Runs desk <desk@example.com>", &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.dispatcher(&clock{now: t0}, nil, nil, mailer).Pass(t.Context()); err != nil || n != 1 {
		t.Fatalf("Pass: %d, %v", n, err)
	}
	got := box.received()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1", len(got))
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(got[0].data)))
	if err != nil {
		t.Fatal(err)
	}
	if subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); subject != "[runsdesk] Refund assistant: the run completed" {
		t.Fatalf("subject %q", subject)
	}
	_, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	parts := map[string]string{}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		typ, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts[typ] = strings.ReplaceAll(string(b), "\r\n", "\n")
	}
	if text := parts["text/plain"]; !strings.Contains(text, "Termination reason: completed") || !strings.Contains(text, "Output:\nRefund <b>issued</b>\nsecond line") {
		t.Errorf("text part lacks the reason or the output:\n%s", text)
	}
	if html := parts["text/html"]; !strings.Contains(html, "Refund &lt;b&gt;issued&lt;/b&gt;\nsecond line") || strings.Contains(html, "<b>issued") {
		t.Errorf("html part lacks the escaped output:\n%s", html)
	}
	if ns := d.notifications(t, run.UID); len(ns) != 1 || ns[0].Event != runtime.NotifyFinished || ns[0].TerminationReason != runtime.ReasonCompleted {
		t.Fatalf("finished run's rows %+v", ns)
	}
	waiting := d.wait(t)
	if err := d.store.Cancel(t.Context(), waiting.UID, t0.Unix()+5); err != nil {
		t.Fatal(err)
	}
	if ns := d.notifications(t, waiting.UID); len(ns) != 1 || ns[0].Event != runtime.NotifyFinished || ns[0].Status != runtime.StatusCancelled ||
		ns[0].TerminationReason != runtime.ReasonCancelled {
		t.Fatalf("cancelled run's rows %+v, want one run.finished, cancelled", ns)
	}
}

// TestFinishedSlackQuotesOutput: a Slack rule with include_output quotes the output, its
// mrkdwn characters escaped, after the termination reason.
func TestFinishedSlackQuotesOutput(t *testing.T) {
	ep := newEndpoint(t, http.StatusOK)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyFinished}, Channel: runtime.ChannelSlack,
		WebhookURLEnv: "SLACK_WEBHOOK_URL", IncludeOutput: true})
	d.finish(t)
	if _, err := d.dispatcher(&clock{now: t0}, map[string]string{"SLACK_WEBHOOK_URL": ep.srv.URL + "/services/T/B/x"}, nil, nil).Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs := ep.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var msg struct {
		Blocks []struct {
			Text struct{ Text string } `json:"text"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(reqs[0].body, &msg); err != nil {
		t.Fatal(err)
	}
	section := msg.Blocks[0].Text.Text
	if !strings.Contains(section, "termination reason `completed`") || !strings.Contains(section, "```Refund &lt;b&gt;issued&lt;/b&gt;\nsecond line```") {
		t.Fatalf("section %q lacks the reason or the quoted output", section)
	}
}

// TestFinishedOutputSealedWithAMissingKey: an output sealed with a key the sending process
// lacks is never sent as stored: the webhook has no output and an output_error naming the key.
func TestFinishedOutputSealedWithAMissingKey(t *testing.T) {
	ep := newEndpoint(t, http.StatusNoContent)
	d := newDesk(t, runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyFinished}, Channel: runtime.ChannelWebhook,
		URL: ep.srv.URL, SecretEnv: "HOOK", IncludeOutput: true})
	line, err := seal.Generate("gone")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := seal.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	sending := d.store
	d.store = db.New(d.pool, db.WithKeys(keys))
	d.finish(t)
	d.store = sending
	if n, err := d.dispatcher(&clock{now: t0}, map[string]string{"HOOK": "secret"}, nil, nil).Pass(t.Context()); err != nil || n != 1 {
		t.Fatalf("Pass: %d, %v", n, err)
	}
	reqs := ep.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	var body struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(reqs[0].body, &body); err != nil {
		t.Fatal(err)
	}
	if _, has := body.Data["output"]; has || !strings.Contains(string(body.Data["output_error"]), `\"gone\"`) || strings.Contains(string(reqs[0].body), seal.Prefix) {
		t.Fatalf("body %s: want no output and an output_error naming key gone", reqs[0].body)
	}
}
