package engine_test

import (
	"errors"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/seal"
)

// withKeys builds the runtime on a Store that seals run state with a fresh key.
func withKeys(t *testing.T) envOption {
	line, err := seal.Generate("t1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := seal.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return func(e *env, c *engine.Config) {
		e.store = db.New(e.sql, db.WithKeys(keys))
		c.Store, c.Catalog = e.store, e.store
	}
}

func (e *env) storedState(uuid string) string {
	e.t.Helper()
	var s string
	if err := e.sql.QueryRow(`SELECT suspended_state FROM tx_nrllm_agentrun WHERE uuid = ?`, uuid).Scan(&s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// TestSealedRunsPauseAndContinue: with keys, a paused run's state is stored sealed, its
// page and digest read through the seal, and both kinds of decision continue it.
func TestSealedRunsPauseAndContinue(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{"to":"ada@example.com"}`)), turn(call("ask_city", `{}`)), {Content: "done"}}, withKeys(t))
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	if st := e.storedState(run.UUID); !strings.HasPrefix(st, seal.Prefix) || strings.Contains(st, "ada@example.com") {
		t.Fatalf("suspended_state stored as %.60q: want an envelope", st)
	}
	approve(t, e, admin, run.UUID, true)
	e.wantStatus(run.UUID, runtime.StatusWaitingInput)
	if len(e.rec.get("send_mail")) != 1 {
		t.Fatal("send_mail did not run after approval")
	}
	submit(t, e, admin, run.UUID, map[string]any{"city": "Berlin"}, "")
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if calls := e.rec.get("ask_city"); len(calls) != 1 || !strings.Contains(string(calls[0]), "Berlin") {
		t.Fatalf("ask_city calls %v: want the submitted city", calls)
	}
}

// TestTamperedEnvelopeIsNeverExecuted: a sealed state changed in the database is refused as
// corrupt; the pending call never runs.
func TestTamperedEnvelopeIsNeverExecuted(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, withKeys(t))
	run := e.startAndRun(admin)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	digest := e.view(run.UUID).Pause.Digest
	st := []byte(e.storedState(run.UUID))
	st[len(st)-2] ^= 0x01
	if _, err := e.sql.Exec(`UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uuid = ?`, string(st), run.UUID); err != nil {
		t.Fatal(err)
	}
	_, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest})
	var rerr *runtime.Error
	if !errors.As(err, &rerr) || rerr.Code != runtime.CodeCorruptSuspendedState {
		t.Fatalf("approve over a tampered envelope: %v; want %s", err, runtime.CodeCorruptSuspendedState)
	}
	e.rt.Wait()
	if n := len(e.rec.get("send_mail")); n != 0 {
		t.Fatalf("send_mail ran %d times over a tampered state", n)
	}
	if r := e.run(run.UUID); r.Status != runtime.StatusWaitingApproval {
		t.Fatalf("status %s, want the run left waiting", r.Status)
	}
}
