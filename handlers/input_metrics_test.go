package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestInputDecisionsAreCounted posts input forms through the real router and reads /metrics:
// every accepted, replayed, invalid and refused submission is one
// runsdesk_decisions_total{kind="input"} sample under its outcome.
func TestInputDecisionsAreCounted(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	adminRun := w.waitingRun("admin-details")
	c := w.app.login(runtime.RoleReviewer)
	valid := url.Values{"input/amount": {"5"}, "input/method": {"card"}}

	if res := c.postForm(inputPath(v), submission(c, v, "key-bad", url.Values{"input/amount": {"x"}})); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid: %d, want 422", res.status)
	}
	stale := submission(c, v, "key-stale", valid)
	stale.Set(views.FormFieldDigest, "sha256:0000")
	wantSeeOtherToRun(t, "stale", c.postForm(inputPath(v), stale), v.Run.UUID)
	wantSeeOtherToRun(t, "admin-only tool", c.postForm(inputPath(adminRun), submission(c, adminRun, "key-admin", valid)), adminRun.Run.UUID)
	ok := submission(c, v, "key-ok", valid)
	wantSeeOtherToRun(t, "accepted", c.postForm(inputPath(v), ok), v.Run.UUID)
	wantStatus(t, w.app, v.Run.UUID, runtime.StatusCompleted)
	wantSeeOtherToRun(t, "replay", c.postForm(inputPath(v), ok), v.Run.UUID)
	ok.Set(views.FormFieldIdempotencyKey, "key-again")
	wantDecidedFirst(t, "already handled", c.postForm(inputPath(v), ok), "This run was already decided: Input submitted by you at <time>. Your decision was not used.")

	m := c.get("/metrics").body
	for _, outcome := range []string{"submitted", "replayed", "invalid_input_submission", "stale_input_turn",
		"submitter_not_permitted", "run_already_resuming"} {
		if want := `runsdesk_decisions_total{kind="input",outcome="` + outcome + `"} 1`; !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(m, `kind="approval"`) {
		t.Error("input submissions were counted as approvals")
	}
}
