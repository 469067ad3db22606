package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestCommentsOnTheRunPage: support comments on a waiting run from its page (303 with a flash);
// the timeline shows "Comment by sam", whom it mentions and the text with its line break to
// everyone who reads the run; a refused comment (a mention of nobody, too long) is the run page
// with 422, the text as typed in the form and the reason under it, and stores nothing; once the
// run no longer waits a comment is refused with the text kept and no submit button; a run the
// viewer may not read is 404.
func TestCommentsOnTheRunPage(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "mail")
	sam, rita := app.login(runtime.RoleSupport), app.login(runtime.RoleReviewer)

	page := sam.get(views.RunPath(run)).doc(t)
	form := page.Find(`[data-testid="comment-form"]`)
	if form.AttrOr("action", "") != views.CommentsPath(run) || form.Find(`textarea[name="comment"]`).Length() != 1 || form.Find(`input[name="idempotency_key"]`).AttrOr("value", "") == "" {
		t.Fatalf("support's run page has no comment form: %q", form.Text())
	}
	text := "Customer called back.\n@rita: the second address is right."
	res := sam.postForm(views.CommentsPath(run), url.Values{"_csrf": {sam.token()}, "comment": {text}, "idempotency_key": {"form-1"}})
	wantSeeOtherToRun(t, "comment", res, run)
	wantFlash(t, sam, msgCommented)
	again := sam.postForm(views.CommentsPath(run), url.Values{"_csrf": {sam.token()}, "comment": {text}, "idempotency_key": {"form-1"}})
	wantSeeOtherToRun(t, "repeated comment", again, run)

	row := rita.get(views.RunPath(run)).doc(t).Find(`[data-testid="timeline-row"][data-kind="comment"]`)
	if row.Length() != 1 {
		t.Fatalf("%d comment rows on the timeline, want 1 (a repeated post stores one)", row.Length())
	}
	if got := row.Find(`.timeline__summary`).Text(); !strings.Contains(got, "Comment by sam") {
		t.Errorf("comment row summary %q", got)
	}
	if got := row.Find(`[data-testid="timeline-text"]`).Text(); got != text {
		t.Errorf("comment text %q, want %q", got, text)
	}
	if got := row.Find(`.timeline__details`).Text(); !strings.Contains(got, "mentions rita") {
		t.Errorf("comment details %q, want the mention", got)
	}

	for name, tc := range map[string]struct{ text, says string }{
		"nobody":   {"ask @nobody-here about it", "@nobody-here names nobody"},
		"too long": {strings.Repeat("x", runtime.MaxCommentCharacters+1), "at most 2000 characters"},
		"empty":    {"   ", "Write a comment first."},
	} {
		res := rita.postForm(views.CommentsPath(run), url.Values{"_csrf": {rita.token()}, "comment": {tc.text}})
		if res.status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d, want 422", name, res.status)
		}
		doc := res.doc(t)
		if got := doc.Find(`[data-testid="comment-text"]`).Text(); got != tc.text {
			t.Errorf("%s: the form keeps %q, want the text as typed", name, got)
		}
		if got := doc.Find(`[data-testid="error-comment-text-error"]`).Text(); !strings.Contains(got, tc.says) {
			t.Errorf("%s: error %q, want it to say %q", name, got, tc.says)
		}
		if doc.Find(`[data-testid="comment-text"]`).AttrOr("aria-invalid", "") != "true" {
			t.Errorf("%s: the field is not marked invalid", name)
		}
	}
	var n int
	if err := app.pool.QueryRow(`SELECT COUNT(*) FROM tx_runsdesk_comment`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d comments stored, %v; want 1", n, err)
	}

	if _, err := app.rt.Cancel(context.Background(), app.deskActor(runtime.RoleAdmin), run); err != nil {
		t.Fatal(err)
	}
	if rita.get(views.RunPath(run)).doc(t).Find(`[data-testid="comment-form"]`).Length() != 0 {
		t.Error("a cancelled run's page offers the comment form")
	}
	res = rita.postForm(views.CommentsPath(run), url.Values{"_csrf": {rita.token()}, "comment": {"one more thing"}})
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("comment on a cancelled run: %d, want 422", res.status)
	}
	doc := res.doc(t)
	if doc.Find(`[data-testid="comment-text"]`).Text() != "one more thing" || doc.Find(`[data-testid="comment-submit"]`).Length() != 0 ||
		!strings.Contains(doc.Find(`[data-testid="error-comment-text-error"]`).Text(), "while a run waits") {
		t.Errorf("the refused comment on a cancelled run: %q", doc.Find(`[data-testid="run-comments"]`).Text())
	}
	if res := rita.postForm(views.CommentsPath("00000000-0000-0000-0000-000000000000"), url.Values{"_csrf": {rita.token()}, "comment": {"x"}}); res.status != http.StatusNotFound {
		t.Errorf("comment on no run: %d, want 404", res.status)
	}
}
