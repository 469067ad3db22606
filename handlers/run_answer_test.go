package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// answerText is a final message with markup and line breaks: the page shows it as text.
const answerText = "Dear customer,\n<script>alert(1)</script> <b>refund</b> **issued**\n\nRegards"

// TestRunPageShowsTheAnswerFirst: a completed run's page shows its answer as its first
// section, above the summary and the timeline, as escaped text with its line breaks (no
// element made of the markup, no Markdown), with a copy button static/app.js reveals; admin,
// reviewer and support see it; a configuration with keep_output false says it keeps none;
// a waiting run has no answer section.
func TestRunPageShowsTheAnswerFirst(t *testing.T) {
	t.Parallel()
	private := deskConfiguration("private", "Private talk", false)
	private.NoOutput = true
	answer := deskConfiguration("answer", "Answering", false)
	answer.Provider.Script = []model.Turn{{Content: answerText}}
	app := newTestApp(t, appOptions{tools: []tool.Tool{deskTool{"lookup"}, deskMailTool{deskTool{"send_mail"}}},
		configurations: []runtime.Configuration{answer, private,
			deskConfiguration("mail", "Mail assistant", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", `{}`)}})}})
	done := app.pause(runtime.RoleReviewer, "answer")
	for _, role := range []runtime.Role{runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport} {
		res := app.login(role).get(views.RunPath(done))
		if res.status != http.StatusOK {
			t.Fatalf("%s: GET run page: %d", role, res.status)
		}
		doc := res.doc(t)
		sections := doc.Find("main section.run-section")
		if id := sections.First().AttrOr("data-testid", ""); id != "run-answer" {
			t.Fatalf("%s: first section is %q, want the answer", role, id)
		}
		text := doc.Find(`[data-testid="answer-text"]`)
		if got := text.Text(); got != answerText {
			t.Fatalf("%s: answer text %q, want %q", role, got, answerText)
		}
		if n := text.Children().Length(); n != 0 {
			t.Fatalf("%s: the answer made %d elements of its markup", role, n)
		}
		if !strings.Contains(res.body, "&lt;script&gt;alert(1)&lt;/script&gt;") || strings.Contains(res.body, "<script>alert(1)") {
			t.Fatalf("%s: the answer's markup is not escaped in the page", role)
		}
		copyButton := doc.Find(`button[data-testid="answer-copy"]`)
		if copyButton.AttrOr("data-copy", "") != text.AttrOr("id", "") || copyButton.AttrOr("type", "") != "button" || copyButton.AttrOr("hidden", "x") == "x" {
			t.Fatalf("%s: copy button %v: want a hidden plain button naming the answer", role, goquery.NodeName(copyButton))
		}
	}
	ada := app.login(runtime.RoleAdmin)
	hidden := app.pause(runtime.RoleReviewer, "private")
	if got := ada.get(views.RunPath(hidden)).doc(t).Find(`[data-testid="answer-withheld"]`).Text(); !strings.Contains(got, "keep_output: false") {
		t.Fatalf("keep_output false: withheld text %q", got)
	}
	waiting := app.pause(runtime.RoleReviewer, "mail")
	if n := ada.get(views.RunPath(waiting)).doc(t).Find(`[data-testid="run-answer"]`).Length(); n != 0 {
		t.Fatalf("a waiting run shows %d answer sections", n)
	}

	app.exec(`UPDATE tx_runsdesk_run_output SET output_text = 'rdseal1:k9:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'`)
	res := ada.get(views.RunPath(done))
	doc := res.doc(t)
	if res.status != http.StatusOK || doc.Find(`[data-testid="timeline-row"]`).Length() == 0 {
		t.Fatalf("an answer sealed under a missing key: %d; want the run page with its timeline", res.status)
	}
	if got := doc.Find(`[data-testid="answer-withheld"]`).Text(); !strings.Contains(got, `sealed with key "k9", which is missing from this desk's key set`) {
		t.Fatalf("an answer sealed under a missing key: withheld text %q, want the key named", got)
	}
}

// TestCopyButtonScript: static/app.js reveals and wires the [data-copy] buttons, and the
// page includes it as a file (no inline script; the CSP allows none).
func TestCopyButtonScript(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ada := app.login(runtime.RoleAdmin)
	page := ada.get(views.RunPath(app.pause(runtime.RoleReviewer, "plain")))
	doc := page.doc(t)
	if n := doc.Find("script:not([src])").Length(); n != 0 {
		t.Fatalf("the run page has %d inline scripts", n)
	}
	js := ada.get(doc.Find("script[src]").AttrOr("src", "/static/none"))
	if js.status != http.StatusOK || !strings.Contains(js.body, `button[data-copy]`) || !strings.Contains(js.body, "navigator.clipboard.writeText") {
		t.Fatalf("app.js (%d) does not wire the copy buttons", js.status)
	}
}
