package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/seal"
)

// The secrets and texts a transcript run says, each where the loop writes it.
const (
	secretSystem = "sk-ant-api03-Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1HgFe0Dc"
	secretPrompt = "hunter2secret"
	secretArgs   = "abc123bearertoken"
	secretValue  = "ada.values@example.com"
	secretText   = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aB"
)

// transcriptRun runs one run of e's configuration under mode through the model loop with an
// OpenAI-compatible endpoint: a system prompt and a prompt holding secrets, an input pause
// answered with a value that is an e-mail address, a lookup whose arguments carry a bearer
// token, and a final text holding an API key. It returns the finished run.
func transcriptRun(t *testing.T, e *env, mode runtime.Privacy) runtime.Run {
	t.Helper()
	m := newRecordingModel(t, toolCallWith("ask_city", `{"city":"x"}`),
		toolCallWith("lookup", `{"header":"Authorization: Bearer `+secretArgs+`"}`),
		textAnswer("Done; the key is "+secretText+"."))
	e.cfg.Privacy = mode
	e.cfg.SystemPrompt = "You answer the desk. Use " + secretSystem + " for the CRM."
	e.useModel(m.url)
	run, err := e.rt.Start(e.ctx, admin, e.cfg.Identifier, "Please help; password="+secretPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.rt.RunOnce(e.ctx); err != nil || !ok {
		t.Fatalf("run once: %v %v", ok, err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	if _, err := e.rt.SubmitInput(e.ctx, reviewer, run.UUID, runtime.InputSubmission{TurnDigest: e.view(run.UUID).Pause.Digest,
		Data: map[string]any{"city": secretValue}}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	e.rt.Wait()
	return e.wantStatus(run.UUID, runtime.StatusCompleted)
}

func (e *env) transcript(actor runtime.Actor, uuid string) runtime.Transcript {
	e.t.Helper()
	tr, err := e.rt.Transcript(e.ctx, actor, e.run(uuid))
	if err != nil {
		e.t.Fatalf("transcript of %s: %v", uuid, err)
	}
	return tr
}

// storedContents are run uuid's rows of tx_runsdesk_event_content as stored, and the payloads
// of its events, each as one text.
func (e *env) storedContents(uuid string) (contents []string, payloads string) {
	e.t.Helper()
	rows, err := e.sql.QueryContext(e.ctx, `SELECT c.content FROM tx_runsdesk_event_content c
		JOIN tx_nrllm_agentrun a ON a.uid = c.run WHERE a.uuid = ? ORDER BY c.event`, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			e.t.Fatal(err)
		}
		contents = append(contents, c)
	}
	if err := e.sql.QueryRowContext(e.ctx, `SELECT COALESCE(GROUP_CONCAT(payload SEPARATOR '\n'), '') FROM tx_nrllm_agentrun_event ev
		JOIN tx_nrllm_agentrun a ON a.uid = ev.run WHERE a.uuid = ?`, uuid).Scan(&payloads); err != nil {
		e.t.Fatal(err)
	}
	return contents, payloads
}

// said is every text of tr's shown content, by event kind, joined.
func said(tr runtime.Transcript) map[string]string {
	out := map[string]string{}
	for _, en := range tr.Entries {
		if c := en.Content; c != nil {
			parts := []string{c.System, c.Prompt, c.Text, c.Arguments, c.Result, c.Values, c.Note}
			for _, tc := range c.ToolCalls {
				parts = append(parts, tc.Name+" "+tc.Arguments)
			}
			out[en.Event.Kind] += strings.Join(parts, "\n")
		}
	}
	return out
}

var transcriptSecrets = []string{secretSystem, secretPrompt, secretArgs, secretValue, secretText}

// TestTranscriptByPrivacyMode: through the model loop, metadata keeps no content (the
// transcript says privacy), redacted keeps every step with its secrets masked, full keeps it
// verbatim; in no mode does an event payload hold content; content rows are sealed under keys.
func TestTranscriptByPrivacyMode(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		for _, mode := range []runtime.Privacy{runtime.PrivacyMetadata, runtime.PrivacyRedacted, runtime.PrivacyFull} {
			t.Run(string(mode)+map[bool]string{true: " sealed"}[sealed], func(t *testing.T) {
				var opts []envOption
				if sealed {
					opts = append(opts, withKeys(t))
				}
				e := newEnv(t, nil, opts...)
				run := transcriptRun(t, e, mode)
				contents, payloads := e.storedContents(run.UUID)
				for _, s := range append(transcriptSecrets, "Please help", "You answer the desk", "ok from lookup", "Done; the key") {
					if strings.Contains(payloads, s) {
						t.Errorf("an event payload holds %q", s)
					}
				}
				tr := e.transcript(admin, run.UUID)
				if tr.Privacy != mode {
					t.Errorf("transcript privacy %q, want %q", tr.Privacy, mode)
				}
				if mode == runtime.PrivacyMetadata {
					if len(contents) != 0 || tr.Withheld != runtime.WithheldPrivacy || len(said(tr)) != 0 {
						t.Fatalf("metadata: %d content rows, withheld %q, said %v; want none, privacy", len(contents), tr.Withheld, said(tr))
					}
					if len(tr.Entries) == 0 {
						t.Fatal("metadata: the transcript lists no steps")
					}
					return
				}
				// request, 3 llm turns, 2 tool calls, 1 input decision
				if len(contents) != 7 {
					t.Fatalf("%d content rows, want 7 (request, 3 model turns, 2 tools, 1 input)", len(contents))
				}
				for _, c := range contents {
					if sealed != strings.HasPrefix(c, seal.Prefix) {
						t.Fatalf("content row %.40q: sealed=%v wanted", c, sealed)
					}
				}
				got := said(tr)
				wantIn := func(kind, text string) {
					t.Helper()
					if !strings.Contains(got[kind], text) {
						t.Errorf("%s content %q lacks %q", kind, got[kind], text)
					}
				}
				wantIn(runtime.EventRequest, "Please help; password=")
				wantIn(runtime.EventRequest, "You answer the desk.")
				wantIn(runtime.EventLLM, "ask_city")
				wantIn(runtime.EventLLM, "Done; the key is ")
				wantIn(runtime.EventTool, "ok from lookup")
				wantIn(runtime.EventTool, "Authorization: Bearer ")
				wantIn(runtime.EventInput, `"city"`)
				all := strings.Join([]string{got[runtime.EventRequest], got[runtime.EventLLM], got[runtime.EventTool], got[runtime.EventInput]}, "\n")
				for _, s := range transcriptSecrets {
					if kept := strings.Contains(all, s); kept != (mode == runtime.PrivacyFull) {
						t.Errorf("%s: secret %q kept=%v", mode, s, kept)
					}
				}
				if mode == runtime.PrivacyRedacted {
					wantIn(runtime.EventInput, "[email]")
					wantIn(runtime.EventRequest, "password=[redacted]")
				}
				for _, en := range tr.Entries {
					if en.Content != nil && en.Privacy != mode {
						t.Errorf("step %d kept under %q, want %q", en.Event.Sequence, en.Privacy, mode)
					}
				}
			})
		}
	}
}

// TestTranscriptWhoSeesWhat: support sees redacted content, and content kept in full only
// under support_sees: full; a token sees the content of runs it started or with the content
// scope, else the transcript is withheld for scope; a run the reader may not read is
// run_not_found.
func TestTranscriptWhoSeesWhat(t *testing.T) {
	e := newEnv(t, nil)
	redacted := transcriptRun(t, e, runtime.PrivacyRedacted)
	full := transcriptRun(t, e, runtime.PrivacyFull)
	if len(said(e.transcript(support, redacted.UUID))) == 0 {
		t.Error("support sees no content of a redacted run")
	}
	tr := e.transcript(support, full.UUID)
	if len(said(tr)) != 0 {
		t.Errorf("support sees content kept in full under support_sees: redacted: %v", said(tr))
	}
	withheld := 0
	for _, en := range tr.Entries {
		if en.Withheld == runtime.WithheldRole {
			withheld++
		}
	}
	if withheld != 7 {
		t.Errorf("%d steps withheld from support for role, want 7", withheld)
	}
	if len(said(e.transcript(reviewer, full.UUID))) == 0 {
		t.Error("a reviewer sees no content of a full run")
	}
	e.cfg.SupportSees = runtime.PrivacyFull
	e.saveConfig()
	if got := said(e.transcript(support, full.UUID)); !strings.Contains(got[runtime.EventRequest], secretPrompt) {
		t.Errorf("support under support_sees: full: request %q, want the prompt verbatim", got[runtime.EventRequest])
	}

	bot := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"read"}}
	if tr := e.transcript(bot, full.UUID); tr.Withheld != runtime.WithheldScope || len(said(tr)) != 0 {
		t.Errorf("a token without the content scope: withheld %q, said %v; want scope, nothing", tr.Withheld, said(tr))
	}
	content := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"read", "content"}}
	if len(said(e.transcript(content, full.UUID))) == 0 {
		t.Error("a token with the content scope sees no content")
	}
	var re *runtime.Error
	noRead := runtime.Actor{Name: "bot", Role: runtime.RoleService, Scopes: []string{"run"}}
	if _, err := e.rt.Transcript(e.ctx, noRead, e.run(full.UUID)); !errors.As(err, &re) || re.Code != runtime.CodeRunNotFound {
		t.Errorf("a token without read: %v, want run_not_found", err)
	}
}

// TestTranscriptAfterRetention: a run whose content retention removed says so.
func TestTranscriptAfterRetention(t *testing.T) {
	e := newEnv(t, nil)
	run := transcriptRun(t, e, runtime.PrivacyFull)
	if _, err := e.sql.ExecContext(e.ctx, `DELETE FROM tx_runsdesk_event_content`); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(31 * 24 * time.Hour)
	if tr := e.transcript(admin, run.UUID); tr.Withheld != runtime.WithheldRetention {
		t.Errorf("withheld %q after retention, want retention", tr.Withheld)
	}
}
