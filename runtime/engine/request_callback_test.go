package engine_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/wait"
)

// callbackEnv is externalEnv whose configuration takes callbacks to hooks.example.com,
// signed with the secret in CALLBACK_SECRET.
func callbackEnv(t *testing.T) *env {
	t.Helper()
	e := externalEnv(t)
	e.cfg.External.CallbackHosts = []string{"hooks.example.com"}
	e.cfg.External.CallbackSecretEnv = "CALLBACK_SECRET"
	e.saveConfig()
	return e
}

// requestCalledBack creates an approval request as ci whose decision is called back at url.
func (e *env) requestCalledBack(url string) runtime.Run {
	e.t.Helper()
	run, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: e.cfg.Identifier, Kind: runtime.RequestApproval,
		Tool: "wire_transfer", Arguments: json.RawMessage(`{"amount":3}`), CallbackURL: url})
	if err != nil {
		e.t.Fatalf("CreateRequest with callback %s: %v", url, err)
	}
	return run
}

// wantCallback wants exactly one outbox row of run uuid's callback, to url, and the answer it
// carries (CallbackAnswer) to be the caller's (RequestAnswer).
func (e *env) wantCallback(uuid, url string) {
	e.t.Helper()
	ns, err := e.store.RunNotifications(e.ctx, e.run(uuid).UID, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	var rows []runtime.Notification
	for _, n := range ns {
		if n.Rule.Channel == runtime.ChannelCallback {
			rows = append(rows, n)
		}
	}
	if len(rows) != 1 || rows[0].Event != runtime.NotifyFinished || rows[0].Rule.URL != url || rows[0].Rule.SecretEnv != "CALLBACK_SECRET" ||
		rows[0].State != runtime.NotificationPending {
		e.t.Fatalf("callback rows of %s: %+v, want one pending finished row to %s", uuid, rows, url)
	}
	got, err := e.rt.CallbackAnswer(e.ctx, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	if want := e.answerOf(uuid); !reflect.DeepEqual(got, want) {
		e.t.Errorf("CallbackAnswer %+v, the caller's answer %+v", got, want)
	}
}

// TestRequestCallbackOnEveryEnding: the transition that ends a request with a callback_url
// writes its one callback row, whatever ends it: a person's decision, a denying expiry, a
// cancelling expiry, its caller's withdrawal, a person's cancel; the callback's answer is the
// caller's. A request without a callback_url writes none, and CallbackAnswer of a run that is
// no request is run_not_found.
func TestRequestCallbackOnEveryEnding(t *testing.T) {
	e := callbackEnv(t)
	decided := e.requestCalledBack("https://hooks.example.com/decided")
	approve(t, e, admin, decided.UUID, true)
	e.wantDecided(decided.UUID)
	e.wantCallback(decided.UUID, "https://hooks.example.com/decided")

	withdrawn := e.requestCalledBack("https://hooks.example.com/withdrawn")
	if _, err := e.rt.WithdrawRequest(e.ctx, service, withdrawn.UUID); err != nil {
		t.Fatal(err)
	}
	e.wantCallback(withdrawn.UUID, "https://hooks.example.com/withdrawn")

	cancelled := e.requestCalledBack("https://hooks.example.com/cancelled")
	if _, err := e.rt.Cancel(e.ctx, admin, cancelled.UUID); err != nil {
		t.Fatal(err)
	}
	e.wantCallback(cancelled.UUID, "https://hooks.example.com/cancelled")

	plain := e.request(runtime.RequestApproval, "wire_transfer", `{"amount":4}`, runtime.StatusWaitingApproval)
	approve(t, e, admin, plain.UUID, false)
	e.wantDecided(plain.UUID)
	if ns, err := e.store.RunNotifications(e.ctx, e.run(plain.UUID).UID, 100); err != nil || len(ns) != 0 {
		t.Errorf("a request without callback_url has notifications %+v (%v)", ns, err)
	}

	for _, onExpiry := range []wait.Action{wait.Deny, wait.Cancel} {
		e.cfg.Wait = wait.Policy{ExpiresAfter: time.Hour, OnExpiry: onExpiry}
		e.saveConfig()
		expired := e.requestCalledBack("https://hooks.example.com/expired-" + string(onExpiry))
		e.clock.Advance(2 * time.Hour)
		e.expire()
		e.rt.Wait()
		if !e.run(expired.UUID).Status.Terminal() {
			t.Fatalf("%s expiry left the request %s", onExpiry, e.run(expired.UUID).Status)
		}
		e.wantCallback(expired.UUID, "https://hooks.example.com/expired-"+string(onExpiry))
	}

	agent := newEnv(t, nil)
	run, err := agent.rt.Start(agent.ctx, admin, agent.cfg.Identifier, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.rt.CallbackAnswer(agent.ctx, run.UUID); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("CallbackAnswer of a run that is no request: %v, want run_not_found", err)
	}
}
