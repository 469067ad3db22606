package engine_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestCommentOnAWaitingRun: support comments on a waiting run; the comment is stored with its
// author and the sequence of its `comment` event {by, mentioned}, the run keeps waiting on the
// same pause (an approval of the digest read before the comment still resumes it), the
// timeline carries its text, the audit row never holds it, and the model is never sent it.
func TestCommentOnAWaitingRun(t *testing.T) {
	m := newRecordingModel(t, toolCall("send_mail"), textAnswer("done"))
	e := newEnv(t, nil)
	e.withPeople()
	e.useModel(m.url)
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	body := "The customer called: @rita, please check the second address first.\nThanks"
	c, err := e.rt.Comment(e.ctx, support, run.UUID, runtime.NewComment{Body: "  " + body + "  ", IdempotencyKey: "c-1", IP: "10.0.0.9"})
	if err != nil || c.Author != support.UserUID || c.Body != body || c.Sequence <= 0 {
		t.Fatalf("comment: %+v, %v", c, err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	p := e.eventPayload(run.UUID, runtime.EventComment)
	if fmt.Sprint(p["by"], p["mentioned"]) != "4 [3]" {
		t.Errorf("comment event %v, want by 4 mentioning 3", p)
	}
	tl, err := e.rt.Timeline(e.ctx, reviewer, e.run(run.UUID))
	if err != nil || tl.Comments[c.Sequence].Body != body {
		t.Fatalf("timeline comments %+v, %v", tl.Comments, err)
	}
	var audit string
	if err := e.sql.QueryRowContext(e.ctx, `SELECT CONCAT(actor_name, ' ', outcome, ' [', reason, ']') FROM tx_runsdesk_audit WHERE action = 'comment'`).Scan(&audit); err != nil || audit != "sam commented []" {
		t.Errorf("audit row %q, %v", audit, err)
	}
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest}); err != nil {
		t.Fatalf("approve after the comment: %v", err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	for i := range 2 {
		for _, msg := range m.request(i) {
			if strings.Contains(msg.Content, "second address") {
				t.Fatalf("the model was sent the comment in request %d: %q", i, msg.Content)
			}
		}
	}
	_, err = e.rt.Comment(e.ctx, support, run.UUID, runtime.NewComment{Body: "too late"})
	wantCode(t, err, runtime.CodeInvalidRequest)
}

// TestCommentRefusals: empty, too long, a mention of nobody or of a disabled person, too many
// mentions, a service account and a rule are refused and store nothing; a repeated key returns
// the first comment without a second row.
func TestCommentRefusals(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	if _, err := e.sql.ExecContext(e.ctx, `INSERT INTO be_users (uid, username, role, disable) VALUES (9, 'gone', 'reviewer', 1)`); err != nil {
		t.Fatal(err)
	}
	run := e.startAndRun(admin)
	many := strings.Repeat("@ada ", 1) + "@bob @rita @sam @x1 @x2 @x3 @x4 @x5 @x6 @x7"
	for name, tc := range map[string]struct {
		actor runtime.Actor
		body  string
		code  runtime.Code
		says  string
	}{
		"empty":         {reviewer, "   ", runtime.CodeInvalidRequest, "write a comment"},
		"too long":      {reviewer, strings.Repeat("é", runtime.MaxCommentCharacters+1), runtime.CodeInvalidRequest, "at most 2000 characters"},
		"nobody":        {reviewer, "ask @nobody", runtime.CodeInvalidRequest, "@nobody names nobody"},
		"disabled":      {reviewer, "ask @gone", runtime.CodeInvalidRequest, "@gone is disabled"},
		"many mentions": {reviewer, many, runtime.CodeInvalidRequest, "at most 10 people"},
		"service":       {service, "hello", runtime.CodeRunAccessDenied, "only people comment"},
		"rule":          {runtime.Actor{Name: "rule:x", Role: runtime.RoleRule}, "hello", runtime.CodeRunNotFound, ""},
	} {
		_, err := e.rt.Comment(e.ctx, tc.actor, run.UUID, runtime.NewComment{Body: tc.body})
		re := wantCode(t, err, tc.code)
		if re != nil && !strings.Contains(re.Message, tc.says) {
			t.Errorf("%s: %q, want it to say %q", name, re.Message, tc.says)
		}
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_comment`); n != 0 {
		t.Fatalf("%d comments stored by refused posts", n)
	}
	first, err := e.rt.Comment(e.ctx, admin, run.UUID, runtime.NewComment{Body: "first", IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.rt.Comment(e.ctx, admin, run.UUID, runtime.NewComment{Body: "second", IdempotencyKey: "k"})
	if err != nil || again.UID != first.UID || again.Body != "first" {
		t.Fatalf("replay: %+v, %v; want the first comment", again, err)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_comment`); n != 1 {
		t.Fatalf("%d comments after a replay, want 1", n)
	}
}

// TestCommentMentionNotifiesThePerson: an email rule with to_people sends the mentioned event
// to each mentioned person's address (one outbox row each), not to the author who mentions
// themself, nor to someone without an address; a webhook rule gets one row.
func TestCommentMentionNotifiesThePerson(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	if _, err := e.sql.ExecContext(e.ctx, `UPDATE be_users SET email = CONCAT(username, '@example.com') WHERE username IN ('rita', 'bob', 'ada')`); err != nil {
		t.Fatal(err)
	}
	e.cfg.Notify = []runtime.NotifyRule{
		{Events: []runtime.NotifyEvent{runtime.NotifyMentioned}, Channel: runtime.ChannelEmail, ToPeople: true},
		{Events: []runtime.NotifyEvent{runtime.NotifyMentioned}, Channel: runtime.ChannelWebhook, URL: "https://hooks.example.com/x", SecretEnv: "HOOK_SECRET"},
	}
	e.saveConfig()
	run := e.startAndRun(admin)
	if _, err := e.rt.Comment(e.ctx, admin, run.UUID, runtime.NewComment{Body: "@rita and @BOB: see this; @sam too, and me (@ada)."}); err != nil {
		t.Fatal(err)
	}
	rows, err := e.sql.QueryContext(e.ctx, `SELECT event, channel, target FROM tx_runsdesk_outbox WHERE run_uuid = ? ORDER BY uid`, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var mails, hooks []string
	for rows.Next() {
		var event, channel, target string
		if err := rows.Scan(&event, &channel, &target); err != nil {
			t.Fatal(err)
		}
		if event != string(runtime.NotifyMentioned) {
			continue
		}
		if channel == runtime.ChannelEmail {
			mails = append(mails, target)
		} else {
			hooks = append(hooks, target)
		}
	}
	if len(mails) != 2 || !strings.Contains(mails[0], `"to":["rita@example.com"]`) || !strings.Contains(mails[1], `"to":["bob@example.com"]`) {
		t.Errorf("mention mails %q, want one to rita and one to bob", mails)
	}
	if len(hooks) != 1 {
		t.Errorf("mention webhooks %q, want 1", hooks)
	}
	if _, err := e.rt.Comment(e.ctx, admin, run.UUID, runtime.NewComment{Body: "note to self @ada"}); err != nil {
		t.Fatal(err)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_outbox WHERE run_uuid = ? AND event = 'mentioned'`, run.UUID); n != 3 {
		t.Errorf("%d mention rows after a self-mention, want still 3", n)
	}
}

// TestConcurrentComments: 10 people comment on one run at once, each with their own key, and
// 10 more post one key at once: every distinct comment is stored once, each at its own event
// sequence, and the run still waits on the pause it was read with.
func TestConcurrentComments(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	e.withPeople()
	run := e.startAndRun(admin)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("k%d", i)
			if i >= 10 {
				key = "same"
			}
			_, err := e.rt.Comment(e.ctx, reviewer, run.UUID, runtime.NewComment{Body: fmt.Sprintf("note %d", i), IdempotencyKey: key})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("comment: %v", err)
		}
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_comment WHERE run = ?`, run.UID); n != 11 {
		t.Errorf("%d comments stored, want 11", n)
	}
	if n := e.countRows(`SELECT COUNT(DISTINCT sequence) FROM tx_runsdesk_comment WHERE run = ?`, run.UID); n != 11 {
		t.Errorf("%d distinct sequences, want 11", n)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ? AND kind = 'comment'`, run.UID); n != 11 {
		t.Errorf("%d comment events, want 11", n)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest}); err != nil {
		t.Fatalf("approve after the comments: %v", err)
	}
}

// TestCommentSealed: with keys set the comment's text is sealed at rest and opened for the
// timeline.
func TestCommentSealed(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, withKeys(t))
	e.withPeople()
	run := e.startAndRun(admin)
	c, err := e.rt.Comment(e.ctx, reviewer, run.UUID, runtime.NewComment{Body: "card ends 4242"})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := e.sql.QueryRowContext(e.ctx, `SELECT body FROM tx_runsdesk_comment WHERE uid = ?`, c.UID).Scan(&stored); err != nil || strings.Contains(stored, "4242") || !strings.HasPrefix(stored, "rdseal1:") {
		t.Fatalf("stored body %q, %v; want it sealed", stored, err)
	}
	tl, err := e.rt.Timeline(e.ctx, reviewer, e.run(run.UUID))
	if err != nil || tl.Comments[c.Sequence].Body != "card ends 4242" {
		t.Fatalf("timeline comment %+v, %v", tl.Comments, err)
	}
}
