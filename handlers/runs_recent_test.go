package handlers

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
)

func TestRecentRunsNewestFirstWithPages(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	var uuids []string
	for i := range 3 {
		uuid := app.pause(runtime.RoleAdmin, "plain")
		app.exec(`UPDATE tx_nrllm_agentrun SET finished_at = ?, estimated_cost = ? WHERE uuid = ?`, now-int64(300-i*100), float64(i)*0.5, uuid)
		uuids = append(uuids, uuid)
	}
	waiting := app.pause(runtime.RoleAdmin, "mail")
	c := app.login(runtime.RoleSupport)
	res := c.get("/runs/recent")
	doc := res.doc(t)
	if res.status != http.StatusOK {
		t.Fatalf("GET /runs/recent: %d", res.status)
	}
	var got []string
	doc.Find(`[data-testid="recent-row"]`).Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("data-run", "")) })
	if want := []string{uuids[2], uuids[1], uuids[0]}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want newest finished first %v (not the waiting %s)", got, want, waiting)
	}
	var heads []string
	doc.Find("thead th").Each(func(_ int, s *goquery.Selection) { heads = append(heads, s.Text()) })
	if want := []string{"Configuration", "Status", "Created", "Finished", "Reason", "Tokens", "Cost", "Run"}; !reflect.DeepEqual(heads, want) {
		t.Errorf("columns %v, want %v", heads, want)
	}
	first := doc.Find(`[data-testid="recent-row"]`).First()
	if got := first.Find(`[data-testid="recent-cost"]`).Text(); got != "1.0000" {
		t.Errorf("cost %q, want 1.0000", got)
	}
	if got := doc.Find(`[data-testid="recent-row"]`).Last().Find(`[data-testid="recent-cost"]`).Text(); got != "" {
		t.Errorf("zero cost shown as %q, want blank", got)
	}
	if got := first.Find(`[data-testid="recent-reason"]`).Text(); got != "Completed" {
		t.Errorf("reason %q", got)
	}
	if got := first.Find(`[data-testid="recent-link"]`).AttrOr("href", ""); got != "/runs/"+uuids[2] {
		t.Errorf("link %q", got)
	}

	var walked []string
	path := "/runs/recent?per=2"
	for path != "" {
		d := c.get(path).doc(t)
		d.Find(`[data-testid="recent-row"]`).Each(func(_ int, s *goquery.Selection) { walked = append(walked, s.AttrOr("data-run", "")) })
		path = d.Find(`[data-testid="pager-next"]`).AttrOr("href", "")
		if len(walked) > 3 {
			t.Fatal("pages repeat rows")
		}
	}
	if !reflect.DeepEqual(walked, got) {
		t.Errorf("paged rows %v, want %v", walked, got)
	}
	for _, bad := range []string{"?before=x", "?per=-1", "?before=1-"} {
		if res := c.get("/runs/recent" + bad); res.status != http.StatusBadRequest {
			t.Errorf("GET /runs/recent%s: %d, want 400", bad, res.status)
		}
	}
	if !strings.Contains(c.get("/runs/recent?before=1-1").body, "There are no more finished runs.") {
		t.Error("an empty later page does not say so")
	}
}
