package handlers

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestBrowserCommentWithAMention: in one browser sam (support) writes a comment mentioning a
// nobody and is told so with the text kept, then mentions rita and adds it; in another browser
// rita, on the same run page after a reload, reads it on the timeline with its line break and
// the mention, and the run still waits for her decision.
func TestBrowserCommentWithAMention(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "mail")
	sam, rita := newTab(t, app), newTab(t, app)
	sam.signIn(runtime.RoleSupport)
	rita.signIn(runtime.RoleReviewer)
	rita.open(views.RunPath(run))

	sam.open(views.RunPath(run))
	sam.setValue(`[data-testid="comment-text"]`, "@ritta please check the address")
	sam.do("post a mention of nobody", chromedp.Click(chromedp.CSS(`[data-testid="comment-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-comment-text-error"]`)))
	if got := sam.value(`[data-testid="comment-text"]`); got != "@ritta please check the address" {
		t.Fatalf("the refused comment's box holds %q", got)
	}
	if got := sam.text(`[data-testid="error-comment-text-error"]`); !strings.Contains(got, "@ritta names nobody") {
		t.Fatalf("the refusal says %q", got)
	}
	text := "The customer called back.\n@rita please check the second address."
	sam.setValue(`[data-testid="comment-text"]`, text)
	sam.do("add the comment", chromedp.Click(chromedp.CSS(`[data-testid="comment-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if got := sam.text(`[data-testid="flash"]`); !strings.Contains(got, msgCommented) {
		t.Fatalf("flash %q", got)
	}
	if got := sam.value(`[data-testid="comment-text"]`); got != "" {
		t.Errorf("the comment box still holds %q after the comment was added", got)
	}
	rita.waitFor("rita sees the comment", views.RunPath(run), func() bool {
		return rita.count(`[data-testid="timeline-row"][data-kind="comment"]`) == 1
	})
	if got := rita.text(`[data-testid="timeline-row"][data-kind="comment"] [data-testid="timeline-text"]`); got != text {
		t.Errorf("rita reads %q, want %q", got, text)
	}
	if got := rita.text(`[data-testid="timeline-row"][data-kind="comment"] .timeline__details`); !strings.Contains(got, "mentions rita") {
		t.Errorf("the comment's details %q, want the mention", got)
	}
	if rita.count(`[data-testid="approve"]`) != 1 {
		t.Error("the run no longer offers rita Approve after a comment")
	}
	rita.screenshot("comment-with-mention")
}
