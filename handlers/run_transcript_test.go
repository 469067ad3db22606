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

// transcriptApp is a test app with one configuration per privacy mode, each a lookup then a
// final message with markup, an e-mail address and a long tail (so it starts collapsed).
func transcriptApp(t *testing.T) *testApp {
	t.Helper()
	final := "<b>Refunded</b> bob@example.com.\n" + strings.Repeat("More detail. ", 60)
	var cfgs []runtime.Configuration
	for _, mode := range []runtime.Privacy{runtime.PrivacyMetadata, runtime.PrivacyRedacted, runtime.PrivacyFull} {
		c := deskConfiguration(string(mode), "Talk "+string(mode), false, model.Turn{Content: "Looking it up.",
			ToolCalls: []model.ScriptedCall{deskCall("lookup", `{"order":"A1","note":"mail carol@example.com"}`)}})
		c.Provider.Script[len(c.Provider.Script)-1].Content = final
		c.Privacy, c.SystemPrompt = mode, "You help the desk."
		cfgs = append(cfgs, c)
	}
	return newTestApp(t, appOptions{tools: []tool.Tool{deskTool{"lookup"}}, configurations: cfgs})
}

// TestTranscriptTab: a run of a configuration that keeps content has Overview and Transcript
// tabs; its Transcript lists the request (system prompt collapsed), each model turn with the
// calls it asked for, the tool call's arguments and result, as escaped text, long texts
// collapsed; redacted masks the addresses; support sees a full run's steps without their
// content (support_sees: redacted); a metadata run has no tabs and its transcript says why
// it shows nothing.
func TestTranscriptTab(t *testing.T) {
	t.Parallel()
	app := transcriptApp(t)
	ada := app.login(runtime.RoleAdmin)
	sam := app.login(runtime.RoleSupport)
	runs := map[runtime.Privacy]string{}
	for _, mode := range []runtime.Privacy{runtime.PrivacyMetadata, runtime.PrivacyRedacted, runtime.PrivacyFull} {
		runs[mode] = app.pause(runtime.RoleReviewer, string(mode))
	}
	if n := ada.get(views.RunPath(runs[runtime.PrivacyMetadata])).doc(t).Find(`[data-testid="run-tabs"]`).Length(); n != 0 {
		t.Errorf("a metadata run's page shows %d tab bars", n)
	}
	page := ada.get(views.RunPath(runs[runtime.PrivacyFull])).doc(t)
	if href := page.Find(`[data-testid="tab-transcript"]`).AttrOr("href", ""); href != views.TranscriptPath(runs[runtime.PrivacyFull]) {
		t.Fatalf("transcript tab links to %q", href)
	}
	if page.Find(`[data-testid="tab-overview"]`).AttrOr("aria-current", "") != "page" {
		t.Error("the run page does not mark Overview as the current tab")
	}

	res := ada.get(views.TranscriptPath(runs[runtime.PrivacyFull]))
	if res.status != http.StatusOK {
		t.Fatalf("GET transcript: %d", res.status)
	}
	doc := res.doc(t)
	if doc.Find(`[data-testid="tab-transcript"]`).AttrOr("aria-current", "") != "page" {
		t.Error("the transcript does not mark its tab current")
	}
	kinds := doc.Find(`[data-testid="transcript-step"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-kind", "") })
	if strings.Join(kinds, ",") != "request,llm,tool,llm" {
		t.Fatalf("steps %v, want request, llm, tool, llm", kinds)
	}
	system := doc.Find(`details[data-testid="part-system"]`)
	if system.Length() != 1 || system.AttrOr("open", "closed") != "closed" || !strings.Contains(system.Text(), "You help the desk.") {
		t.Errorf("system prompt: %d collapsed parts, text %q", system.Length(), system.Text())
	}
	if got := doc.Find(`[data-testid="part-prompt"]`).Text(); !strings.Contains(got, "please help") {
		t.Errorf("prompt part %q", got)
	}
	if got := doc.Find(`[data-testid="part-calls"]`).Text(); !strings.Contains(got, "lookup") || !strings.Contains(got, "carol@example.com") {
		t.Errorf("calls part %q, want the lookup call verbatim", got)
	}
	if got := doc.Find(`[data-testid="part-result"]`).Text(); got == "" {
		t.Error("the tool step shows no result")
	}
	long := doc.Find(`details[data-testid="part-text"]`)
	if long.Length() != 1 || !strings.Contains(long.Text(), "<b>Refunded</b> bob@example.com") || long.Find("b").Length() != 0 {
		t.Errorf("final text: %d collapsed parts, text %.80q, %d <b> elements; want it collapsed, escaped", long.Length(), long.Text(), long.Find("b").Length())
	}

	redacted := ada.get(views.TranscriptPath(runs[runtime.PrivacyRedacted]))
	if strings.Contains(redacted.body, "bob@example.com") || strings.Contains(redacted.body, "carol@example.com") || !strings.Contains(redacted.body, "[email]") {
		t.Error("the redacted transcript shows an e-mail address")
	}
	if got := redacted.doc(t).Find(`[data-testid="transcript-privacy"]`).Text(); !strings.Contains(got, "redacted") || !strings.Contains(got, "removed") {
		t.Errorf("privacy line %q, want the mode and when content is removed", got)
	}
	if sees := sam.get(views.TranscriptPath(runs[runtime.PrivacyRedacted])).doc(t); sees.Find(`[data-testid="part-text"]`).Length() == 0 {
		t.Error("support sees no content of a redacted run")
	}
	withheld := sam.get(views.TranscriptPath(runs[runtime.PrivacyFull])).doc(t)
	if withheld.Find(`[data-testid="part-text"]`).Length() != 0 || withheld.Find(`[data-testid="step-withheld"]`).Length() != 4 {
		t.Errorf("support on a full run: %d texts, %d withheld steps; want none, 4", withheld.Find(`[data-testid="part-text"]`).Length(), withheld.Find(`[data-testid="step-withheld"]`).Length())
	}
	meta := ada.get(views.TranscriptPath(runs[runtime.PrivacyMetadata])).doc(t)
	if got := meta.Find(`[data-testid="transcript-withheld"]`).Text(); !strings.Contains(got, "privacy: metadata") {
		t.Errorf("metadata transcript says %q", got)
	}
	if res := ada.get(views.TranscriptPath("0a6e2b58-1234-4abc-9def-000000000000")); res.status != http.StatusNotFound {
		t.Errorf("transcript of no run: %d, want 404", res.status)
	}
}
