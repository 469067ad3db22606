package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestApprovalAgainstChangedPolicyIs409: a decision made without the current pin digest
// after the configuration's decision policy changed is 409 tool_changed and changes nothing;
// GET shows what changed and the current pin_digest, and a decision carrying it is accepted.
func TestApprovalAgainstChangedPolicyIs409(t *testing.T) {
	w := newWorld(t)
	uuid := w.runIn("approve")
	first := w.getPinned(uuid)
	if first.PinDigest == "" || len(first.Changes) != 0 {
		t.Fatalf("pending of a fresh pause: %+v", first)
	}
	cfg, err := w.store.ConfigurationByIdentifier(w.ctx, "approve")
	if err != nil {
		t.Fatal(err)
	}
	cfg.RequireSecondApprover = true
	if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	digest := w.digest(uuid)
	before := w.snapshot(uuid)
	wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + uuid + "/approval", token: w.tokens["approve"],
		body: approval(true, digest)}), http.StatusConflict, "tool_changed")
	wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + uuid + "/approval", token: w.tokens["approve"],
		body: pinnedApproval(digest, first.PinDigest)}), http.StatusConflict, "tool_changed")
	w.unchanged(before, uuid)

	time.Sleep(2100 * time.Millisecond)
	now := w.getPinned(uuid)
	if now.PinDigest == first.PinDigest || len(now.Changes) != 1 || now.Changes[0].Field != "four_eyes" || now.Changes[0].Was != "off" || now.Changes[0].Now != "on" {
		t.Fatalf("pending after the change: %+v", now)
	}
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + uuid + "/approval", token: w.tokens["approve"], body: pinnedApproval(digest, now.PinDigest)})
	if res.code != http.StatusAccepted {
		t.Fatalf("approval with the current pin digest: %d %s", res.code, res.body)
	}
}

// pinned is the pending part of GET /runs/{uuid} that pins definitions.
type pinned struct {
	PinDigest string `json:"pin_digest"`
	Changes   []struct {
		Tool  string `json:"tool"`
		Field string `json:"field"`
		Was   string `json:"was"`
		Now   string `json:"now"`
	} `json:"definition_changes"`
}

func (w *world) getPinned(uuid string) pinned {
	w.t.Helper()
	body := decode[struct {
		Pending *pinned `json:"pending"`
	}](w.t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + uuid, token: w.tokens["read"]}), http.StatusOK)
	if body.Pending == nil {
		w.t.Fatalf("run %s has no pending part", uuid)
	}
	return *body.Pending
}

func pinnedApproval(digest, pin string) string {
	b, _ := json.Marshal(map[string]any{"approved": true, "turn_digest": digest, "pin_digest": pin})
	return string(b)
}
