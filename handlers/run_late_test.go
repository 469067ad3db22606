package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestLateDecisionIsRefusedClearly: an input submitted, or an approval given, after the
// run's deadline is answered 409 with the run page saying when it expired and what the
// expiry did, and what the person typed kept on the page; the run is not decided by it.
func TestLateDecisionIsRefusedClearly(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ada := app.login(runtime.RoleAdmin)

	input := app.pause(runtime.RoleAdmin, "ask")
	form := ada.get(views.RunPath(input)).doc(t).Find(`#` + views.InputFormID(input))
	posted := url.Values{"_csrf": {ada.token()}, "input/city": {"Berlin <b>"}}
	for _, name := range []string{views.FormFieldDigest, views.FormFieldIdempotencyKey} {
		posted.Set(name, form.Find(`[name="`+name+`"]`).AttrOr("value", ""))
	}
	expired := time.Now().Add(-time.Minute).Truncate(time.Second)
	app.setDeadline(input, expired, "cancel", false)
	res := ada.postForm(views.RunPath(input)+"/input", posted)
	if res.status != http.StatusConflict {
		t.Fatalf("late input: %d, want 409", res.status)
	}
	doc := res.doc(t)
	text := strings.Join(strings.Fields(doc.Find(`[data-testid="late-decision-text"]`).Text()), " ")
	if want := "This run expired " + views.RelativeTime(expired, time.Now()) + " (" + views.AbsoluteTime(expired, nil) + ") and was cancelled automatically; your input was not used."; text != want {
		t.Errorf("late text %q, want %q", text, want)
	}
	if got := doc.Find(`[data-testid="late-decision-value"]`).Text(); got != "Berlin <b>" {
		t.Errorf("kept value %q", got)
	}
	if got := doc.Find(`[name="input/city"]`).AttrOr("value", ""); got != "Berlin <b>" {
		t.Errorf("the still-waiting form shows %q, want what was typed", got)
	}
	if st := app.row(input).Status; st != runtime.StatusWaitingInput {
		t.Errorf("the late input decided the run: %s", st)
	}

	approval := app.pause(runtime.RoleAdmin, "mail")
	v := ada.approvalFormOf(approval, views.DecisionApprove)
	v.Set(views.FieldReason, "looks fine")
	app.setDeadline(approval, time.Now().Add(-time.Minute), "deny", false)
	rep, err := app.rt.Expire(t.Context(), 10)
	if err != nil || rep.Expired != 2 {
		t.Fatalf("expire: %+v %v, want the two expired pauses expired", rep, err)
	}
	res = ada.postForm(views.RunPath(approval)+"/approval", v)
	if res.status != http.StatusConflict {
		t.Fatalf("late approval: %d, want 409", res.status)
	}
	doc = res.doc(t)
	if text := doc.Find(`[data-testid="late-decision-text"]`).Text(); !strings.Contains(text, "was denied automatically") {
		t.Errorf("late approval text %q", text)
	}
	var kept []string
	doc.Find(`[data-testid="late-decision-value"]`).Each(func(_ int, s *goquery.Selection) { kept = append(kept, s.Text()) })
	if strings.Join(kept, "|") != "Approve|looks fine" {
		t.Errorf("kept %v, want the decision and the reason", kept)
	}
}

// TestDecidedFirstSaysWhoWhenAndWhat: the sentence naming the decision that came first names
// a person, a service account, a rule or the asker ("you"), the time, and the verdict.
func TestDecidedFirstSaysWhoWhenAndWhat(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 18, 57, 30, 0, time.UTC).Unix()
	names := nameBook{7: "ada"}
	for _, tc := range []struct {
		d    runtime.Decision
		want string
	}{
		{runtime.Decision{Kind: "approval", Approved: true, DecidedBy: 7, Crdate: at}, "Approved by ada at 1 Dec 2026, 18:57 UTC"},
		{runtime.Decision{Kind: "approval", DecidedByService: "ci", Crdate: at}, "Denied by service account ci at 1 Dec 2026, 18:57 UTC"},
		{runtime.Decision{Kind: "approval", Approved: true, DecidedByService: "rule:small-refunds", Crdate: at}, "Approved by rule small-refunds at 1 Dec 2026, 18:57 UTC"},
		{runtime.Decision{Kind: "input", DecidedBy: 9, Crdate: at}, "Input submitted by you at 1 Dec 2026, 18:57 UTC"},
		{runtime.Decision{Kind: runtime.DecisionExpiry, DecidedByService: "system:expiry", Crdate: at}, "Handled automatically on expiry at 1 Dec 2026, 18:57 UTC"},
	} {
		if got := decidedFirst(tc.d, names, 9); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}
