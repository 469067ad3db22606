package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestPresenceOnTheRunPage: rita opening a waiting run's page shows her to ada, who opens it
// after, and ada's heartbeat (POST …/presence) answers with rita; nobody else is shown to a
// lone viewer, and a heartbeat on a run the viewer may not read is 404.
func TestPresenceOnTheRunPage(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "mail")
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	if got := rita.get(views.RunPath(run)).doc(t).Find(`[data-testid="presence"]`).Text(); got != "Nobody else has this page open." {
		t.Fatalf("rita alone sees %q", got)
	}
	line := ada.get(views.RunPath(run)).doc(t).Find(`[data-testid="presence"]`)
	if got := line.Text(); got != "Also on this page now: rita." || line.AttrOr("data-presence", "") != views.PresencePath(run) {
		t.Fatalf("ada sees %q (heartbeat %q)", got, line.AttrOr("data-presence", ""))
	}
	res := rita.postForm(views.PresencePath(run), url.Values{"_csrf": {rita.token()}})
	var seen struct {
		Others []string `json:"others"`
		Text   string   `json:"text"`
	}
	if err := json.Unmarshal([]byte(res.body), &seen); res.status != http.StatusOK || err != nil || len(seen.Others) != 1 || seen.Others[0] != "ada" {
		t.Fatalf("rita's heartbeat: %d %s", res.status, res.body)
	}
	if res := rita.postForm(views.PresencePath("0a6e2b58-1234-4abc-9def-000000000000"), url.Values{"_csrf": {rita.token()}}); res.status != http.StatusNotFound {
		t.Errorf("heartbeat on no run: %d, want 404", res.status)
	}
	if res := rita.postForm(views.PresencePath(run), url.Values{}); res.status != http.StatusForbidden {
		t.Errorf("heartbeat without its CSRF token: %d, want 403", res.status)
	}
}
