package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestStrictBodies: a key given twice, a key that is not exactly a declared field (case
// variants included) and text that is not valid UTF-8 are 400 invalid_request naming the key
// or field, on every API body, and change nothing; the exact body is then accepted.
func TestStrictBodies(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	digest := w.digest(id)
	approvalPath := "/api/v1/runs/" + id + "/approval"
	cases := []struct {
		name, path, body string
		want             []string
	}{
		{"case variant overrides a field", approvalPath, `{"approved":false,"turn_digest":"` + digest + `","APPROVED":true}`, []string{`"APPROVED"`, `"approved"`}},
		{"key given twice", approvalPath, `{"approved":false,"turn_digest":"` + digest + `","approved":true}`, []string{`"approved"`, "twice"}},
		{"key given twice through an escape", approvalPath, `{"approved":false,"turn_digest":"` + digest + `","appr\u006fved":true}`, []string{`"approved"`, "twice"}},
		{"only a case variant", approvalPath, `{"Approved":true,"turn_digest":"` + digest + `"}`, []string{`"Approved"`}},
		{"case variant of the digest", approvalPath, `{"approved":true,"Turn_Digest":"` + digest + `"}`, []string{`"Turn_Digest"`}},
		{"unknown key is named", approvalPath, `{"approved":true,"turn_digest":"` + digest + `","decided_by":7}`, []string{`"decided_by"`}},
		{"create with a duplicate prompt", "/api/v1/runs", `{"configuration":"plain","prompt":"a","prompt":"b"}`, []string{`"prompt"`, "twice"}},
		{"create with a case variant", "/api/v1/runs", `{"Configuration":"plain","prompt":"hi"}`, []string{`"Configuration"`}},
		{"create with invalid UTF-8", "/api/v1/runs", "{\"configuration\":\"plain\",\"prompt\":\"a\xffb\"}", []string{`"prompt"`, "UTF-8"}},
		{"create with a lone surrogate", "/api/v1/runs", `{"configuration":"plain","prompt":"a\ud800b"}`, []string{`"prompt"`, "UTF-8"}},
		{"key that is not UTF-8", "/api/v1/runs", "{\"configuration\":\"plain\",\"prompt\":\"hi\",\"\xfe\":1}", []string{"UTF-8"}},
		{"cancel with a duplicate", "/api/v1/runs/" + id + "/cancel", `{"a":1,"a":2}`, []string{`"a"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w.t = t
			before := w.snapshot(id)
			res := w.do(request{method: http.MethodPost, path: c.path, token: w.tokens["all"], body: c.body})
			wantError(t, res, http.StatusBadRequest, "invalid_request")
			var body struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal(res.body, &body); err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(body.Error.Message, want) {
					t.Errorf("message %q does not name %s", body.Error.Message, want)
				}
			}
			w.unchanged(before, id)
		})
	}
	w.t = t
	res := w.do(request{method: http.MethodPost, path: approvalPath, token: w.tokens["all"], body: approval(false, digest)})
	if res.code != http.StatusAccepted {
		t.Fatalf("exact body: %d %s", res.code, res.body)
	}
	if got := w.run(id).Status; got == runtime.StatusWaitingApproval {
		t.Errorf("run still %s after the exact body", got)
	}
}

// TestIdempotencyKeyHeaderMustBeText: an Idempotency-Key header that is not UTF-8 is 400 and
// decides nothing.
func TestIdempotencyKeyHeaderMustBeText(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	before := w.snapshot(id)
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"],
		body: approval(false, w.digest(id)), extra: []string{"Idempotency-Key", "k-\xff"}})
	wantError(t, res, http.StatusBadRequest, "invalid_request")
	w.unchanged(before, id)
}
