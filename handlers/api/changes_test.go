package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestRequestChangesThroughTheAPI: {"request_changes": "<text>"} instead of "approved" is 202
// {approved: false, changes_requested: true, resumed: true}; the run continues without running
// the call and records a request_changes event that never carries the text; sent with
// "approved", empty, or over 1,000 characters it is 400 invalid_request and changes nothing.
func TestRequestChangesThroughTheAPI(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	path := "/api/v1/runs/" + id + "/approval"
	digest := w.digest(id)
	before := w.snapshot(id)
	for _, body := range []string{
		`{"approved":true,"request_changes":"x","turn_digest":"` + digest + `"}`,
		`{"request_changes":"  ","turn_digest":"` + digest + `"}`,
		`{"request_changes":"` + strings.Repeat("x", runtime.MaxReasonCharacters+1) + `","turn_digest":"` + digest + `"}`,
	} {
		wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: body}), http.StatusBadRequest, "invalid_request")
	}
	w.unchanged(before, id)
	res := w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"],
		body: `{"request_changes":"use the second address","turn_digest":"` + digest + `"}`})
	got := decode[struct {
		Approved         bool `json:"approved"`
		ChangesRequested bool `json:"changes_requested"`
		Resumed          bool `json:"resumed"`
	}](t, res, http.StatusAccepted)
	if got.Approved || !got.ChangesRequested || !got.Resumed {
		t.Fatalf("answer %+v", got)
	}
	w.rt.Wait()
	if b := w.get(id); b.Status != "completed" {
		t.Fatalf("after a request for changes the run is %s", b.Status)
	}
	evs := decode[[]struct {
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id + "/events", token: w.tokens["read"]}), http.StatusOK)
	n := 0
	for _, e := range evs {
		if e.Kind == runtime.DecisionRequestChanges {
			n++
		}
		if strings.Contains(string(e.Payload), "second address") {
			t.Errorf("event %s carries the text: %s", e.Kind, e.Payload)
		}
	}
	if n != 1 {
		t.Errorf("%d request_changes events, want 1", n)
	}
}
