package handlers

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
)

// timelineRows returns the run page's timeline as "kind|#|summary" rows, in order.
func timelineRows(t *testing.T, c *client, uuid string) []string {
	t.Helper()
	var out []string
	c.get("/runs/" + uuid).doc(t).Find(`[data-testid="timeline-row"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.AttrOr("data-kind", "")+"|"+strings.TrimSpace(s.Find(`td[data-label="#"]`).Text())+"|"+
			strings.Join(strings.Fields(s.Find(".timeline__summary").Text()), " "))
	})
	return out
}

// TestTimelineShowsGovernanceRows: the run page merges the governance rows into the timeline:
// a reviewer the approver gate refused (admin-only write) right after the step before it, and
// the refused calls of a denied turn each right after its tool step; rows show no step
// number and no argument value.
func TestTimelineShowsGovernanceRows(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleReviewer, "refund")
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	res := rita.postForm("/runs/"+uuid+"/approval", rita.approvalFormOf(uuid, "approve"))
	if res.status != http.StatusSeeOther {
		t.Fatalf("refused approval: %d", res.status)
	}
	wantSeeOther(t, "deny", ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "deny")), "/runs/"+uuid)
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Fatalf("run after denial: %s", run.Status)
	}
	got := timelineRows(t, ada, uuid)
	want := []string{
		"request|0|Started by rita",
		"llm|1|The model asked for lookup, issue_refund",
		"governance||Approval by rita refused: the tool is admin-only",
		"approval|2|Denied by ada",
		"tool|3|Tool lookup was not run: denied by ada at <time>; no reason given",
		"governance||Tool lookup refused: the turn was denied",
		"tool|4|Tool issue_refund was not run: denied by ada at <time>; no reason given",
		"governance||Tool issue_refund refused: the turn was denied",
		"llm|5|The model answered",
	}
	for i := range got {
		got[i] = decisionTimes.ReplaceAllString(got[i], "at <time>")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	res = ada.get("/runs/" + uuid)
	if !strings.Contains(res.body, "gate=approver") || !strings.Contains(res.body, "tool_denied") {
		t.Error("the governance rows' decision and detail are not shown")
	}
	// The page's text, not its markup: a form's random CSRF token may contain "A1".
	if text := res.doc(t).Text(); strings.Contains(text, `"amount":5`) || strings.Contains(text, "A1") {
		t.Error("the run page shows argument values")
	}
}

// decisionTimes matches the time a timeline names a decision by ("at 1 Dec 2026, 18:57 UTC").
var decisionTimes = regexp.MustCompile(`at [0-9]{1,2} [A-Z][a-z]{2} [0-9]{4}, [0-9]{2}:[0-9]{2} UTC`)

// TestDenialOnTheTimelineSaysWhoWhenAndWhy: a denial's reason, posted with the form, is shown
// on the timeline to everyone who may read the run (support included), beside the verdict and
// on each call it refused, which reads as a denial by that person at that time, not as a
// tool's error.
func TestDenialOnTheTimelineSaysWhoWhenAndWhy(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleReviewer, "refund")
	ada, sam := app.login(runtime.RoleAdmin), app.login(runtime.RoleSupport)
	form := ada.approvalFormOf(uuid, "deny")
	form.Set("reason", "wrong customer, use order B-2")
	wantSeeOther(t, "deny", ada.postForm("/runs/"+uuid+"/approval", form), "/runs/"+uuid)
	app.row(uuid)
	page := sam.get("/runs/" + uuid).doc(t)
	var approval, tools []string
	page.Find(`[data-testid="timeline-row"]`).Each(func(_ int, s *goquery.Selection) {
		text := strings.Join(strings.Fields(s.Find(`[data-testid="timeline-details"]`).Text()), " ")
		switch s.AttrOr("data-kind", "") {
		case "approval":
			approval = append(approval, text)
		case "tool":
			tools = append(tools, decisionTimes.ReplaceAllString(text, "at <time>"))
		}
	})
	if len(approval) != 1 || approval[0] != "Denied by ada reason: wrong customer, use order B-2" {
		t.Errorf("approval row %q: want the verdict and the reason", approval)
	}
	want := []string{
		"Tool lookup was not run: denied by ada at <time>: wrong customer, use order B-2",
		"Tool issue_refund was not run: denied by ada at <time>: wrong customer, use order B-2",
	}
	if strings.Join(tools, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool rows:\n%s\nwant:\n%s", strings.Join(tools, "\n"), strings.Join(want, "\n"))
	}
}
