package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

func jsonEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestOverlayExample is the bounded overlay's example end to end: the tool receives the model's
// undeclared keys and the person's declared keys, nothing else.
func TestOverlayExample(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{"city":"ModelGuess","note":"keep"}`))})
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	v := e.view(run.UUID)
	if v.Pause == nil || v.Pause.InputTool != "ask_city" || v.Pause.Digest == "" {
		t.Fatalf("pause = %+v, want input pause for ask_city with a digest", v.Pause)
	}
	out, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{
		Data: map[string]any{"city": "Berlin", "evil": "x"}, TurnDigest: v.Pause.Digest, IdempotencyKey: "k1",
	})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if out.Replayed || out.Decision.Kind != "input" || out.Decision.DecidedBy != admin.UserUID {
		t.Fatalf("outcome = %+v", out)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	got := e.rec.get("ask_city")
	if len(got) != 1 {
		t.Fatalf("ask_city called %d times, want 1", len(got))
	}
	jsonEqual(t, got[0], `{"note":"keep","city":"Berlin"}`)
}

// TestInputEventHoldsNoValues checks the input event is exactly {submittedBy}.
func TestInputEventHoldsNoValues(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	submit(t, e, admin, run.UUID, map[string]any{"city": "Secretville"}, "")
	e.rt.Wait()
	for _, ev := range e.events(run.UUID) {
		if ev.Kind == runtime.EventInput {
			jsonEqual(t, ev.Payload, `{"submittedBy":1}`)
		}
		if string(ev.Payload) != "" && json.Valid(ev.Payload) && contains(string(ev.Payload), "Secretville") {
			t.Fatalf("event %s payload carries the submitted value: %s", ev.Kind, ev.Payload)
		}
	}
}

func contains(s, sub string) bool { return len(sub) > 0 && len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func submit(t *testing.T, e *env, actor runtime.Actor, uuid string, data map[string]any, key string) runtime.Outcome {
	t.Helper()
	out, err := e.rt.SubmitInput(e.ctx, actor, uuid, runtime.InputSubmission{Data: data, TurnDigest: e.view(uuid).Pause.Digest, IdempotencyKey: key})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return out
}

// TestInvalidSubmissionChangesNothing is rule 4.1: validation before the claim; a rejected
// submission leaves the run waiting with no event, and a corrected one succeeds.
func TestInvalidSubmissionChangesNothing(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	before := e.run(run.UUID)
	evBefore := len(e.events(run.UUID))
	digest := e.view(run.UUID).Pause.Digest
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{
		Data: map[string]any{"city": "B", "zip": "abc"}, TurnDigest: digest, IdempotencyKey: "bad",
	})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeInvalidInputSubmission {
		t.Fatalf("err = %v, want InvalidInputSubmission", err)
	}
	if re.RunUUID != run.UUID {
		t.Fatalf("run %q", re.RunUUID)
	}
	pointers := map[string]bool{}
	for _, f := range re.Fields {
		pointers[f.Pointer] = true
		if contains(f.Message, "abc") {
			t.Fatalf("field message echoes the value: %q", f.Message)
		}
	}
	if !pointers["/city"] || !pointers["/zip"] {
		t.Fatalf("field errors = %+v, want /city and /zip", re.Fields)
	}
	if contains(err.Error(), "abc") {
		t.Fatalf("error echoes the value: %v", err)
	}
	after := e.run(run.UUID)
	if after.Status != before.Status || after.ClaimedBy != "" || after.Tstamp != before.Tstamp {
		t.Fatalf("run changed: before %+v after %+v", before, after)
	}
	if n := len(e.events(run.UUID)); n != evBefore {
		t.Fatalf("events %d, want %d", n, evBefore)
	}
	if _, err := e.store.FindDecision(e.ctx, run.UID, "bad"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("decision stored for an invalid submission: %v", err)
	}
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin", "zip": "10115"}, "good")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
}

// TestTwoInputToolsInOneTurn: the first input call is collected; the second is refused, not
// collected.
func TestTwoInputToolsInOneTurn(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`), call("ask_amount", `{}`), call("lookup", `{}`))})
	run := e.startAndRun(admin)
	if v := e.view(run.UUID); v.Pause.InputTool != "ask_city" {
		t.Fatalf("input tool = %q, want ask_city", v.Pause.InputTool)
	}
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := len(e.rec.get("ask_amount")); n != 0 {
		t.Fatalf("second input tool executed %d times", n)
	}
	if len(e.rec.get("ask_city")) != 1 || len(e.rec.get("lookup")) != 1 {
		t.Fatalf("calls = %v", e.rec.calls)
	}
}

// TestInputResumeRefusesApprovalBoundCall: an approval-bound call that became offered while
// the run waited for input is refused, not executed (rule 4.9).
func TestInputResumeRefusesApprovalBoundCall(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`), call("send_mail", `{}`))})
	e.cfg.Tools = []string{"ask_city"}
	e.saveConfig()
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	e.cfg.Tools = []string{"ask_city", "send_mail"}
	e.saveConfig()
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := len(e.rec.get("send_mail")); n != 0 {
		t.Fatalf("approval-bound tool executed on an input resume")
	}
}

// TestToolDisabledWhileWaiting: the input target was removed from the configuration while the
// run waited: the submitter gate refuses and the run stays waiting.
func TestToolDisabledWhileWaiting(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	e.cfg.Tools = []string{"lookup"}
	e.saveConfig()
	_, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"city": "Berlin"}, TurnDigest: e.view(run.UUID).Pause.Digest})
	if !errors.Is(err, runtime.ErrSubmitterNotPermitted) {
		t.Fatalf("err = %v, want SubmitterNotPermitted", err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
}

// submitForm posts form to a run through SubmitInput as the person saw it (the pause's digest).
func submitForm(e *env, uuid string, form url.Values, digest, key string) (runtime.Outcome, error) {
	return e.rt.SubmitInput(e.ctx, admin, uuid, runtime.InputSubmission{Form: form, TurnDigest: digest, IdempotencyKey: key})
}

// TestSubmitFormCoercesWithTheStoredSchema: a posted form is coerced by the runtime (only
// declared fields, typed by the schema), validated before the claim and overlaid like Data.
func TestSubmitFormCoercesWithTheStoredSchema(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_amount", `{"amount":999,"note":"keep"}`))})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	out, err := submitForm(e, run.UUID, url.Values{"input/amount": {" 1e3 "}, "input/evil": {"x"}}, digest, "form-1")
	if err != nil || out.Replayed {
		t.Fatalf("submit: %+v, %v", out, err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	jsonEqual(t, e.rec.get("ask_amount")[0], `{"amount":1000,"note":"keep"}`)
	if again, err := submitForm(e, run.UUID, url.Values{"input/amount": {"5"}}, digest, "form-1"); err != nil || !again.Replayed {
		t.Fatalf("replay: %+v, %v", again, err)
	}
}

// TestSubmitFormRefusals: an unreadable or invalid form is InvalidInputSubmission with the
// coercion errors (never the values); a stale form is stale whatever it holds; nothing changes.
func TestSubmitFormRefusals(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	_, err := submitForm(e, run.UUID, url.Values{"input/zip": {"abcde"}}, digest, "bad")
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeInvalidInputSubmission {
		t.Fatalf("invalid form: err = %v, want %s", err, runtime.CodeInvalidInputSubmission)
	}
	if fmt.Sprint(re.Fields) != "[{/city This field is required.} {/zip "+re.Fields[1].Message+"}]" || contains(err.Error(), "abcde") {
		t.Fatalf("field errors %q (err %v), want /city required then /zip, no value", re.Fields, err)
	}
	for name, form := range map[string]url.Values{"stale and invalid": {"input/zip": {"abcde"}}, "stale and valid": {"input/city": {"Berlin"}}} {
		if _, err := submitForm(e, run.UUID, form, "feed", "stale"); !errors.Is(err, runtime.ErrStaleInputTurn) {
			t.Errorf("%s: err = %v, want %s", name, err, runtime.CodeStaleInputTurn)
		}
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	if len(e.rec.get("ask_city")) != 0 {
		t.Fatal("the input tool ran")
	}
}

// TestSubmitFormToAFormlessSchema: a form for a schema that yields no field is refused as a
// corrupt state wrapping ErrNoInputForm; the run keeps waiting.
func TestSubmitFormToAFormlessSchema(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
	run := e.startAndRun(admin)
	if _, err := e.sql.ExecContext(e.ctx, `UPDATE tx_nrllm_agentrun SET suspended_state = REPLACE(suspended_state, ?, ?) WHERE uid = ?`,
		`"inputSchema":`+citySchema, `"inputSchema":{"type":"object","properties":{"never":false}}`, run.UID); err != nil {
		t.Fatal(err)
	}
	_, err := submitForm(e, run.UUID, url.Values{"input/never": {"x"}}, e.view(run.UUID).Pause.Digest, "")
	if !errors.Is(err, runtime.ErrCorruptSuspendedState) || !errors.Is(err, runtime.ErrNoInputForm) {
		t.Fatalf("err = %v, want %s wrapping ErrNoInputForm", err, runtime.CodeCorruptSuspendedState)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
}

// TestRecoveredContinuationRevalidates: a continuation the claim did not hand over (the
// process stopped after the claim; the reaper requeued it) validates its stored data again,
// and fails the run when it no longer matches the schema.
func TestRecoveredContinuationRevalidates(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`)), {Content: "done"}})
	run := e.startAndRun(admin)
	e.hooks.arm(runtime.HookAfterClaim)
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusRunning)
	res, err := e.sql.ExecContext(e.ctx, `UPDATE tx_nrllm_agentrun SET queued_request = REPLACE(queued_request, '"Berlin"', '"B"') WHERE uid = ?`, run.UID)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("tamper with the stored continuation: %d rows, %v", n, err)
	}
	e.clock.Advance(2 * time.Minute)
	if rep, err := e.rt.Reap(e.ctx, 50); err != nil || rep.Requeued != 1 {
		t.Fatalf("reap = %+v, %v", rep, err)
	}
	if ok, err := e.rt.RunOnce(e.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	if got := e.wantStatus(run.UUID, runtime.StatusFailed); got.ErrorClass != "InputRevalidationFailed" {
		t.Fatalf("error class %q, want InputRevalidationFailed", got.ErrorClass)
	}
	if len(e.rec.get("ask_city")) != 0 {
		t.Fatal("the input tool ran with data that no longer validates")
	}
}
