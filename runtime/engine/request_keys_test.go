package engine_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"runsdesk/runtime"
)

// TestRequestKeysReplayOrConflict: a request repeating an external_id or Idempotency-Key with
// the same body returns the run already created; a different body under a used key is
// external_id_conflict or idempotency_key_conflict; either way no second run is stored.
func TestRequestKeysReplayOrConflict(t *testing.T) {
	e := externalEnv(t)
	req := runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer", Arguments: json.RawMessage(`{"amount":3}`),
		Title: "Refund", ExternalID: "order-1", IdempotencyKey: "k-1"}
	first, err := e.rt.CreateRequest(e.ctx, service, req)
	if err != nil {
		t.Fatal(err)
	}
	replays := []runtime.NewRequest{req}
	byKey := req
	byKey.ExternalID = ""
	byID := req
	byID.IdempotencyKey = "k-2"
	replays = append(replays, byID)
	for _, r := range replays {
		again, err := e.rt.CreateRequest(e.ctx, service, r)
		if err != nil || again.UUID != first.UUID {
			t.Errorf("replay %+v: %s, %v; want run %s", r, again.UUID, err, first.UUID)
		}
	}
	other := req
	other.Arguments = json.RawMessage(`{"amount":4}`)
	otherKey := other
	otherKey.ExternalID = "order-2"
	for _, tc := range []struct {
		req  runtime.NewRequest
		code runtime.Code
	}{{other, runtime.CodeExternalIDConflict}, {otherKey, runtime.CodeIdempotencyKeyConflict}, {byKey, runtime.CodeIdempotencyKeyConflict}} {
		_, err := e.rt.CreateRequest(e.ctx, service, tc.req)
		var re *runtime.Error
		if !errors.As(err, &re) || re.Code != tc.code {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.code)
		}
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_nrllm_agentrun`); n != 1 {
		t.Errorf("%d runs stored, want 1", n)
	}
}

// TestConcurrentRequestsOneExternalID: many concurrent creations with one external_id create
// exactly one run, and every caller gets it.
func TestConcurrentRequestsOneExternalID(t *testing.T) {
	e := externalEnv(t)
	req := runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer", Arguments: json.RawMessage(`{"amount":3}`), ExternalID: "order-1"}
	const n = 16
	got := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := e.rt.CreateRequest(e.ctx, service, req)
			got[i], errs[i] = run.UUID, err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] != got[0] {
			t.Errorf("creation %d: %s, %v; want run %s", i, got[i], errs[i], got[0])
		}
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_nrllm_agentrun`); n != 1 {
		t.Errorf("%d runs stored, want 1", n)
	}
}

// TestRequestOnBehalfOf: a request on behalf of a person stores them on the run; under
// require_second_approver that person's approval is self_approval_denied while another
// person's is taken; a name of no person is invalid_request.
func TestRequestOnBehalfOf(t *testing.T) {
	e := externalEnv(t)
	e.withPeople()
	e.cfg.RequireSecondApprover = true
	e.saveConfig()
	run, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer",
		Arguments: json.RawMessage(`{"amount":3}`), OnBehalfOf: reviewer.Name})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.run(run.UUID); got.OnBehalfOf != reviewer.UserUID || got.OnBehalfOfName != reviewer.Name || got.BeUser != 0 {
		t.Fatalf("run on behalf of: %d %q (be_user %d), want %d %q", got.OnBehalfOf, got.OnBehalfOfName, got.BeUser, reviewer.UserUID, reviewer.Name)
	}
	digest := e.view(run.UUID).Pause.Digest
	_, err = e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest})
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeSelfApprovalDenied {
		t.Fatalf("approval by the person it acts for: %v, want self_approval_denied", err)
	}
	if _, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest}); err != nil {
		t.Fatalf("approval by a second person: %v", err)
	}
	e.wantDecided(run.UUID)
	_, err = e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "wire_transfer", OnBehalfOf: "nobody"})
	if !errors.As(err, &re) || re.Code != runtime.CodeInvalidRequest {
		t.Errorf("on behalf of no person: %v, want invalid_request", err)
	}
}
