package handlers

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
)

// TestQueuePage: admins and reviewers see the queue's health per configuration and tool (the
// header links it for them alone), admins also per person; each figure opens the inbox
// filtered to it, and that inbox lists exactly the runs counted; support is refused.
func TestQueuePage(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail := app.pause(runtime.RoleAdmin, "mail")
	decided := app.pause(runtime.RoleAdmin, "mail")
	refund := app.pause(runtime.RoleAdmin, "refund")
	ask := app.pause(runtime.RoleAdmin, "ask")
	app.exec(`UPDATE tx_nrllm_agentrun SET escalated = 1 WHERE uuid = ?`, refund)
	rita := app.login(runtime.RoleReviewer)
	wantSeeOther(t, "approve", rita.postForm("/runs/"+decided+"/approval", rita.approvalFormOf(decided, "approve")), "/runs/"+decided)

	admin := app.login(runtime.RoleAdmin)
	res := admin.get("/queue")
	if res.status != http.StatusOK {
		t.Fatalf("GET /queue as admin: %d; body %.300s", res.status, res.body)
	}
	doc := res.doc(t)
	if !strings.Contains(doc.Find(`[data-testid="queue-approximate"]`).Text(), "approximate") {
		t.Error("the page does not say its percentiles are approximate")
	}
	if doc.Find(`[data-testid="nav-queue"]`).AttrOr("aria-current", "") != "page" {
		t.Error("the header does not mark Queue health as the current page")
	}
	row := func(doc *goquery.Document, table, cfg, tool string) *goquery.Selection {
		t.Helper()
		s := doc.Find(`[data-testid="` + table + `"][data-configuration="` + cfg + `"][data-tool="` + tool + `"]`)
		if s.Length() != 1 {
			t.Fatalf("%s rows of %q/%q: %d, want 1", table, cfg, tool, s.Length())
		}
		return s
	}
	figure := func(s *goquery.Selection, id string) (string, string) {
		f := s.Find(`[data-testid="queue-` + id + `"]`)
		return strings.TrimSpace(f.Text()), f.AttrOr("href", "")
	}
	desk := row(doc, "queue-row", "All configurations", "")
	if n, href := figure(desk, "approval"); n != "2" || href != "/runs?kind=approval" {
		t.Errorf("desk approvals %q → %q, want 2 → /runs?kind=approval", n, href)
	}
	if n, _ := figure(desk, "input"); n != "1" {
		t.Errorf("desk input %q, want 1", n)
	}
	sendMail := row(doc, "queue-row", "Mail assistant", "send_mail")
	n, href := figure(sendMail, "approval")
	if n != "1" || href != "/runs?configuration=mail&kind=approval&tool=send_mail" {
		t.Errorf("mail/send_mail approvals %q → %q", n, href)
	}
	if got := admin.rowsOf(href); !slices.Equal(got, []string{mail}) {
		t.Errorf("the figure's inbox lists %v, want %v", got, []string{mail})
	}
	if oldest := sendMail.Find(`[data-testid="queue-oldest"]`).AttrOr("href", ""); oldest != "/runs?configuration=mail&tool=send_mail" {
		t.Errorf("oldest wait links %q", oldest)
	}
	if p50, href := figure(sendMail, "age-p50"); !strings.HasPrefix(p50, "< ") || !strings.HasPrefix(href, "/runs?configuration=mail") {
		t.Errorf("waiting p50 %q → %q", p50, href)
	}
	for _, tool := range []string{"lookup", "issue_refund"} {
		r := row(doc, "queue-row", "Refund assistant", tool)
		if n, href := figure(r, "escalated"); n != "1" || href != "/runs?configuration=refund&deadline=escalated&tool="+tool {
			t.Errorf("refund/%s escalated %q → %q", tool, n, href)
		}
	}
	if got := admin.rowsOf("/runs?configuration=refund&deadline=escalated&tool=lookup"); !slices.Equal(got, []string{refund}) {
		t.Errorf("escalated inbox %v, want %v", got, []string{refund})
	}
	if n, href := figure(row(doc, "queue-row", "City finder", ""), "input"); n != "1" || href != "/runs?configuration=ask&kind=input" {
		t.Errorf("ask input %q → %q (run %s)", n, href, ask)
	}
	decidedMail := row(doc, "queue-decided-row", "Mail assistant", "send_mail")
	for _, id := range []string{"day", "week"} {
		if n, href := figure(decidedMail, id); n != "1" || href != "/runs?configuration=mail&tool=send_mail" {
			t.Errorf("mail/send_mail decisions (%s) %q → %q", id, n, href)
		}
	}
	if p50, _ := figure(decidedMail, "people-p50"); p50 != "< 10 s" {
		t.Errorf("people p50 %q, want < 10 s (decided at once)", p50)
	}
	if p50, _ := figure(decidedMail, "rules-p50"); p50 != "—" {
		t.Errorf("rules p50 %q, want — (no rule decided)", p50)
	}
	person := doc.Find(`[data-testid="queue-person"]`)
	if person.Length() != 1 || person.AttrOr("data-person", "") != testUsers[runtime.RoleReviewer] {
		t.Fatalf("people rows %d (%q), want the reviewer who decided", person.Length(), person.AttrOr("data-person", ""))
	}
	if n, href := figure(doc.Selection, "person-decisions"); n != "1" || href != "/runs?assignee="+testUsers[runtime.RoleReviewer] {
		t.Errorf("person decisions %q → %q", n, href)
	}

	res = rita.get("/queue")
	if res.status != http.StatusOK {
		t.Fatalf("GET /queue as reviewer: %d", res.status)
	}
	doc = res.doc(t)
	if doc.Find(`[data-testid="queue-people"], [data-testid="queue-person"], [data-testid="queue-people-empty"]`).Length() != 0 {
		t.Error("a reviewer sees the per-person figures")
	}
	if doc.Find(`[data-testid="nav-queue"]`).Length() != 1 {
		t.Error("a reviewer's header does not link Queue health")
	}
	app.checkQueueAPI(t, decided)

	sam := app.login(runtime.RoleSupport)
	if res := sam.get("/queue"); res.status != http.StatusForbidden {
		t.Errorf("GET /queue as support: %d, want 403", res.status)
	}
	if sam.get("/runs").doc(t).Find(`[data-testid="nav-queue"]`).Length() != 0 {
		t.Error("support's header links Queue health")
	}
}

// checkQueueAPI: GET /api/v1/queue (scope read) has the page's figures without the people;
// a token without scope read is refused.
func (a *testApp) checkQueueAPI(t *testing.T, decided string) {
	t.Helper()
	get := func(scopes ...string) response {
		token, err := a.tokens.CreateToken(t.Context(), "queue-"+strings.Join(scopes, "-"), scopes)
		if err != nil {
			t.Fatal(err)
		}
		return a.newClient().request(http.MethodGet, "/api/v1/queue", nil, http.Header{"Authorization": {"Bearer " + token}})
	}
	if res := get(runtime.ScopeRun); res.status != http.StatusForbidden {
		t.Errorf("GET /api/v1/queue without scope read: %d, want 403", res.status)
	}
	res := get(runtime.ScopeRead)
	if res.status != http.StatusOK {
		t.Fatalf("GET /api/v1/queue: %d %s", res.status, res.body)
	}
	var out struct {
		Approximate bool    `json:"percentiles_approximate"`
		Bounds      []int64 `json:"bucket_bounds_seconds"`
		Rows        []struct {
			Configuration, Tool string
			Waiting             struct {
				Approval, Input int64
				OldestSince     *int64 `json:"oldest_since"`
				AgeP50          *struct {
					AtLeast int64  `json:"at_least_seconds"`
					Below   *int64 `json:"below_seconds"`
				} `json:"age_p50"`
			}
			Escalated int64
			Decisions struct {
				Week int64 `json:"last_7d"`
				By   map[string]struct {
					Week int64 `json:"last_7d"`
					P50  *struct {
						Below *int64 `json:"below_seconds"`
					} `json:"time_to_decision_p50"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Approximate || len(out.Bounds) != 13 || len(out.Rows) == 0 || strings.Contains(res.body, testUsers[runtime.RoleReviewer]) {
		t.Fatalf("GET /api/v1/queue: %s", res.body)
	}
	if d := out.Rows[0]; d.Configuration != "" || d.Tool != "" || d.Waiting.Approval != 2 || d.Waiting.Input != 1 ||
		d.Waiting.OldestSince == nil || d.Waiting.AgeP50 == nil || d.Waiting.AgeP50.Below == nil || d.Escalated != 1 || d.Decisions.Week != 1 {
		t.Errorf("desk row %+v", d)
	}
	for _, r := range out.Rows {
		if r.Configuration == "mail" && r.Tool == "send_mail" {
			p := r.Decisions.By["person"]
			if r.Waiting.Approval != 1 || p.Week != 1 || p.P50 == nil || p.P50.Below == nil || *p.P50.Below != 10 || r.Decisions.By["rule"].P50 != nil {
				t.Errorf("mail/send_mail row %+v (decided %s)", r, decided)
			}
			return
		}
	}
	t.Errorf("no mail/send_mail row in %s", res.body)
}
