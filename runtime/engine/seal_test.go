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

// TestUnopenedEnvelopeIsNeverExecuted: a sealed state that does not open, sealed with a key
// id the key set lacks or changed in the database so its key does not open it, is refused as
// sealing_key_missing naming the key id (never as corrupt state); the pending call never runs.
func TestUnopenedEnvelopeIsNeverExecuted(t *testing.T) {
	for name, spoil := range map[string]func(string) (string, string){
		"missing key": func(st string) (string, string) {
			return strings.Replace(st, seal.Prefix+"t1:", seal.Prefix+"gone:", 1), "gone"
		},
		"tampered": func(st string) (string, string) {
			b := []byte(st)
			b[len(b)-2] ^= 0x01
			return string(b), "t1"
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, withKeys(t))
			run := e.startAndRun(admin)
			e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			digest := e.view(run.UUID).Pause.Digest
			st, id := spoil(e.storedState(run.UUID))
			if _, err := e.sql.Exec(`UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uuid = ?`, st, run.UUID); err != nil {
				t.Fatal(err)
			}
			_, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest})
			var rerr *runtime.Error
			if !errors.As(err, &rerr) || rerr.Code != runtime.CodeSealingKeyMissing || !strings.Contains(rerr.Message, `"`+id+`"`) {
				t.Fatalf("approve over an envelope that does not open: %v; want %s naming key %q", err, runtime.CodeSealingKeyMissing, id)
			}
			e.rt.Wait()
			if n := len(e.rec.get("send_mail")); n != 0 {
				t.Fatalf("send_mail ran %d times over a state that does not open", n)
			}
			if r := e.run(run.UUID); r.Status != runtime.StatusWaitingApproval {
				t.Fatalf("status %s, want the run left waiting", r.Status)
			}
		})
	}
}
