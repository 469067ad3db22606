package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// TestInputSubmitInvalidAnswersTheRunPage: a rejected submission is answered (422) with the
// run page itself, the form in its error state: the summary naming the configuration by its
// name, the pending call's arguments, Cancel and the timeline, beside the error summary and
// every value as typed.
func TestInputSubmitInvalidAnswersTheRunPage(t *testing.T) {
	t.Parallel()
	rec := &recordingTool{name: "ask_details", schema: detailsSchema}
	cfg := inputConfiguration("details", "ask_details", modelArgs)
	cfg.Name = "Refund details"
	app := newTestApp(t, appOptions{tools: []tool.Tool{rec}, configurations: []runtime.Configuration{cfg}})
	v := app.startRun(runtime.RoleReviewer, "details")
	c := app.login(runtime.RoleReviewer)
	page := c.get("/runs/" + v.Run.UUID).doc(t)

	res := c.postForm("/runs/"+v.Run.UUID+"/input", submission(c, v, "key-rejected-1", url.Values{
		"input/amount": {"twelve"}, "input/method": {"card"}, "input/note": {"Zoë wrote this"},
	}))
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422; body %.300s", res.status, res.body)
	}
	doc := res.doc(t)
	if got, want := doc.Find("title").Text(), page.Find("title").Text(); got != want {
		t.Errorf("title %q, want the run page's %q", got, want)
	}
	for sel, want := range map[string]string{
		`[data-testid="summary-configuration"]`: "Refund details",
		`[data-testid="run-uuid"]`:              v.Run.UUID,
		`[data-testid="summary-owner"]`:         testUsers[runtime.RoleReviewer],
		`[data-testid="cancel-link"]`:           "Cancel run…",
	} {
		if got := strings.TrimSpace(doc.Find(sel).First().Text()); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if n, want := doc.Find(`[data-testid="timeline-row"]`).Length(), page.Find(`[data-testid="timeline-row"]`).Length(); n == 0 || n != want {
		t.Errorf("422 page has %d timeline rows, the run page %d", n, want)
	}
	if args := doc.Find(`[data-testid="run-pending"] [data-testid="call-arguments"]`).Text(); !strings.Contains(args, "A-1") {
		t.Errorf("the pending call's arguments are missing: %q", args)
	}
	form := doc.Find(`[data-testid="run-pending"] [data-testid="input-form"]`)
	if form.Length() != 1 || doc.Find(`[data-testid="run-pending"] #`+views.InputErrorsID(v.Run.UUID)).Length() != 1 {
		t.Fatalf("the run page's pending section lacks the form (%d) or its error summary", form.Length())
	}
	if got := strings.TrimSpace(doc.Find(`[id="` + views.FieldID(v.Run.UUID, "/amount") + `-error"]`).Text()); !strings.Contains(got, "Enter a number.") {
		t.Errorf("amount's message %q", got)
	}
	for name, want := range map[string]string{"input/amount": "twelve", "input/note": "Zoë wrote this"} {
		if got := form.Find(`[name="`+name+`"]`).AttrOr("value", ""); got != want {
			t.Errorf("%s kept as %q, want %q", name, got, want)
		}
	}
	if got := form.Find(`select[name="input/method"] option[selected]`).AttrOr("value", ""); got != "card" {
		t.Errorf("method kept as %q, want card", got)
	}
	if got := form.Find(`input[name="`+views.FormFieldIdempotencyKey+`"]`).AttrOr("value", ""); got != "key-rejected-1" {
		t.Errorf("idempotency key %q, want the posted one", got)
	}
	if doc.Find(`[data-testid="input-page"]`).Length() != 0 {
		t.Error("the 422 answer is still the separate input page")
	}
}

// countingStore counts the runtime's reads of runs (by uuid, with a decision's catalog, and
// by uid).
type countingStore struct {
	runtime.Store
	runReads atomic.Int64
}

func (s *countingStore) FindByUUID(ctx context.Context, uuid string) (runtime.Run, error) {
	s.runReads.Add(1)
	return s.Store.FindByUUID(ctx, uuid)
}

func (s *countingStore) FindForDecision(ctx context.Context, uuid, known string) (runtime.Run, runtime.DecisionRead, error) {
	s.runReads.Add(1)
	return s.Store.FindForDecision(ctx, uuid, known)
}

func (s *countingStore) FindByUID(ctx context.Context, uid int64) (runtime.Run, error) {
	s.runReads.Add(1)
	return s.Store.FindByUID(ctx, uid)
}

// countingCompiler counts the runtime's schema compilations (cache hits included).
type countingCompiler struct {
	cache    *schema.Cache
	compiles atomic.Int64
}

func (c *countingCompiler) Compile(raw json.RawMessage) (*schema.Schema, error) {
	c.compiles.Add(1)
	return c.cache.Compile(raw)
}

// TestRejectedInputReadsAndCompilesOnce: a rejected submission through the real router reads
// the run once and compiles its schema once (the submission's own read and compile): the 422
// page is rendered from the runtime's error (its View), and the page's timeline is read
// without reading the run again.
func TestRejectedInputReadsAndCompilesOnce(t *testing.T) {
	t.Parallel()
	rec := &recordingTool{name: "ask_details", schema: detailsSchema}
	store := &countingStore{}
	compiler := &countingCompiler{cache: schema.NewCache(8)}
	app := newTestApp(t, appOptions{tools: []tool.Tool{rec}, configurations: []runtime.Configuration{inputConfiguration("details", "ask_details", modelArgs)},
		runtimeStore: func(s runtime.Store) runtime.Store { store.Store = s; return store }, schemas: compiler})
	v := app.startRun(runtime.RoleReviewer, "details")
	c := app.login(runtime.RoleReviewer)
	form := submission(c, v, "key-counted", url.Values{"input/amount": {"twelve"}, "input/method": {"card"}})
	store.runReads.Store(0)
	compiler.compiles.Store(0)

	res := c.postForm(inputPath(v), form)
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422; body %.300s", res.status, res.body)
	}
	if got := res.doc(t).Find(`[data-testid="run-pending"] [data-testid="input-form"] [name="input/amount"]`).AttrOr("value", ""); got != "twelve" {
		t.Fatalf("the 422 page's form holds amount %q, want the posted value", got)
	}
	if n := store.runReads.Load(); n != 1 {
		t.Errorf("the rejected submission read the run %d times, want 1", n)
	}
	if n := compiler.compiles.Load(); n != 1 {
		t.Errorf("the rejected submission compiled the schema %d times, want 1", n)
	}
}
