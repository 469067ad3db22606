package handlers

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestAuditTrailPage: an admin's /audit lists the rows newest first with their details and a
// link to their run, filters by actor, action, run, outcome and dates (400 for a date that
// does not parse), pages by keyset, exports the filtered rows as CSV and JSON Lines, and every
// view and export is itself audited.
func TestAuditTrailPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	ctx := t.Context()
	run := "0a6e2b58-1234-4abc-9def-000000000001"
	for i, r := range []struct{ name, action, run, outcome, reason string }{
		{"rita", "approval", run, "approved", "checked with ops"},
		{"rita", "approval", "", "denied", "no ticket"},
		{"cli:runsdesk:user", "user_disable", "", "success", `user "bob" (uid 9)`},
		{"mallory", "login", "", "throttled", ""},
	} {
		if err := app.audit.Record(ctx, runtime.Actor{UserUID: int64(i + 1), Name: r.name}, "192.0.2.7", r.action, r.run, r.outcome, r.reason); err != nil {
			t.Fatal(err)
		}
	}
	admin := app.login(runtime.RoleAdmin)
	res := admin.get("/audit?actor=rita&action=approval")
	if res.status != http.StatusOK || strings.Count(res.body, `data-testid="audit-row"`) != 2 ||
		!strings.Contains(res.body, `href="/runs/`+run+`"`) || !strings.Contains(res.body, "checked with ops") ||
		strings.Contains(res.body, "user_disable") {
		t.Fatalf("GET /audit?actor=rita&action=approval: %d\n%s", res.status, res.body)
	}
	if i, j := strings.Index(res.body, "no ticket"), strings.Index(res.body, "checked with ops"); i > j {
		t.Error("the rows are not newest first")
	}
	if res := admin.get("/audit?run=" + run + "&outcome=approved&since=2000-01-01&until=2999-12-31"); strings.Count(res.body, `data-testid="audit-row"`) != 1 {
		t.Errorf("run, outcome and dates filter: %d rows", strings.Count(res.body, `data-testid="audit-row"`))
	}
	if res := admin.get("/audit?until=2000-01-01"); !strings.Contains(res.body, `data-testid="audit-empty"`) {
		t.Errorf("until 2000: %.300s", res.body)
	}
	if res := admin.get("/audit?since=yesterday"); res.status != http.StatusBadRequest {
		t.Errorf("since=yesterday: %d, want 400", res.status)
	}

	// One row per page: the next page link leads to the older row, and back to the first.
	first := admin.get("/audit?actor=rita&per=1")
	next := regexp.MustCompile(`href="([^"]*)" rel="next"`).FindStringSubmatch(first.body)
	if strings.Count(first.body, `data-testid="audit-row"`) != 1 || !strings.Contains(first.body, "no ticket") || next == nil {
		t.Fatalf("first page of one: %s", first.body)
	}
	second := admin.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	if !strings.Contains(second.body, "checked with ops") || !strings.Contains(second.body, `data-testid="pager-first"`) {
		t.Errorf("second page: %s", second.body)
	}

	res = admin.get("/audit/export?format=csv&actor=rita")
	records, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if res.status != http.StatusOK || err != nil || len(records) != 3 || strings.Join(records[0], ",") != strings.Join(auditExportFields(), ",") ||
		records[1][8] != "no ticket" || records[2][6] != run || !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") {
		t.Errorf("CSV export (%v): %d %v", err, res.status, records)
	}
	res = admin.get("/audit/export?format=jsonl&action=login&outcome=throttled")
	lines := strings.Split(strings.TrimSpace(res.body), "\n")
	var row map[string]any
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"id":`) || json.Unmarshal([]byte(lines[0]), &row) != nil || row["actor"] != "mallory" || row["run"] != nil || row["chain_seq"] != 0.0 {
		t.Errorf("JSON Lines export: %q", res.body)
	}
	if res := admin.get("/audit/export?format=xml"); res.status != http.StatusBadRequest {
		t.Errorf("format=xml: %d, want 400", res.status)
	}
	if res := app.login(runtime.RoleReviewer).get("/audit"); res.status != http.StatusForbidden {
		t.Errorf("a reviewer's /audit: %d, want 403", res.status)
	}

	rows, err := app.audit.ListAudit(ctx, runtime.AuditFilter{Action: actionAuditView, Limit: 100})
	if err != nil || len(rows) != 5 || rows[len(rows)-1].Reason != "2 rows actor=rita action=approval" || rows[0].ActorName == "" {
		t.Errorf("audit_view rows (%v): %+v", err, rows)
	}
	rows, err = app.audit.ListAudit(ctx, runtime.AuditFilter{Action: actionAuditExport, Limit: 100})
	if err != nil || len(rows) != 2 || rows[1].Reason != "format=csv actor=rita" {
		t.Errorf("audit_export rows (%v): %+v", err, rows)
	}
}
