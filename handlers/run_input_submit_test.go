package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// detailsSchema is the input the test tool asks for.
const detailsSchema = `{
  "type": "object",
  "required": ["amount", "method"],
  "properties": {
    "amount": {"type": "number", "title": "Amount", "minimum": 1, "maximum": 100},
    "method": {"type": "string", "title": "Method", "enum": ["card", "bank"]},
    "note":   {"type": "string", "title": "Note", "minLength": 3},
    "urgent": {"type": "boolean", "title": "Urgent"},
    "tags":   {"type": "array", "title": "Tags", "items": {"type": "string"}, "maxItems": 2}
  }
}`

// modelArgs are the arguments the scripted model calls the tool with: order_id is the
// model's own; amount and note are declared keys, so the person's values replace them.
const modelArgs = `{"order_id": "A-1", "amount": 999, "note": "model guess"}`

// inputWorld is a test app whose configuration "details" pauses for detailsSchema through
// tool, and "admin-details" through an admin-only tool with the same schema.
type inputWorld struct {
	app  *testApp
	tool *recordingTool
}

func newInputWorld(t *testing.T) *inputWorld {
	t.Helper()
	rec := &recordingTool{name: "ask_details", schema: detailsSchema}
	adminOnly := &recordingTool{name: "ask_admin", schema: detailsSchema, adminOnly: true}
	app := newTestApp(t, appOptions{tools: []tool.Tool{rec, adminOnly},
		configurations: []runtime.Configuration{
			inputConfiguration("details", "ask_details", modelArgs),
			inputConfiguration("admin-details", "ask_admin", modelArgs),
		}})
	return &inputWorld{app: app, tool: rec}
}

// waitingRun starts a run of configuration (as the reviewer) that waits for input.
func (w *inputWorld) waitingRun(configuration string) runtime.RunView {
	w.app.t.Helper()
	v := w.app.startRun(runtime.RoleReviewer, configuration)
	if v.Run.Status != runtime.StatusWaitingInput || v.Pause == nil {
		w.app.t.Fatalf("run %s: status %s, want waiting_for_input", v.Run.UUID, v.Run.Status)
	}
	return v
}

// submission is a posted input form for v with the given fields ("input/…" names).
func submission(c *client, v runtime.RunView, key string, fields url.Values) url.Values {
	form := url.Values{"_csrf": {c.token()}, views.FormFieldDigest: {v.Pause.Digest}, views.FormFieldIdempotencyKey: {key}}
	for k, vs := range fields {
		form[k] = vs
	}
	return form
}

func inputPath(v runtime.RunView) string { return "/runs/" + v.Run.UUID + "/input" }

// flashes returns the flash texts the client's next page shows.
func flashes(c *client) []string {
	c.t.Helper()
	var out []string
	c.get("/account/password").doc(c.t).Find(`[data-testid="flash"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Text()))
	})
	return out
}

func wantSeeOtherToRun(t *testing.T, what string, res response, uuid string) {
	t.Helper()
	if loc := res.header.Get("Location"); res.status != http.StatusSeeOther || loc != "/runs/"+uuid {
		t.Fatalf("%s: %d Location %q, want 303 to /runs/%s; body %.300s", what, res.status, loc, uuid, res.body)
	}
}

func wantFlash(t *testing.T, c *client, want string) {
	t.Helper()
	if got := flashes(c); !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
		t.Errorf("flashes %q, want one saying %q", got, want)
	}
}

func wantStatus(t *testing.T, app *testApp, uuid string, want runtime.Status) runtime.RunView {
	t.Helper()
	v := app.view(uuid)
	if v.Run.Status != want {
		t.Fatalf("run status %s, want %s", v.Run.Status, want)
	}
	return v
}

func TestInputSubmitInvalidRerendersWithErrorsAndValuesAsTyped(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	c := w.app.login(runtime.RoleReviewer)
	note := "  ü\tnïcode 🎉  spaced  "
	tags := "\n  first\n\nsecond  \r\nthird\n"
	form := submission(c, v, "key-invalid-1", url.Values{
		"input/amount": {" 12,5 kg"},
		"input/method": {""},
		"input/note":   {note},
		"input/urgent": {"true"},
		"input/tags":   {tags},
		"input/extra":  {"not declared"},
	})
	res := c.postForm(inputPath(v), form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422; body %.500s", res.status, res.body)
	}
	doc := res.doc(t)
	summary := doc.Find("#" + views.InputErrorsID(v.Run.UUID))
	if summary.Length() != 1 || summary.AttrOr("tabindex", "") != "-1" || summary.Find("h2").Text() == "" ||
		!strings.Contains(summary.Find("h2").Text(), views.InputErrorsTitle) {
		t.Fatalf("error summary missing or not focusable: %q", summary.Text())
	}
	wantErrors := map[string]string{"/amount": "Enter a number.", "/method": "This field is required.", "/tags": ""}
	var links []string
	summary.Find("a").Each(func(_ int, a *goquery.Selection) { links = append(links, a.AttrOr("href", "")) })
	for ptr, msg := range wantErrors {
		id := views.FieldID(v.Run.UUID, ptr)
		if !slices.Contains(links, "#"+id) {
			t.Errorf("summary links %q lack #%s", links, id)
		}
		if doc.Find(`[id="`+id+`"]`).Length() != 1 {
			t.Errorf("no element with id %s to link to", id)
		}
		got := strings.TrimSpace(doc.Find(`[id="` + id + `-error"]`).Text())
		if got == "" || (msg != "" && !strings.Contains(got, msg)) {
			t.Errorf("error under %s: %q, want %q", ptr, got, msg)
		}
	}
	if n := summary.Find("li").Length(); n != len(wantErrors) {
		t.Errorf("summary has %d entries, want %d: %q", n, len(wantErrors), summary.Text())
	}
	if got := doc.Find(`[id="`+views.FieldID(v.Run.UUID, "/amount")+`"]`).AttrOr("aria-invalid", ""); got != "true" {
		t.Errorf("amount aria-invalid %q", got)
	}
	for name, want := range map[string]string{"input/amount": " 12,5 kg", "input/note": note} {
		if got, ok := doc.Find(`input[name="` + name + `"]`).Attr("value"); !ok || got != want {
			t.Errorf("%s kept as %q, want %q", name, got, want)
		}
	}
	if got := doc.Find(`textarea[name="input/tags"]`).Text(); got != strings.ReplaceAll(tags, "\r\n", "\n") {
		t.Errorf("tags kept as %q, want %q", got, tags)
	}
	if _, checked := doc.Find(`input[name="input/urgent"]`).Attr("checked"); !checked {
		t.Error("urgent checkbox lost its tick")
	}
	if got := doc.Find(`select[name="input/method"] option[selected]`).Length(); got != 0 {
		t.Errorf("method has %d selected options, want none (nothing was chosen)", got)
	}
	hidden := func(name string) string { return doc.Find(`input[type="hidden"][name="`+name+`"]`).AttrOr("value", "") }
	if hidden(views.FormFieldIdempotencyKey) != "key-invalid-1" || hidden(views.FormFieldDigest) != v.Pause.Digest || hidden("_csrf") == "" {
		t.Errorf("hidden fields key %q digest %q csrf %q: want the posted key and the digest", hidden(views.FormFieldIdempotencyKey), hidden(views.FormFieldDigest), hidden("_csrf"))
	}
	if strings.Contains(res.body, "not declared") {
		t.Error("an undeclared posted field was echoed")
	}
	wantStatus(t, w.app, v.Run.UUID, runtime.StatusWaitingInput)
	if got := w.tool.received(); len(got) != 0 {
		t.Errorf("the tool ran %d times after an invalid submission", len(got))
	}
	if strings.Contains(w.app.logs.String(), "nïcode") {
		t.Error("a submitted value reached the log")
	}
	if acts := w.app.auditActions(); !slices.Contains(acts, actionInputSubmit+"/"+outcomeFailure) {
		t.Errorf("audit %v, want an input_submit failure", acts)
	}
}

func TestInputSubmitSuccessContinuesTheRunAndReplays(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	c := w.app.login(runtime.RoleReviewer)
	form := submission(c, v, "key-ok-1", url.Values{
		"input/amount": {"12.50"},
		"input/method": {"bank"},
		"input/urgent": {"true"},
		"input/tags":   {"a\n b \n"},
		"input/extra":  {"dropped"},
	})
	wantSeeOtherToRun(t, "submit", c.postForm(inputPath(v), form), v.Run.UUID)
	wantFlash(t, c, "Input submitted; the run continues.")
	after := wantStatus(t, w.app, v.Run.UUID, runtime.StatusCompleted)
	got := w.tool.received()
	if len(got) != 1 {
		t.Fatalf("tool ran %d times, want once", len(got))
	}
	mustJSONEqual(t, "tool arguments", got[0], `{"order_id":"A-1","amount":12.50,"method":"bank","urgent":true,"tags":["a","b"]}`)
	if kinds := w.app.eventKinds(v.Run.UUID); !slices.Contains(kinds, runtime.EventInput) {
		t.Errorf("events %v lack an input event", kinds)
	}

	wantSeeOtherToRun(t, "replay", c.postForm(inputPath(v), form), v.Run.UUID)
	wantFlash(t, c, "Input submitted; the run continues.")
	if n := len(w.tool.received()); n != 1 {
		t.Errorf("a replay ran the tool again: %d calls", n)
	}
	if again := w.app.view(v.Run.UUID); again.Run.Tstamp != after.Run.Tstamp || again.Run.Status != after.Run.Status {
		t.Errorf("a replay changed the run: %+v", again.Run)
	}

	form.Set(views.FormFieldIdempotencyKey, "key-ok-2")
	wantDecidedFirst(t, "second submission", c.postForm(inputPath(v), form), "This run was already decided: Input submitted by you at <time>. Your decision was not used.")
	acts := w.app.auditActions()
	if n := countOf(acts, actionInputSubmit+"/"+outcomeSuccess); n != 2 {
		t.Errorf("audit %v: %d input_submit successes, want 2 (submit and replay)", acts, n)
	}
	if strings.Contains(w.app.logs.String(), "12.50") {
		t.Error("a submitted value reached the log")
	}
}

func TestInputSubmitRefusalsLeaveTheRunUnchanged(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	valid := url.Values{"input/amount": {"5"}, "input/method": {"card"}}
	reviewer := w.app.login(runtime.RoleReviewer)
	for _, tc := range []struct {
		name, digest, flash string
		fields              url.Values
	}{
		{"stale digest", "sha256:0000", "The form changed since you opened it", valid},
		{"missing digest", "", "The form changed since you opened it", valid},
		{"stale and invalid", "sha256:0000", "The form changed since you opened it", url.Values{"input/amount": {"x"}}},
	} {
		form := submission(reviewer, v, "key-"+strings.ReplaceAll(tc.name, " ", "-"), tc.fields)
		form.Set(views.FormFieldDigest, tc.digest)
		wantSeeOtherToRun(t, tc.name, reviewer.postForm(inputPath(v), form), v.Run.UUID)
		wantFlash(t, reviewer, tc.flash)
	}

	support := w.app.login(runtime.RoleSupport)
	res := support.postForm(inputPath(v), submission(support, v, "key-support", valid))
	if res.status != http.StatusForbidden {
		t.Errorf("support: %d, want 403", res.status)
	}
	res = reviewer.postForm("/runs/0a6e2b58-1234-4abc-9def-000000000000/input", submission(reviewer, v, "key-404", valid))
	if res.status != http.StatusNotFound {
		t.Errorf("unknown run: %d, want 404", res.status)
	}
	res = reviewer.postForm(inputPath(v), submission(reviewer, v, strings.Repeat("k", 65), valid))
	if res.status != http.StatusBadRequest {
		t.Errorf("over-long idempotency key: %d, want 400", res.status)
	}
	many := submission(reviewer, v, "key-many", valid)
	for range maxInputValues {
		many.Add("input/x", "1")
	}
	if res := reviewer.postForm(inputPath(v), many); res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("%d values: %d, want 413", maxInputValues, res.status)
	}

	adminRun := w.waitingRun("admin-details")
	wantSeeOtherToRun(t, "admin-only tool", reviewer.postForm(inputPath(adminRun), submission(reviewer, adminRun, "key-admin", valid)), adminRun.Run.UUID)
	wantFlash(t, reviewer, "You may not submit input to this run")
	wantStatus(t, w.app, adminRun.Run.UUID, runtime.StatusWaitingInput)

	wantStatus(t, w.app, v.Run.UUID, runtime.StatusWaitingInput)
	if got := w.tool.received(); len(got) != 0 {
		t.Errorf("the tool ran after refused submissions: %s", got)
	}
	if kinds := w.app.eventKinds(v.Run.UUID); slices.Contains(kinds, runtime.EventInput) {
		t.Errorf("a refused submission recorded an input event: %v", kinds)
	}
	acts := w.app.auditActions()
	for _, want := range []string{actionInputSubmit + "/" + outcomeFailure, actionInputSubmit + "/" + outcomeDenied, actionAccessDenied + "/" + outcomeDenied} {
		if !slices.Contains(acts, want) {
			t.Errorf("audit %v lacks %s", acts, want)
		}
	}
}

// xssSchema holds markup in every string the form shows: titles, descriptions, enum values
// and defaults.
const xssSchema = `{
  "type": "object",
  "title": "<script>alert(1)</script>",
  "required": ["choice"],
  "properties": {
    "choice": {"type": "string", "title": "<img src=x onerror=alert(1)>", "description": "<script>alert(2)</script>",
               "enum": ["<script>alert(3)</script>", "<img src=x onerror=alert(4)>"], "default": "<img src=x onerror=alert(4)>"},
    "text":   {"type": "string", "title": "<script>alert(5)</script>", "description": "<img src=x onerror=alert(6)>",
               "default": "\"><script>alert(7)</script>"},
    "list":   {"type": "array", "title": "<b>list</b>", "items": {"type": "string", "enum": ["<img src=x onerror=alert(8)>", "ok"]}},
    "nested": {"type": "object", "title": "<img src=x onerror=alert(9)>", "properties": {
               "deep": {"type": "string", "title": "</legend><script>alert(10)</script>", "default": "</textarea><img src=x onerror=alert(11)>", "maxLength": 500}}}
  }
}`

func TestInputFormRendersSchemaMarkupInert(t *testing.T) {
	t.Parallel()
	rec := &recordingTool{name: "ask_xss", schema: xssSchema}
	app := newTestApp(t, appOptions{tools: []tool.Tool{rec},
		configurations: []runtime.Configuration{inputConfiguration("xss", "ask_xss", `{"note":"<script>alert(12)</script>"}`)}})
	w := &inputWorld{app: app, tool: rec}
	v := w.waitingRun("xss")
	c := app.login(runtime.RoleAdmin)
	res := c.postForm(inputPath(v), submission(c, v, "key-xss", url.Values{
		"input/choice":      {"<script>alert(13)</script>"},
		"input/text":        {`"><img src=x onerror=alert(14)>`},
		"input/nested/deep": {"</textarea><script>alert(15)</script>"},
		"input/list":        {"<img src=x onerror=alert(8)>", "<svg onload=alert(16)>"},
	}))
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422 (an option outside the enum); body %.300s", res.status, res.body)
	}
	doc := res.doc(t)
	wantInert(t, doc, res.body)
	if doc.Find(`[data-testid="input-form"] option`).Length() != 3 {
		t.Errorf("want the empty choice plus both enum options as text; got %d options", doc.Find(`option`).Length())
	}
	if got := doc.Find(`textarea[name="input/nested/deep"]`).Text(); got != "</textarea><script>alert(15)</script>" {
		t.Errorf("textarea value %q, want it kept as typed", got)
	}
}

// wantInert fails if the page holds any element a schema or a value could have injected: an
// img, an svg, or a script other than the layout's own.
func wantInert(t *testing.T, doc *goquery.Document, body string) {
	t.Helper()
	if n := doc.Find("img, svg, iframe, object").Length(); n != 0 {
		t.Errorf("%d injected elements rendered", n)
	}
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if src, ok := s.Attr("src"); !ok || !strings.HasPrefix(src, "/static/") || strings.TrimSpace(s.Text()) != "" {
			t.Errorf("unexpected script element: src %q text %q", src, s.Text())
		}
	})
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("element %s has event handler attribute %s", goquery.NodeName(s), a.Key)
			}
		}
	})
	if !strings.Contains(body, "&lt;script&gt;") {
		t.Error("the schema's markup is not shown as text")
	}
}

func countOf(list []string, want string) int {
	n := 0
	for _, s := range list {
		if s == want {
			n++
		}
	}
	return n
}

func TestInputSubmitToAFormlessSchemaChangesNothing(t *testing.T) {
	t.Parallel()
	rec := &recordingTool{name: "ask_nothing", schema: `{"type":"object","properties":{"never":false}}`}
	app := newTestApp(t, appOptions{tools: []tool.Tool{rec},
		configurations: []runtime.Configuration{inputConfiguration("formless", "ask_nothing", `{}`)}})
	w := &inputWorld{app: app, tool: rec}
	v := w.waitingRun("formless")
	c := app.login(runtime.RoleAdmin)
	if c.get("/runs").doc(t).Find(`[data-run="`+v.Run.UUID+`"] [data-testid="inbox-row-unreadable"]`).Length() != 1 {
		t.Error("the inbox row of a formless schema is not marked unreadable")
	}
	if got := c.get("/runs/" + v.Run.UUID).doc(t).Find(`[data-testid="run-pending"]`).Text(); !strings.Contains(got, views.InputUnreadableText) {
		t.Errorf("run page %q, want the unreadable text instead of an empty form", got)
	}
	wantSeeOtherToRun(t, "submit", c.postForm(inputPath(v), submission(c, v, "key-formless", url.Values{"input/never": {"x"}})), v.Run.UUID)
	wantFlash(t, c, views.InputUnreadableText)
	wantStatus(t, app, v.Run.UUID, runtime.StatusWaitingInput)
	if kinds := app.eventKinds(v.Run.UUID); slices.Contains(kinds, runtime.EventInput) || len(rec.received()) != 0 {
		t.Errorf("a formless submission reached the runtime: events %v, calls %d", kinds, len(rec.received()))
	}
}

// countingRuntime counts the run reads (Get) the handlers ask for and keeps the submissions
// they hand over.
type countingRuntime struct {
	Runtime
	mu   sync.Mutex
	gets int
	subs []runtime.InputSubmission
}

func (r *countingRuntime) Get(ctx context.Context, actor runtime.Actor, uuid string) (runtime.RunView, error) {
	r.mu.Lock()
	r.gets++
	r.mu.Unlock()
	return r.Runtime.Get(ctx, actor, uuid)
}

func (r *countingRuntime) SubmitInput(ctx context.Context, actor runtime.Actor, uuid string, s runtime.InputSubmission) (runtime.Outcome, error) {
	r.mu.Lock()
	r.subs = append(r.subs, s)
	r.mu.Unlock()
	return r.Runtime.SubmitInput(ctx, actor, uuid, s)
}

// taken returns the Get calls and submissions since the last call, and forgets them.
func (r *countingRuntime) taken() (int, []runtime.InputSubmission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gets, subs := r.gets, r.subs
	r.gets, r.subs = 0, nil
	return gets, subs
}

// TestInputSubmitHandsTheFormToTheRuntime: a submission reads the run once, in the runtime:
// the handler hands over the posted form as typed and never reads the run itself, not even to
// re-render an invalid form (it renders from the runtime's error).
func TestInputSubmitHandsTheFormToTheRuntime(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	counter := &countingRuntime{Runtime: w.app.h.rt}
	w.app.h.rt = counter
	v := w.waitingRun("details")
	c := w.app.login(runtime.RoleReviewer)
	counter.taken()

	res := c.postForm(inputPath(v), submission(c, v, "key-count-1", url.Values{"input/amount": {"x"}, "input/method": {"card"}}))
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid: status %d, want 422", res.status)
	}
	if gets, subs := counter.taken(); gets != 0 || len(subs) != 1 || subs[0].Form.Get("input/amount") != "x" || subs[0].Data != nil {
		t.Fatalf("invalid: %d reads, submissions %+v; want no read (the 422 renders from the runtime's error) and the form as posted", gets, subs)
	}

	wantSeeOtherToRun(t, "submit", c.postForm(inputPath(v), submission(c, v, "key-count-2", url.Values{"input/amount": {"12.50"}, "input/method": {"card"}})), v.Run.UUID)
	gets, subs := counter.taken()
	if gets != 0 || len(subs) != 1 || subs[0].Form.Get("input/amount") != "12.50" || subs[0].TurnDigest != v.Pause.Digest || subs[0].IdempotencyKey != "key-count-2" {
		t.Fatalf("success: %d reads, submissions %+v; want no read and the form, digest and key as posted", gets, subs)
	}
}
