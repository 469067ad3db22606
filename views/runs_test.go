package views

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

const cardUUID = "0a6e2b58-1234-4abc-9def-000000000001"

const markup = `<script>alert(1)</script><img src=x onerror=alert(1)>`

func approvalCard() PendingCard {
	now := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	return PendingCard{
		RunUUID: cardUUID, Configuration: "Mail " + markup, Status: "waiting_for_approval",
		Since: now.Add(-2 * time.Hour), Now: now,
		Calls: []PendingCallView{
			{Tool: "send_" + markup, Arguments: "{\n  \"body\": \"" + markup + "\"\n}", Lines: 3,
				Badges:  []Badge{{Label: "Writes", Icon: "✎", Tone: "attention"}},
				Preview: &PreviewView{Lines: []string{"Would mail " + markup}}},
			{Tool: "wipe", Arguments: "{}", Lines: 1, Preview: &PreviewView{}},
			{Tool: "long", Arguments: strings.Repeat("x\n", 20), Lines: 21, Long: true, Preview: &PreviewView{Lines: []string{"The preview failed."}, Failed: true}},
		},
		Approval: &ApprovalForm{Action: "/runs/" + cardUUID + "/approval", CSRF: "tok", Digest: "dig", IdempotencyKey: "key", CanApprove: true},
	}
}

func TestPendingCardEscapesEverythingTheModelChose(t *testing.T) {
	doc := render(t, PendingCardView(approvalCard()))
	if n := doc.Find("script, img, [onerror]").Length(); n != 0 {
		t.Fatalf("model-chosen text created %d elements", n)
	}
	for _, sel := range []string{".run-card__title", `[data-testid="call-tool"]`, `[data-testid="call-arguments"]`, ".preview__lines"} {
		if got := doc.Find(sel).First().Text(); !strings.Contains(got, "<script>alert(1)</script>") {
			t.Errorf("%s = %q, want the markup as text", sel, got)
		}
	}
}

func TestPendingCardPreviewsBadgesAndForm(t *testing.T) {
	doc := render(t, PendingCardView(approvalCard()))
	calls := doc.Find(`[data-testid="pending-call"]`)
	if got := calls.Eq(0).Find(".preview__title").Text(); got != "What this call would do" {
		t.Errorf("preview title %q", got)
	}
	if got := calls.Eq(0).Find(".preview__note").Text(); got != "Captured when the run paused — the target may have changed since." {
		t.Errorf("preview note %q", got)
	}
	for i := 1; i <= 2; i++ {
		if got := calls.Eq(i).Find(".preview__title").Text(); !strings.Contains(got, "No preview — you are deciding without one") {
			t.Errorf("call %d: preview title %q, want the no-preview warning", i, got)
		}
	}
	if b := calls.Eq(0).Find(`[data-testid="call-badge"]`); b.Find(".badge__label").Text() != "Writes" || b.Find(`.badge__icon[aria-hidden="true"]`).Length() != 1 {
		t.Error("badge without its text and decorative icon")
	}
	if calls.Eq(2).Find("details > summary").Text() != "Arguments (21 lines)" || calls.Eq(0).Find("details").Length() != 0 {
		t.Error("only long arguments are collapsed")
	}
	if doc.Find("h3.run-card__title").Length() != 1 {
		t.Error("a card is not headed by an h3 (under the run page's section)")
	}
	form := doc.Find(`form[data-testid="approval-form"]`)
	if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/runs/"+cardUUID+"/approval" {
		t.Fatal("the approval form does not post to the run's approval")
	}
	for name, want := range map[string]string{"_csrf": "tok", "turn_digest": "dig", "idempotency_key": "key"} {
		if got := form.Find(`input[type="hidden"][name="`+name+`"]`).AttrOr("value", ""); got != want {
			t.Errorf("hidden %s = %q, want %q", name, got, want)
		}
	}
	reason := form.Find("textarea#reason-" + cardUUID)
	if reason.AttrOr("name", "") != "reason" || form.Find(`label[for="reason-`+cardUUID+`"]`).Length() != 1 || reason.AttrOr("maxlength", "") != "1000" {
		t.Error("the reason has no label, name or limit")
	}
	if form.Find(`button[value="approve"].button--primary`).Length() != 1 || form.Find(`button[value="deny"]`).Length() != 1 {
		t.Error("want Approve (primary) and Deny")
	}

	c := approvalCard()
	c.Approval.CanApprove = false
	c.Notes = []string{"Only an admin may approve this turn."}
	doc = render(t, PendingCardView(c))
	if doc.Find(`button[value="approve"]`).Length() != 0 || doc.Find(`button[value="deny"]`).Length() != 1 {
		t.Error("CanApprove=false: want Deny only")
	}
	if !strings.Contains(doc.Find(`[data-testid="run-card-note"]`).Text(), "Only an admin") || doc.Find("h3.run-card__title").Length() != 1 {
		t.Error("notes not rendered")
	}
}

func TestPendingCardUnreadableAndReadOnly(t *testing.T) {
	c := approvalCard()
	c.Unreadable = true
	doc := render(t, PendingCardView(c))
	if got := doc.Find(`[data-testid="run-card-unreadable"]`).Text(); !strings.Contains(got, "This run's state could not be read; no action is available.") {
		t.Errorf("unreadable card says %q", got)
	}
	if doc.Find("form, [data-testid=pending-call]").Length() != 0 {
		t.Error("an unreadable card shows calls or a form")
	}
	c = approvalCard()
	c.Approval = nil
	if doc := render(t, PendingCardView(c)); doc.Find("form, button").Length() != 0 {
		t.Error("a read-only card has a form")
	}
	c.Input, c.InputTool = true, "ask_city"
	if got := render(t, PendingCardView(c)).Find(`[data-testid="run-card-why"]`).Text(); got != "Waiting for typed input" {
		t.Errorf("input card says %q", got)
	}
}

func TestRunPageSummaryAndTimeline(t *testing.T) {
	now := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	r := RunView{Now: now, Live: true,
		Summary: RunSummary{UUID: cardUUID, Status: "failed", Reason: "provider_failed", Configuration: "Mail", Owner: "rita",
			Created: now.Add(-time.Hour), TotalTokens: 12345, PromptTokens: 12000, CompletionTokens: 345, Cost: 0.25, ErrorClass: "model.Error"},
		Timeline: []TimelineEntry{{Sequence: 0, Time: now, Kind: "tool", Round: 1, Duration: "3 ms", Summary: "Tool x answered with an error", IsError: true}},
	}
	doc := render(t, RunPage(Page{Title: "Run"}, r))
	for sel, want := range map[string]string{
		`[data-testid="summary-reason"]`:      "The model provider failed",
		`[data-testid="summary-owner"]`:       "rita",
		`[data-testid="summary-cost"]`:        "0.2500",
		`[data-testid="summary-error-class"]`: "model.Error",
	} {
		if got := strings.TrimSpace(doc.Find(sel).Text()); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if got := doc.Find(`[data-testid="summary-tokens"]`).Text(); !strings.Contains(got, "12\u202f345") {
		t.Errorf("tokens %q", got)
	}
	row := doc.Find(`[data-testid="timeline-row"]`)
	if row.Find(".badge--danger .badge__label").Text() != "Error" || row.Find(`td[data-label="Event"]`).Text() != "Tool call" {
		t.Error("the error step is not marked in words")
	}
	if doc.Find("[data-live]").Length() != 1 || doc.Find(`[data-testid="refresh"]`).Length() != 1 {
		t.Error("a live run has no live marker or Refresh link")
	}
	r.Summary.Status, r.Summary.Reason = "completed", "completed"
	if render(t, RunPage(Page{}, r)).Find(`[data-testid="summary-reason"]`).Length() != 0 {
		t.Error("\"Completed\" is repeated as the reason")
	}
}

func TestRunFormatting(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Cost(0), ""}, {Cost(1.23456), "1.2346"}, {Count(999), "999"}, {Count(1234), "1234"},
		{Count(12345), "12\u202f345"}, {Count(1234567), "1\u202f234\u202f567"},
		{ReasonLabel("max_iterations"), "Stopped at the iteration limit"}, {ReasonLabel("odd"), "odd"}, {ReasonLabel(""), ""},
		{ShortID(cardUUID), "0a6e2b58"}, {KindLabel("approval"), "Decision"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestPreviewLinesReadAsLines: a preview's lines (an e-mail's body) are shown as lines in
// their order, blank ones kept, not as a bulleted list.
func TestPreviewLinesReadAsLines(t *testing.T) {
	doc := render(t, callPreview(PreviewView{Lines: []string{"To: Ana <ana@example.com>", "Subject: Refund", "Dear Ana,", "", "your refund is on its way."}}))
	if n := doc.Find(`[data-testid="preview-lines"] li, [data-testid="preview-lines"] ul, ul.preview__lines`).Length(); n != 0 {
		t.Errorf("the preview is a list (%d list elements)", n)
	}
	var got []string
	doc.Find(`[data-testid="preview-lines"] .preview__line`).Each(func(_ int, s *goquery.Selection) { got = append(got, s.Text()) })
	if want := []string{"To: Ana <ana@example.com>", "Subject: Refund", "Dear Ana,", "", "your refund is on its way."}; !slices.Equal(got, want) {
		t.Errorf("preview lines %q, want %q", got, want)
	}
}
