package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"runsdesk/runtime"
)

// listPage is a page of GET /api/v1/runs with each run kept as sent.
type listPage struct {
	Runs       []json.RawMessage `json:"runs"`
	NextCursor *string           `json:"next_cursor"`
}

func (w *world) list(query url.Values) listPage {
	w.t.Helper()
	res := w.do(request{method: http.MethodGet, path: "/api/v1/runs?" + query.Encode(), token: w.tokens["read"]})
	return decode[listPage](w.t, res, http.StatusOK)
}

// uuids lists the page's run ids in order.
func (p listPage) uuids(t *testing.T) []string {
	t.Helper()
	out := make([]string, len(p.Runs))
	for i, raw := range p.Runs {
		var r struct{ UUID string }
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		out[i] = r.UUID
	}
	return out
}

// all follows next_cursor from the first page of query to the last, limit runs a page.
func (w *world) all(query url.Values, limit string) []string {
	w.t.Helper()
	query.Set("limit", limit)
	var out []string
	for range 20 {
		p := w.list(query)
		out = append(out, p.uuids(w.t)...)
		if p.NextCursor == nil {
			return out
		}
		query.Set("cursor", *p.NextCursor)
	}
	w.t.Fatalf("more than 20 pages for %v", query)
	return nil
}

// TestListRuns: GET /api/v1/runs lists each status group in its order (waiting longest
// waiting first, active oldest created first, finished newest finished first), keyset-paged
// with next_cursor (null on the last page), with the inbox's filters and search, each run as
// GET /api/v1/runs/{id} shows it but for its output; bad parameters are 400 invalid_request, a token without
// scope read 403.
func TestListRuns(t *testing.T) {
	w := newWorld(t)
	var approvals, inputs, completed []string
	for range 3 {
		approvals = append(approvals, w.runIn("approve"))
	}
	for range 2 {
		inputs = append(inputs, w.runIn("input"))
	}
	for range 2 {
		completed = append(completed, w.runIn("plain"))
	}
	cancelled := w.runIn("approve")
	if _, err := w.rt.Cancel(w.ctx, setupActor, cancelled); err != nil {
		t.Fatal(err)
	}
	queued, err := w.rt.Start(w.ctx, setupActor, "plain", "later")
	if err != nil {
		t.Fatal(err)
	}
	waitingOrder := w.order(`suspended_at > 0 ORDER BY suspended_at, uid`)
	finishedOrder := w.order(`finished_at > 0 ORDER BY finished_at DESC, uid DESC`)

	same := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	same("the default (waiting)", w.list(url.Values{}).uuids(t), waitingOrder)
	same("waiting, two a page", w.all(url.Values{}, "2"), waitingOrder)
	same("finished, one a page", w.all(url.Values{"status": {"finished"}}, "1"), finishedOrder)
	same("active", w.list(url.Values{"status": {"active"}}).uuids(t), []string{queued.UUID})
	same("queued", w.list(url.Values{"status": {"queued"}}).uuids(t), []string{queued.UUID})
	same("running", w.list(url.Values{"status": {"running"}}).uuids(t), []string{})
	same("waiting_for_input", w.list(url.Values{"status": {"waiting_for_input"}}).uuids(t), inputs)
	same("waiting_for_approval", w.list(url.Values{"status": {"waiting_for_approval"}}).uuids(t), approvals)
	same("completed,cancelled", w.list(url.Values{"status": {"cancelled,completed"}}).uuids(t), finishedOrder)
	same("failed", w.list(url.Values{"status": {"failed"}}).uuids(t), []string{})
	same("configuration", w.list(url.Values{"configuration": {"input"}}).uuids(t), inputs)
	same("configuration, finished", w.list(url.Values{"configuration": {"approve"}, "status": {"finished"}}).uuids(t), []string{cancelled})
	same("tool", w.list(url.Values{"tool": {"send_mail"}}).uuids(t), approvals)
	same("q: the start of a run id", w.list(url.Values{"q": {approvals[1][:8]}}).uuids(t), approvals[1:2])
	same("q: text in the configuration", w.list(url.Values{"q": {"INPU"}}).uuids(t), inputs)
	same("q: text, finished", w.list(url.Values{"q": {"plain"}, "status": {"finished"}}).uuids(t), finishedOrder[len(finishedOrder)-2:])
	if p := w.list(url.Values{"limit": {"5"}}); p.NextCursor != nil {
		t.Errorf("a page holding the last run has next_cursor %q, want null", *p.NextCursor)
	}

	page := w.list(url.Values{"status": {"waiting"}})
	page.Runs = append(page.Runs, w.list(url.Values{"status": {"finished"}}).Runs...)
	page.Runs = append(page.Runs, w.list(url.Values{"status": {"active"}}).Runs...)
	for i, id := range page.uuids(t) {
		res := w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]})
		var listed, got any
		if err := json.Unmarshal(page.Runs[i], &listed); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(res.body, &got); err != nil {
			t.Fatal(err)
		}
		delete(got.(map[string]any), "output") // a list leaves the output to GET /runs/{uuid}
		delete(got.(map[string]any), "output_withheld")
		if !reflect.DeepEqual(listed, got) {
			t.Errorf("run %s listed as\n%s\nGET shows\n%s", id, page.Runs[i], res.body)
		}
	}

	first := w.list(url.Values{"limit": {"1"}})
	for _, q := range []url.Values{
		{"status": {"done"}},
		{"status": {"completed,queued"}},
		{"status": {"waiting,finished"}},
		{"limit": {"0"}},
		{"limit": {"101"}},
		{"limit": {"ten"}},
		{"configuration": {"nope"}},
		{"tool": {"send mail"}},
		{"tool": {"send_mail"}, "status": {"finished"}},
		{"cursor": {"not-a-cursor"}},
		{"cursor": {*first.NextCursor}, "status": {"finished"}},
		{"sort": {"newest"}},
		{"limit": {"1", "2"}},
	} {
		res := w.do(request{method: http.MethodGet, path: "/api/v1/runs?" + q.Encode(), token: w.tokens["read"]})
		wantError(t, res, http.StatusBadRequest, "invalid_request")
	}
	wantError(t, w.do(request{method: http.MethodGet, path: "/api/v1/runs", token: w.tokens[runtime.ScopeRun]}), http.StatusForbidden, "insufficient_scope")
}

// order lists the uuids of the runs matching where (SQL after WHERE), for the expected orders.
func (w *world) order(where string) []string {
	w.t.Helper()
	rows, err := w.sql.QueryContext(w.ctx, `SELECT uuid FROM tx_nrllm_agentrun WHERE `+where)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			w.t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}
