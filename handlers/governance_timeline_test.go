package handlers

import (
	"net/http"
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
		"tool|3|✕ Error Tool lookup answered with an error",
		"governance||Tool lookup refused: the turn was denied",
		"tool|4|✕ Error Tool issue_refund answered with an error",
		"governance||Tool issue_refund refused: the turn was denied",
		"llm|5|The model answered",
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
