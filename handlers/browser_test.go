package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// refundSchema is the input form of the browser flows. tags and an attachment's pages can be
// wrong in ways the browser does not check (too many lines, an exclusive maximum), so the
// server's errors show; attachments are rows (an array of objects).
const refundSchema = `{
  "type": "object",
  "title": "Refund details",
  "required": ["amount", "method"],
  "properties": {
    "amount":      {"type": "number", "title": "Amount (EUR)", "minimum": 1, "maximum": 500, "multipleOf": 0.01},
    "method":      {"type": "string", "title": "Refund method", "enum": ["card", "bank transfer"]},
    "note":        {"type": "string", "title": "Note for the customer", "maxLength": 1000},
    "tags":        {"type": "array", "title": "Tags", "items": {"type": "string"}, "maxItems": 2},
    "attachments": {"type": "array", "title": "Attachments", "items": {"type": "object", "title": "Attachment", "required": ["name"],
                    "properties": {"name": {"type": "string", "title": "File name"}, "pages": {"type": "integer", "title": "Pages", "exclusiveMaximum": 100}}}}
  }
}`

// approvalTool needs a person's approval before each call and records the calls it runs.
type approvalTool struct {
	name  string
	mu    sync.Mutex
	calls int
}

func (t *approvalTool) Name() string                { return t.name }
func (t *approvalTool) Description() string         { return "needs approval: " + t.name }
func (t *approvalTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t *approvalTool) RequiresApproval() bool      { return true }

func (t *approvalTool) Execute(context.Context, tool.Call) (tool.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	return tool.Result{Content: "sent"}, nil
}

func (t *approvalTool) ran() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls
}

// browserDesk is a test app with an input configuration ("refund"), an approval
// configuration ("notify") and a four-eyes approval configuration ("notify-4eyes").
type browserDesk struct {
	app    *testApp
	input  *recordingTool
	notify *approvalTool
}

func newBrowserDesk(t *testing.T) *browserDesk {
	t.Helper()
	d := &browserDesk{input: &recordingTool{name: "ask_refund", schema: refundSchema}, notify: &approvalTool{name: "send_note"}}
	fourEyes := inputConfiguration("notify-4eyes", "send_note", `{"to":"ops@example.com"}`)
	fourEyes.RequireSecondApprover = true
	d.app = newTestApp(t, appOptions{tools: []tool.Tool{d.input, d.notify},
		configurations: []runtime.Configuration{
			inputConfiguration("refund", "ask_refund", `{"order_id":"A-1001","amount":999}`),
			inputConfiguration("notify", "send_note", `{"to":"ops@example.com"}`),
			fourEyes,
		}})
	return d
}

// card is the CSS selector of the run page's card of run uuid, followed by sel within it.
func card(uuid, sel string) string {
	return fmt.Sprintf(`[data-testid="run-card"][data-run="%s"] %s`, uuid, sel)
}

// inputField is the CSS selector of the control of the field at pointer in run uuid's form.
func inputField(uuid, pointer string) string {
	return fmt.Sprintf(`[id="%s"]`, views.FieldID(uuid, pointer))
}

// statusIs reports whether the run page's summary shows status.
func (b *tab) statusIs(status string) bool {
	return b.count(`[data-testid="summary-status"] [data-status="`+status+`"]`) == 1
}

func TestBrowserSignIn(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	if got := b.text(`[data-testid="signed-in-user"]`); got != testUsers[runtime.RoleReviewer] {
		t.Errorf("signed in as %q, want %q", got, testUsers[runtime.RoleReviewer])
	}
	if got := b.text(`[data-testid="signed-in-role"]`); got != "Reviewer" {
		t.Errorf("role %q", got)
	}
}

func TestBrowserInputInvalidThenCorrected(t *testing.T) {
	t.Parallel()
	d := newBrowserDesk(t)
	run := d.app.startRun(runtime.RoleReviewer, "refund").Run.UUID
	b := newTab(t, d.app)
	b.signIn(runtime.RoleAdmin)
	b.open("/runs")
	b.do("find the input run's row", chromedp.WaitVisible(chromedp.CSS(row(run, `[data-testid="inbox-row-link"]`))))
	b.screenshot("inbox")
	b.followRowLink(run)
	b.do("find the form", chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-pending"] #`+views.InputFormID(run))))

	note := "  Zoë  Ünal — danke schön\nsecond line  "
	b.do("fill in the form, then add an attachment row",
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/amount")), "12.5"),
		chromedp.SetValue(chromedp.CSS(inputField(run, "/method")), "bank transfer"),
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/note")), note),
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/tags")), "refund\nurgent\nvip"),
		chromedp.Click(chromedp.CSS(card(run, `[data-testid="row-add"]`))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-pending"] `+inputField(run, "/attachments/0/name"))),
	)
	if got := b.value(inputField(run, "/note")); got != note {
		t.Errorf("adding a row lost the note: %q", got)
	}
	if n := b.count(".error-summary"); n != 0 {
		t.Errorf("adding a row shows %d error summaries", n)
	}
	b.do("fill the row with a mistake and submit",
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/attachments/0/name")), "photo.jpg"),
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/attachments/0/pages")), "100"),
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-pending"] #`+views.InputErrorsID(run))),
	)
	b.screenshot("input-form-errors")
	if got := b.activeID(); got != views.InputErrorsID(run) {
		t.Errorf("focus on %q, want the error summary", got)
	}
	if got := b.text("#" + views.InputErrorsID(run) + " h2"); !strings.Contains(got, views.InputErrorsTitle) {
		t.Errorf("summary heading %q", got)
	}
	if n := b.count("#" + views.InputErrorsID(run) + " li a"); n != 2 {
		t.Errorf("summary lists %d errors, want 2 (tags, the attachment's pages)", n)
	}
	for _, ptr := range []string{"/tags", "/attachments/0/pages"} {
		if got := b.text(`[id="` + views.FieldID(run, ptr) + `-error"]`); got == "" {
			t.Errorf("no error under %s", ptr)
		}
	}
	for ptr, want := range map[string]string{"/amount": "12.5", "/method": "bank transfer", "/note": note,
		"/tags": "refund\nurgent\nvip", "/attachments/0/name": "photo.jpg", "/attachments/0/pages": "100"} {
		if got := b.value(inputField(run, ptr)); got != want {
			t.Errorf("%s kept as %q, want %q", ptr, got, want)
		}
	}

	b.do("add a second row, then remove it",
		chromedp.Click(chromedp.CSS(`[data-testid="row-add"]`)),
		chromedp.WaitVisible(chromedp.CSS(inputField(run, "/attachments/1/name"))),
		chromedp.Click(chromedp.CSS(`[id="`+views.FieldID(run, "/attachments/1")+`"] [data-testid="row-remove"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(inputField(run, "/attachments/1/name"))),
	)
	if got := b.value(inputField(run, "/attachments/0/name")); got != "photo.jpg" {
		t.Errorf("the first row after removing the second: %q", got)
	}
	b.setValue(inputField(run, "/tags"), "")
	b.setValue(inputField(run, "/attachments/0/pages"), "")
	b.do("correct the two fields and submit",
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/tags")), "refund\nurgent"),
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/attachments/0/pages")), "3"),
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-summary"]`)),
	)
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Input submitted; the run continues.") {
		t.Errorf("flash %q", got)
	}
	b.screenshot("run-page-after-submit")
	b.waitFor("the run completes", views.RunPath(run), func() bool { return b.statusIs("completed") })
	if got := b.text(`[data-testid="timeline"]`); !strings.Contains(got, "Input submitted by "+testUsers[runtime.RoleAdmin]) {
		t.Errorf("timeline does not name the submitter: %q", got)
	}
	b.screenshot("run-page")
	calls := d.input.received()
	if len(calls) != 1 {
		t.Fatalf("the tool ran %d times, want once", len(calls))
	}
	mustJSONEqual(t, "tool arguments", calls[0], `{"order_id":"A-1001","amount":12.5,"method":"bank transfer",`+
		`"note":`+mustMarshal(note)+`,"tags":["refund","urgent"],"attachments":[{"name":"photo.jpg","pages":3}]}`)
}

// row is the CSS selector of the inbox row of run uuid, followed by sel within it.
func row(uuid, sel string) string {
	return fmt.Sprintf(`[data-testid="inbox-row"][data-run="%s"] %s`, uuid, sel)
}

// followRowLink clicks the link of run's inbox row and waits for its run page.
func (b *tab) followRowLink(run string) {
	b.t.Helper()
	b.do("follow the row's link to the run page",
		chromedp.Click(chromedp.CSS(row(run, `[data-testid="inbox-row-link"]`))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-card"][data-run="`+run+`"]`)),
	)
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// decide opens the inbox as the signed-in person, follows run's row to its run page and
// presses button (approve or deny) on its card, then waits for the run page again.
func (b *tab) decide(run, button string) {
	b.t.Helper()
	b.open("/runs")
	b.followRowLink(run)
	b.do(button+" "+run,
		chromedp.Click(chromedp.CSS(card(run, `[data-testid="`+button+`"]`))),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-summary"]`)),
	)
}

func TestBrowserApproveAndDeny(t *testing.T) {
	t.Parallel()
	d := newBrowserDesk(t)
	approved := d.app.startRun(runtime.RoleReviewer, "notify").Run.UUID
	denied := d.app.startRun(runtime.RoleReviewer, "notify").Run.UUID
	b := newTab(t, d.app)
	b.signIn(runtime.RoleAdmin)

	b.decide(approved, "approve")
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Approval recorded") {
		t.Errorf("approve flash %q", got)
	}
	b.waitFor("the approved run completes", views.RunPath(approved), func() bool { return b.statusIs("completed") })
	if n := d.notify.ran(); n != 1 {
		t.Errorf("the approved tool ran %d times, want once", n)
	}

	b.decide(denied, "deny")
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Denial recorded") {
		t.Errorf("deny flash %q", got)
	}
	b.waitFor("the denied run ends", views.RunPath(denied), func() bool {
		return !b.statusIs("waiting_for_approval") && !b.statusIs("running") && !b.statusIs("queued")
	})
	if n := d.notify.ran(); n != 1 {
		t.Errorf("a denied call ran: the tool ran %d times in all, want 1", n)
	}
}

func TestBrowserFourEyesAndCancel(t *testing.T) {
	t.Parallel()
	d := newBrowserDesk(t)
	own := d.app.startRun(runtime.RoleReviewer, "notify-4eyes").Run.UUID
	b := newTab(t, d.app)
	b.signIn(runtime.RoleReviewer)
	b.open(views.RunPath(own))
	b.do("find the four-eyes card", chromedp.WaitVisible(chromedp.CSS(card(own, `[data-testid="approval-form"]`))))
	if got := b.liveText(card(own, `[data-testid="run-card-note"]`)); !strings.Contains(got, "requires a second person") {
		t.Errorf("four-eyes note %q", got)
	}
	if n := b.count(card(own, `[data-testid="approve"]`)); n != 0 {
		t.Errorf("the initiator is offered Approve (%d buttons)", n)
	}

	b.open(views.RunPath(own))
	b.do("cancel with confirmation",
		chromedp.Click(chromedp.CSS(`[data-testid="cancel-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="cancel-confirm"]`)),
	)
	if !b.statusIsOn(own, "waiting_for_approval") {
		t.Error("opening the confirmation changed the run")
	}
	b.do("confirm",
		chromedp.Click(chromedp.CSS(`[data-testid="cancel-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-summary"]`)),
	)
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "cancelled") {
		t.Errorf("cancel flash %q", got)
	}
	if !b.statusIs("cancelled") {
		t.Error("the run page does not show the run cancelled")
	}
	if n := d.notify.ran(); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
}

// statusIsOn reports, without leaving the page, whether run uuid has status in the store.
func (b *tab) statusIsOn(uuid, status string) bool {
	return string(b.app.view(uuid).Run.Status) == status
}

func TestBrowserSchemaAndArgumentMarkupStaysInert(t *testing.T) {
	t.Parallel()
	input := &recordingTool{name: "ask_xss", schema: xssSchema}
	notify := &approvalTool{name: "send_xss"}
	app := newTestApp(t, appOptions{tools: []tool.Tool{input, notify},
		configurations: []runtime.Configuration{
			inputConfiguration("xss-input", "ask_xss", `{"note":"<script>alert('args')</script>"}`),
			{Identifier: "xss-approval", Name: "<img src=x onerror=alert('config')>", MaxIterations: 5, Tools: []string{"send_xss"},
				Provider: model.Settings{Kind: "scripted", Script: []model.Turn{{ToolCalls: []model.ScriptedCall{{Name: "send_xss",
					Arguments: json.RawMessage(`{"to":"<script>alert('to')</script>","body":"<img src=x onerror=alert('body')>"}`)}}}}}},
		}})
	inRun := app.startRun(runtime.RoleReviewer, "xss-input").Run.UUID
	apRun := app.startRun(runtime.RoleReviewer, "xss-approval").Run.UUID
	b := newTab(t, app)
	b.signIn(runtime.RoleAdmin)
	inert := func(where string) {
		t.Helper()
		if n := b.count("img, svg, iframe, object, embed"); n != 0 {
			t.Errorf("%s: %d injected elements", where, n)
		}
		if n := b.count("script:not([src])"); n != 0 {
			t.Errorf("%s: %d inline scripts", where, n)
		}
		if n := evalIn[int](b, `[...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.startsWith("on"))).length`); n != 0 {
			t.Errorf("%s: %d elements with event handler attributes", where, n)
		}
	}
	b.open("/runs")
	b.do("wait for both rows",
		chromedp.WaitVisible(chromedp.CSS(row(inRun, `[data-testid="inbox-row-link"]`))),
		chromedp.WaitVisible(chromedp.CSS(row(apRun, `[data-testid="inbox-row-link"]`))),
	)
	inert("inbox")
	b.open(views.RunPath(apRun))
	b.do("wait for the approval card", chromedp.WaitVisible(chromedp.CSS(card(apRun, `[data-testid="approval-form"]`))))
	args := evalIn[string](b, fmt.Sprintf("document.querySelector(%s).textContent", jsString(card(apRun, `[data-testid="call-arguments"]`))))
	if !strings.Contains(args, "alert('to')") || !strings.Contains(args, "onerror=alert('body')") {
		t.Errorf("the arguments are not shown as text: %q", args)
	}
	for _, run := range []string{inRun, apRun} {
		b.open(views.RunPath(run))
		inert("run page " + run)
	}
	b.open(views.RunPath(inRun))
	if got := b.text(`label[for="` + views.FieldID(inRun, "/choice") + `"]`); !strings.Contains(got, "<img src=x onerror=alert(1)>") {
		t.Errorf("the title is not shown as text: %q", got)
	}
	b.do("submit the markup form with an option outside the enum",
		chromedp.SetAttributeValue(chromedp.CSS(card(inRun, `option[value="<script>alert(3)</script>"]`)), "value", "<svg onload=alert(16)>"),
		chromedp.SetValue(chromedp.CSS(inputField(inRun, "/choice")), "<svg onload=alert(16)>"),
		chromedp.Click(chromedp.CSS(card(inRun, `[data-testid="input-submit"]`))),
		chromedp.WaitVisible(chromedp.CSS("#"+views.InputErrorsID(inRun))),
	)
	inert("422 page")
	if got := b.dialogsOpened(); len(got) != 0 {
		t.Errorf("JavaScript dialogs opened: %q", got)
	}
	if n := input.received(); len(n) != 0 {
		t.Errorf("the tool ran %d times", len(n))
	}
}
