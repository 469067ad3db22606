package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// linesSchema asks for order lines (an array of objects) and a comment.
const linesSchema = `{"type":"object","required":["lines"],"properties":{
	"lines":{"type":"array","title":"Order lines","minItems":1,"items":{"type":"object","title":"Line","required":["sku"],
		"properties":{"sku":{"type":"string","title":"SKU"},"qty":{"type":"integer","title":"Quantity","minimum":1}}}},
	"comment":{"type":"string","title":"Comment"}}}`

func newLinesWorld(t *testing.T) (*testApp, *recordingTool) {
	t.Helper()
	rec := &recordingTool{name: "ask_lines", schema: linesSchema}
	app := newTestApp(t, appOptions{tools: []tool.Tool{rec},
		configurations: []runtime.Configuration{inputConfiguration("lines", "ask_lines", `{}`)}})
	return app, rec
}

// rowsOf returns, per row the page shows, its SKU and quantity as "sku/qty".
func rowsOf(doc *goquery.Document, uuid string) []string {
	var out []string
	doc.Find(`fieldset[id="` + views.FieldID(uuid, "/lines") + `"] fieldset[data-testid="row"]`).Each(func(i int, row *goquery.Selection) {
		out = append(out, row.Find(`[name$="/sku"]`).AttrOr("value", "?")+"/"+row.Find(`[name$="/qty"]`).AttrOr("value", "?"))
	})
	return out
}

func TestInputRowsAddAndRemoveRerenderTheFormWithoutDeciding(t *testing.T) {
	t.Parallel()
	app, rec := newLinesWorld(t)
	v := app.startRun(runtime.RoleReviewer, "lines")
	c := app.login(runtime.RoleReviewer)
	uuid := v.Run.UUID

	doc := c.get(views.RunPath(uuid)).doc(t)
	if got := rowsOf(doc, uuid); !slices.Equal(got, []string{"/"}) {
		t.Fatalf("a fresh form shows rows %q, want the one empty row minItems asks for", got)
	}
	before := len(app.auditActions())

	form := submission(c, v, "key-rows", url.Values{"input/comment": {"  keep me  "}, "input/lines": {"1"},
		"input/lines/0/sku": {"A-1"}, "input/lines/0/qty": {"x"}, views.FormFieldRows: {"add /lines"}})
	res := c.postForm(inputPath(v), form)
	if res.status != http.StatusOK {
		t.Fatalf("Add another: %d, want 200 with the form; body %.300s", res.status, res.body)
	}
	doc = res.doc(t)
	if got := rowsOf(doc, uuid); !slices.Equal(got, []string{"A-1/x", "/"}) {
		t.Errorf("after Add another: rows %q, want the typed row and one new empty row", got)
	}
	if got := doc.Find(`[name="input/comment"]`).AttrOr("value", ""); got != "  keep me  " {
		t.Errorf("comment kept as %q", got)
	}
	if doc.Find(".error-summary").Length() != 0 || doc.Find(`[aria-invalid="true"]`).Length() != 0 {
		t.Error("adding a row shows validation errors")
	}
	if got := doc.Find(`input[type="hidden"][name="`+views.FormFieldIdempotencyKey+`"]`).AttrOr("value", ""); got != "key-rows" {
		t.Errorf("idempotency key %q, want the posted one kept", got)
	}

	form = submission(c, v, "key-rows", url.Values{"input/lines": {"3"}, "input/lines/0/sku": {"A-1"}, "input/lines/1/sku": {"B-2"},
		"input/lines/1/qty": {"2"}, "input/lines/2/sku": {"C-3"}, views.FormFieldRows: {"remove /lines/0"}})
	res = c.postForm(inputPath(v), form)
	if res.status != http.StatusOK {
		t.Fatalf("Remove: %d, want 200", res.status)
	}
	if got := rowsOf(res.doc(t), uuid); !slices.Equal(got, []string{"B-2/2", "C-3/"}) {
		t.Errorf("after removing row 1: rows %q, want the later rows moved up", got)
	}

	wantStatus(t, app, uuid, runtime.StatusWaitingInput)
	if n := len(rec.received()); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
	if acts := app.auditActions()[before:]; slices.Contains(acts, actionInputSubmit+"/"+outcomeSuccess) || slices.Contains(acts, actionInputSubmit+"/"+outcomeFailure) {
		t.Errorf("editing rows was audited as a submission: %v", acts)
	}

	for _, action := range []string{"add /comment", "remove /lines/7", "explode"} {
		form = submission(c, v, "key-rows", url.Values{"input/lines": {"1"}, views.FormFieldRows: {action}})
		if res := c.postForm(inputPath(v), form); res.status != http.StatusBadRequest {
			t.Errorf("rows action %q: %d, want 400", action, res.status)
		}
	}
	form = submission(c, v, "key-rows", url.Values{"input/lines": {"1"}, views.FormFieldRows: {"add /lines"}})
	form.Set(views.FormFieldDigest, "sha256:0000")
	wantSeeOtherToRun(t, "a rows action on a stale form", c.postForm(inputPath(v), form), uuid)
	wantFlash(t, c, "The form changed since you opened it")
}

func TestInputRowsErrorsLandOnTheRowsFieldsAndValidRowsReachTheTool(t *testing.T) {
	t.Parallel()
	app, rec := newLinesWorld(t)
	v := app.startRun(runtime.RoleReviewer, "lines")
	c := app.login(runtime.RoleReviewer)
	uuid := v.Run.UUID

	form := submission(c, v, "key-lines", url.Values{"input/lines": {"2"}, "input/lines/0/sku": {"A-1"},
		"input/lines/1/qty": {"0"}})
	res := c.postForm(inputPath(v), form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", res.status)
	}
	doc := res.doc(t)
	for ptr, want := range map[string]string{"/lines/1/sku": "This field is required.", "/lines/1/qty": "Must be 1 or more."} {
		if got := doc.Find(`[id="` + views.FieldID(uuid, ptr) + `-error"]`).Text(); !strings.Contains(got, want) {
			t.Errorf("error under %s: %q, want %q", ptr, got, want)
		}
	}
	if got := doc.Find(`[id="` + views.FieldID(uuid, "/lines/0/sku") + `-error"]`).Length(); got != 0 {
		t.Error("row 1, which is valid, shows an error")
	}
	if got := rowsOf(doc, uuid); !slices.Equal(got, []string{"A-1/", "/0"}) {
		t.Errorf("rows kept as %q", got)
	}

	form = submission(c, v, "key-lines", url.Values{"input/lines": {"2"}, "input/lines/0/sku": {"A-1"},
		"input/lines/1/sku": {"B-2"}, "input/lines/1/qty": {"3"}})
	wantSeeOtherToRun(t, "valid rows", c.postForm(inputPath(v), form), uuid)
	wantStatus(t, app, uuid, runtime.StatusCompleted)
	calls := rec.received()
	if len(calls) != 1 {
		t.Fatalf("the tool ran %d times, want once", len(calls))
	}
	mustJSONEqual(t, "tool arguments", calls[0], `{"lines":[{"sku":"A-1"},{"sku":"B-2","qty":3}]}`)
}
