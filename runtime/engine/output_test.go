package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/seal"
)

// storedOutput is run uuid's row of tx_runsdesk_run_output as stored; ok false when none.
func (e *env) storedOutput(uuid string) (text string, finished int64, ok bool) {
	e.t.Helper()
	rows, err := e.sql.QueryContext(e.ctx, `SELECT o.output_text, o.finished_at FROM tx_runsdesk_run_output o
		JOIN tx_nrllm_agentrun a ON a.uid = o.run WHERE a.uuid = ?`, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return "", 0, false
	}
	if err := rows.Scan(&text, &finished); err != nil {
		e.t.Fatal(err)
	}
	return text, finished, true
}

func (e *env) answer(actor runtime.Actor, uuid string) runtime.Answer {
	e.t.Helper()
	a, err := e.rt.Answer(e.ctx, actor, e.run(uuid))
	if err != nil {
		e.t.Fatalf("answer of %s: %v", uuid, err)
	}
	return a
}

// TestOutputKeptThroughTheModelLoop: through an OpenAI-compatible endpoint, a completed run
// keeps its output: the final text for a run that ends on text, the tool's result (after the
// model's text of that turn) for one that ends on a tool; sealed under keys, the row holds an
// envelope and the reader the text; finished_at is the run's.
func TestOutputKeptThroughTheModelLoop(t *testing.T) {
	for name, c := range map[string]struct {
		answers []answer
		maxIter int
		reason  string
		want    string
	}{
		"text":           {[]answer{toolCall("lookup"), textAnswer("Refund issued.\nLine two <script>x</script>")}, 10, runtime.ReasonCompleted, "Refund issued.\nLine two <script>x</script>"},
		"ends on a tool": {[]answer{toolCall("lookup")}, 1, runtime.ReasonMaxIterations, "ok from lookup"},
	} {
		for _, sealed := range []bool{false, true} {
			t.Run(name+map[bool]string{false: " clear", true: " sealed"}[sealed], func(t *testing.T) {
				var opts []envOption
				if sealed {
					opts = append(opts, withKeys(t))
				}
				e := newEnv(t, nil, opts...)
				m := newRecordingModel(t, c.answers...)
				e.cfg.MaxIterations = c.maxIter
				e.useModel(m.url)
				run := e.startAndRun(admin)
				r := e.wantStatus(run.UUID, runtime.StatusCompleted)
				if r.TerminationReason != c.reason {
					t.Fatalf("reason %q, want %q", r.TerminationReason, c.reason)
				}
				stored, finished, ok := e.storedOutput(run.UUID)
				if !ok || finished != r.FinishedAt {
					t.Fatalf("output row %v finished %d, want one finished at %d", ok, finished, r.FinishedAt)
				}
				if sealed != strings.HasPrefix(stored, seal.Prefix) || sealed && strings.Contains(stored, c.want) {
					t.Fatalf("stored output %.60q: sealed=%v wanted", stored, sealed)
				}
				a := e.answer(admin, run.UUID)
				if a.Output == nil || a.Output.Text != c.want || a.Output.Finished != r.FinishedAt || a.Withheld != "" {
					t.Fatalf("answer %+v (%+v), want %q", a, a.Output, c.want)
				}
			})
		}
	}
}

// TestOutputWithheld: keep_output false stores nothing and says privacy; a token sees the
// output of the runs it started and, with the content scope, of others, else scope; a
// cleared output says retention; a run not finished has none; a failed run keeps none.
func TestOutputWithheld(t *testing.T) {
	e := newEnv(t, []model.Turn{{Content: "the answer"}})
	starter := runtime.Actor{Name: "ci", Role: runtime.RoleService, Scopes: []string{"run", "read"}}
	run := e.startAndRun(starter)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	other := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"read"}}
	content := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"read", "content"}}
	for _, c := range []struct {
		actor    runtime.Actor
		withheld string
	}{{starter, ""}, {content, ""}, {support, ""}, {reviewer, ""}, {other, runtime.WithheldScope}} {
		a := e.answer(c.actor, run.UUID)
		if a.Withheld != c.withheld || (a.Output != nil) != (c.withheld == "") {
			t.Fatalf("%s: answer %+v, want withheld %q", c.actor.Name, a, c.withheld)
		}
	}
	if _, err := e.sql.ExecContext(e.ctx, `UPDATE tx_runsdesk_run_output SET output_text = ''`); err != nil {
		t.Fatal(err)
	}
	if a := e.answer(admin, run.UUID); a.Output != nil || a.Withheld != runtime.WithheldRetention {
		t.Fatalf("cleared output: answer %+v, want withheld retention", a)
	}

	e.cfg.NoOutput = true
	e.saveConfig()
	private := e.startAndRun(admin)
	e.wantStatus(private.UUID, runtime.StatusCompleted)
	if _, _, ok := e.storedOutput(private.UUID); ok {
		t.Fatal("keep_output false: an output was stored")
	}
	if a := e.answer(admin, private.UUID); a.Output != nil || a.Withheld != runtime.WithheldPrivacy {
		t.Fatalf("keep_output false: answer %+v, want withheld privacy", a)
	}

	e.cfg.NoOutput = false
	e.cfg.Provider.Script = []model.Turn{turn(call("send_mail", `{}`))}
	e.saveConfig()
	waiting := e.startAndRun(admin)
	e.wantStatus(waiting.UUID, runtime.StatusWaitingApproval)
	if a := e.answer(admin, waiting.UUID); a != (runtime.Answer{}) {
		t.Fatalf("waiting run: answer %+v, want none", a)
	}
	if _, err := e.rt.Cancel(e.ctx, admin, waiting.UUID); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := e.storedOutput(waiting.UUID); ok {
		t.Fatal("a cancelled run kept an output")
	}
	if a := e.answer(admin, waiting.UUID); a != (runtime.Answer{}) {
		t.Fatalf("cancelled run: answer %+v, want none", a)
	}
}

// TestOutputSealedWithAMissingKey: an output sealed with a key the reader's key set lacks is
// refused as sealing_key_missing naming the run and the key, never shown as stored.
func TestOutputSealedWithAMissingKey(t *testing.T) {
	e := newEnv(t, []model.Turn{{Content: "secret answer"}}, withKeys(t))
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	plain := db.New(e.sql)
	rt := engine.New(engine.Config{Store: plain, Catalog: plain, Rules: plain, Tools: e.tools, Now: e.clock.Now, Lease: time.Minute, Workers: 1})
	t.Cleanup(rt.Close)
	_, err := rt.Answer(e.ctx, admin, e.run(run.UUID))
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeSealingKeyMissing || re.RunUUID != run.UUID || !strings.Contains(re.Message, `"t1"`) {
		t.Fatalf("answer without the key: %v, want sealing_key_missing naming run %s and key t1", err, run.UUID)
	}
}

// TestFinishedNotificationFromTheLoop: a run the loop settles writes its configuration's
// run.finished notification, with the status and termination reason, in the settle's
// transaction; a rule for other events gets none.
func TestFinishedNotificationFromTheLoop(t *testing.T) {
	e := newEnv(t, []model.Turn{{Content: "done"}})
	e.cfg.Notify = []runtime.NotifyRule{
		{Events: []runtime.NotifyEvent{runtime.NotifyFinished}, Channel: runtime.ChannelWebhook, URL: "https://hooks.example/a", SecretEnv: "HOOK", IncludeOutput: true},
		{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook, URL: "https://hooks.example/b", SecretEnv: "HOOK"},
	}
	e.saveConfig()
	run := e.startAndRun(admin)
	r := e.wantStatus(run.UUID, runtime.StatusCompleted)
	ns, err := e.store.RunNotifications(e.ctx, r.UID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 1 || ns[0].Event != runtime.NotifyFinished || ns[0].Status != runtime.StatusCompleted ||
		ns[0].TerminationReason != runtime.ReasonCompleted || ns[0].OccurredAt != r.FinishedAt || ns[0].Rule.URL != "https://hooks.example/a" {
		t.Fatalf("notifications %+v, want one run.finished, completed, to rule a", ns)
	}
}
