package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

const editParams = `{"type":"object","required":["order_id","amount"],"properties":{"order_id":{"type":"string","title":"Order"},"amount":{"type":"number","title":"Amount","minimum":0,"maximum":500},"note":{"type":"string"}}}`

// editWords is what the model writes beside its call: markup, and more lines than the card
// shows before collapsing the rest.
const editWords = "I will refund the whole order <b>now</b>.\nLine two.\nLine three.\nLine four.\nLine five is hidden at first."

// deskEditTool is an editable tool (a non-idempotent write, or approval-bound) that records
// the arguments it runs with.
type deskEditTool struct {
	deskTool
	effect tool.Effect
	admin  bool
	mu     *sync.Mutex
	got    *[]string
}

func (t deskEditTool) Parameters() json.RawMessage { return json.RawMessage(editParams) }
func (t deskEditTool) Editable() bool              { return true }
func (t deskEditTool) RequiresApproval() bool      { return true }
func (t deskEditTool) Effect() tool.Effect         { return t.effect }
func (t deskEditTool) AdminOnly() bool             { return t.admin }
func (t deskEditTool) Execute(_ context.Context, c tool.Call) (tool.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	*t.got = append(*t.got, string(c.Arguments))
	return tool.Result{Content: "refunded"}, nil
}

// editApp is a test app with editable tools:
//
//	edit       refund_edit (editable write) with the model's words editWords
//	editadmin  refund_admin (editable, admin-only)
//	foureyes   refund_edit, second approver required
//	mail       send_mail (approval, not editable)
type editApp struct {
	*testApp
	mu  sync.Mutex
	got []string
}

func newEditApp(t *testing.T) *editApp {
	t.Helper()
	a := &editApp{}
	args := `{"order_id":"A1","amount":100}`
	cfg := func(id string, fourEyes bool, name string) runtime.Configuration {
		return runtime.Configuration{Identifier: id, Name: "Refunds " + id, MaxIterations: 5, RequireSecondApprover: fourEyes,
			Tools: []string{"refund_edit", "refund_admin", "send_mail"},
			Provider: model.Settings{Kind: "scripted", Script: []model.Turn{
				{Content: editWords, ToolCalls: []model.ScriptedCall{deskCall(name, args)}}, {Content: "Done."}}}}
	}
	tools := []tool.Tool{
		deskEditTool{deskTool: deskTool{"refund_edit"}, effect: tool.EffectNonIdempotentWrite, mu: &a.mu, got: &a.got},
		deskEditTool{deskTool: deskTool{"refund_admin"}, admin: true, mu: &a.mu, got: &a.got},
		deskMailTool{deskTool{"send_mail"}},
	}
	a.testApp = newTestApp(t, appOptions{tools: tools, configurations: []runtime.Configuration{
		cfg("edit", false, "refund_edit"), cfg("editadmin", false, "refund_admin"), cfg("foureyes", true, "refund_edit"), cfg("mail", false, "send_mail")}})
	return a
}

func (a *editApp) ran() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// callID is the id of uuid's first pending call.
func (a *editApp) callID(uuid string) string {
	a.t.Helper()
	v, err := a.rt.Get(context.Background(), a.deskActor(runtime.RoleAdmin), uuid)
	if err != nil || v.Pause == nil {
		a.t.Fatalf("get %s: %v", uuid, err)
	}
	return v.Pause.PendingCalls[0].ID
}

// formValues are the values of every named control of sel (the first value of each name,
// all values of checkboxes that are checked).
func formValues(sel *goquery.Selection) url.Values {
	v := url.Values{}
	sel.Find("input, textarea, select").Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		if name == "" || (s.AttrOr("type", "") == "checkbox" && s.AttrOr("checked", "-") == "-") {
			return
		}
		switch goquery.NodeName(s) {
		case "textarea":
			v.Add(name, s.Text())
		case "select":
			v.Add(name, s.Find("option[selected]").AttrOr("value", ""))
		default:
			v.Add(name, s.AttrOr("value", ""))
		}
	})
	return v
}

// TestEditAndApproveFlow: card → edit form (prefilled) → invalid values (422, kept as typed)
// → review (before → after; a posted key the parameters do not declare changes nothing) →
// approve: the tool runs with the edited arguments, the event holds no value, and the run page
// lists proposed, approved and effective arguments.
func TestEditAndApproveFlow(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	uuid := app.pause(runtime.RoleAdmin, "edit")
	id := app.callID(uuid)
	rita := app.login(runtime.RoleReviewer)

	page := rita.get(views.RunPath(uuid)).doc(t)
	words := page.Find(`[data-testid="model-words"]`)
	if words.Length() != 1 || !strings.Contains(words.Text(), "untrusted") || words.Find("b").Length() != 0 ||
		!strings.Contains(words.Find(`[data-testid="model-words-head"]`).Text(), "<b>now</b>") ||
		strings.Contains(words.Find(`[data-testid="model-words-head"]`).Text(), "Line five") ||
		!strings.Contains(words.Find(`details[data-testid="model-words-more"]`).Text(), "Line five") {
		t.Fatalf("model words box: %q", words.Text())
	}
	if words.Closest(`[data-testid="pending-call"]`).Length() != 0 {
		t.Errorf("the model's words are inside a call's arguments")
	}
	href := page.Find(`[data-testid="edit-call"]`).AttrOr("href", "")
	if href != views.EditCallPath(uuid, id) {
		t.Fatalf("edit link %q, want %q", href, views.EditCallPath(uuid, id))
	}

	edit := rita.get(href)
	if edit.status != http.StatusOK {
		t.Fatalf("edit form: %d %.300s", edit.status, edit.body)
	}
	form := edit.doc(t).Find(`[data-testid="input-form"]`)
	values := formValues(form)
	if values.Get("input/amount") != "100" || values.Get("input/order_id") != "A1" || values.Get("turn_digest") == "" {
		t.Fatalf("edit form not prefilled with the model's arguments: %v", values)
	}

	values.Set("input/amount", "9999")
	values.Set("input/note", "typed <note>")
	bad := rita.postForm(href, values)
	if bad.status != http.StatusUnprocessableEntity {
		t.Fatalf("invalid edit: %d, want 422", bad.status)
	}
	badDoc := bad.doc(t)
	if got := formValues(badDoc.Find(`[data-testid="input-form"]`)); got.Get("input/amount") != "9999" || got.Get("input/note") != "typed <note>" {
		t.Errorf("the rejected form lost what was typed: %v", got)
	}
	if badDoc.Find(`[data-testid="input-errors"]`).Length() != 1 || !strings.Contains(badDoc.Find(`[data-testid="input-errors"]`).Text(), "Amount") {
		t.Errorf("no error summary naming the field: %q", badDoc.Find(`[data-testid="input-errors"]`).Text())
	}

	values.Set("input/amount", "40")
	values.Set("input/bcc", "attacker@example.com") // not a declared parameter: the form edits no such key
	review := rita.postForm(href, values)
	if review.status != http.StatusOK {
		t.Fatalf("review: %d %.300s", review.status, review.body)
	}
	rd := review.doc(t)
	var rows []string
	rd.Find(`[data-testid="change-row"]`).Each(func(_ int, s *goquery.Selection) {
		var cells []string
		s.Find("th, td").Each(func(_ int, c *goquery.Selection) { cells = append(cells, strings.TrimSpace(c.Text())) })
		rows = append(rows, strings.Join(cells, " "))
	})
	if strings.Join(rows, " | ") != `/amount changed 100 40 | /note added (none) "typed <note>"` {
		t.Errorf("change table %q", rows)
	}
	if got := len(app.ran()); got != 0 {
		t.Fatalf("the tool ran before the confirmation (%d)", got)
	}
	backForm := formValues(rd.Find(`[data-testid="edit-back-form"]`))
	backForm.Set(views.FieldEditBack, "1")
	back := rita.postForm(href, backForm)
	if got := formValues(back.doc(t).Find(`[data-testid="input-form"]`)); back.status != http.StatusOK || got.Get("input/amount") != "40" {
		t.Errorf("back to the form: %d, amount %q", back.status, got.Get("input/amount"))
	}

	confirm := formValues(rd.Find(`[data-testid="edit-approve-form"]`))
	confirm.Set(views.FieldDecision, views.DecisionApprove)
	res := rita.postForm(views.RunPath(uuid)+"/approval", confirm)
	wantSeeOther(t, "approve with edits", res, views.RunPath(uuid))
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Fatalf("run %s after the edited approval", run.Status)
	}
	if got := app.ran(); len(got) != 1 || got[0] != `{"amount":40,"note":"typed \u003cnote\u003e","order_id":"A1"}` {
		t.Fatalf("tool ran with %q", got)
	}
	for _, e := range app.storedEvents(uuid) {
		if e.Kind == runtime.EventApproval && (strings.Contains(string(e.Payload), "note\u003e") || !strings.Contains(string(e.Payload), `"edited":true`) ||
			!strings.Contains(string(e.Payload), `"changedPaths":["/`+id+`/amount","/`+id+`/note"]`)) {
			t.Errorf("approval event %s", e.Payload)
		}
	}
	sam := app.login(runtime.RoleSupport)
	samPage := sam.get(views.RunPath(uuid)).doc(t)
	if got := samPage.Find(`[data-testid="timeline"]`).Text(); !strings.Contains(got, "Approved by rita, with edited arguments") ||
		!strings.Contains(got, "changed /"+id+"/amount, /"+id+"/note") {
		t.Errorf("timeline does not say the approval edited the call: %q", got)
	}
	done := samPage.Find(`[data-testid="run-call"]`)
	if done.Length() != 1 || done.AttrOr("data-call-id", "") != id || !strings.Contains(done.Find(`[data-testid="call-proposed"]`).Text(), `"amount": 100`) ||
		!strings.Contains(done.Find(`[data-testid="call-approved"]`).Text(), `"amount": 40`) ||
		!strings.Contains(done.Find(`[data-testid="call-effective"]`).Text(), `"note": "typed <note>"`) ||
		!strings.Contains(done.Text(), "edited by rita") || done.Find(`[data-testid="change-table"]`).Length() != 1 {
		t.Errorf("run page's edited call: %q", done.Text())
	}
}

// TestEditRefusals: every refusal of "Edit and approve" on the web leaves the run waiting
// and runs nothing: a flash on the run page for a refusal of who asks or of a stale turn,
// 422 for edits that cannot be used, 403 for a role that may not decide.
func TestEditRefusals(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	rita := app.login(runtime.RoleReviewer)
	ada := app.login(runtime.RoleAdmin)
	sam := app.login(runtime.RoleSupport)
	mayNotEdit := "You may not edit this call: its tool is not editable, is restricted to admins or is no longer enabled."
	approveWith := func(c *client, uuid, edits, patchDigest string) response {
		form := c.approvalFormOf(uuid, views.DecisionApprove)
		edits = strings.ReplaceAll(edits, "ID", app.callID(uuid))
		if patchDigest == "" {
			patchDigest = patchDigestOf(t, form.Get("turn_digest"), edits)
		}
		form.Set(views.FieldEdits, edits)
		form.Set(views.FieldPatchDigest, patchDigest)
		return c.postForm(views.RunPath(uuid)+"/approval", form)
	}
	replace := `{"ID":[{"op":"replace","path":"/amount","value":40}]}`
	cases := []struct {
		name, configuration string
		who                 *client
		do                  func(c *client, uuid string) response
		status              int
		flash               string
	}{
		{"edit form of a tool that is not editable", "mail", rita, func(c *client, uuid string) response {
			return c.get(views.EditCallPath(uuid, app.callID(uuid)))
		}, http.StatusSeeOther, mayNotEdit},
		{"approval editing a tool that is not editable", "mail", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, `{"ID":[{"op":"add","path":"/x","value":1}]}`, "")
		}, http.StatusSeeOther, mayNotEdit},
		{"edit form of an admin-only tool, reviewer", "editadmin", rita, func(c *client, uuid string) response {
			return c.get(views.EditCallPath(uuid, app.callID(uuid)))
		}, http.StatusSeeOther, mayNotEdit},
		{"approval editing an admin-only tool, reviewer", "editadmin", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, replace, "")
		}, http.StatusSeeOther, mayNotEdit},
		{"edit form, four-eyes", "foureyes", ada, func(c *client, uuid string) response {
			return c.get(views.EditCallPath(uuid, app.callID(uuid)))
		}, http.StatusSeeOther, "This configuration requires a second person: you started this run, so you may deny it but not approve it."},
		{"approval with edits, four-eyes", "foureyes", ada, func(c *client, uuid string) response {
			return approveWith(c, uuid, replace, "")
		}, http.StatusSeeOther, "This configuration requires a second person: you started this run, so you may deny it but not approve it."},
		{"invalid patch", "edit", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, `{"ID":[{"op":"bogus","path":"/amount"}]}`, "")
		}, http.StatusUnprocessableEntity, ""},
		{"edits not an object", "edit", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, `[1]`, "")
		}, http.StatusUnprocessableEntity, ""},
		{"edited arguments fail the parameters", "edit", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, `{"ID":[{"op":"replace","path":"/amount","value":9999}]}`, "")
		}, http.StatusUnprocessableEntity, ""},
		{"edited arguments add an undeclared property", "edit", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, `{"ID":[{"op":"add","path":"/bcc","value":"attacker@example.com"}]}`, "")
		}, http.StatusUnprocessableEntity, ""},
		{"stale patch digest", "edit", rita, func(c *client, uuid string) response {
			return approveWith(c, uuid, replace, strings.Repeat("a", 64))
		}, http.StatusSeeOther, "The pending action changed — please re-review."},
		{"edits without a patch digest", "edit", rita, func(c *client, uuid string) response {
			form := c.approvalFormOf(uuid, views.DecisionApprove)
			form.Set(views.FieldEdits, strings.ReplaceAll(replace, "ID", app.callID(uuid)))
			return c.postForm(views.RunPath(uuid)+"/approval", form)
		}, http.StatusSeeOther, "The pending action changed — please re-review."},
		{"edit form posted for a stale turn", "edit", rita, func(c *client, uuid string) response {
			href := views.EditCallPath(uuid, app.callID(uuid))
			values := formValues(c.get(href).doc(t).Find(`[data-testid="input-form"]`))
			values.Set("turn_digest", strings.Repeat("b", 64))
			values.Set("input/amount", "40")
			return c.postForm(href, values)
		}, http.StatusSeeOther, "The pending action changed — please re-review."},
		{"support may not open the edit form", "edit", sam, func(c *client, uuid string) response {
			return c.get(views.EditCallPath(uuid, app.callID(uuid)))
		}, http.StatusForbidden, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			starter := runtime.RoleReviewer
			if c.who == ada {
				starter = runtime.RoleAdmin
			}
			uuid := app.pause(starter, c.configuration)
			res := c.do(c.who, uuid)
			if res.status != c.status {
				t.Fatalf("status %d, want %d: %.400s", res.status, c.status, res.body)
			}
			if c.status == http.StatusSeeOther {
				if loc := res.header.Get("Location"); loc != views.RunPath(uuid) {
					t.Errorf("redirect to %q", loc)
				}
				if got := c.who.flashTexts(); got != c.flash {
					t.Errorf("flash %q, want %q", got, c.flash)
				}
			}
			if c.status == http.StatusUnprocessableEntity && !strings.Contains(res.body, "The edited arguments could not be used") {
				t.Errorf("422 page does not say the edits could not be used: %.400s", res.body)
			}
			if strings.Contains(res.body, "9999") {
				t.Errorf("the refusal repeats a value")
			}
			if run := app.row(uuid); run.Status != runtime.StatusWaitingApproval {
				t.Errorf("run %s, want still waiting", run.Status)
			}
		})
	}
	if got := app.ran(); len(got) != 0 {
		t.Errorf("a refused edit ran the tool: %q", got)
	}
	noLink := rita.get(views.RunPath(app.pause(runtime.RoleReviewer, "editadmin"))).doc(t)
	if noLink.Find(`[data-testid="edit-call"]`).Length() != 0 {
		t.Errorf("a reviewer is offered to edit an admin-only tool")
	}
	if adaLink := ada.get(views.RunPath(app.pause(runtime.RoleReviewer, "editadmin"))).doc(t); adaLink.Find(`[data-testid="edit-call"]`).Length() != 1 {
		t.Errorf("an admin is not offered to edit an admin-only tool")
	}
	if fe := ada.get(views.RunPath(app.pause(runtime.RoleAdmin, "foureyes"))).doc(t); fe.Find(`[data-testid="edit-call"]`).Length() != 0 {
		t.Errorf("the initiator of a four-eyes run is offered to edit it")
	}
}

// TestModelWordsOnInputCard: the input card shows the model's words too, escaped and apart
// from the form; a turn without words shows no box.
func TestModelWordsOnInputCard(t *testing.T) {
	t.Parallel()
	ask := runtime.Configuration{Identifier: "ask", Name: "Ask", MaxIterations: 5, Tools: []string{"ask_city"},
		Provider: model.Settings{Kind: "scripted", Script: []model.Turn{
			{Content: `Which city? <script>alert(1)</script>`, ToolCalls: []model.ScriptedCall{deskCall("ask_city", `{}`)}}, {Content: "ok"}}}}
	silent := ask
	silent.Identifier, silent.Provider.Script = "silent", []model.Turn{{ToolCalls: []model.ScriptedCall{deskCall("ask_city", `{}`)}}, {Content: "ok"}}
	app := newTestApp(t, appOptions{tools: []tool.Tool{deskAskTool{deskTool{"ask_city"}}}, configurations: []runtime.Configuration{ask, silent}})
	rita := app.login(runtime.RoleReviewer)
	res := rita.get(views.RunPath(app.pause(runtime.RoleReviewer, "ask")))
	doc := res.doc(t)
	words := doc.Find(`[data-run] [data-testid="model-words"]`)
	if words.Length() != 1 || words.Find("script").Length() != 0 || !strings.Contains(words.Text(), "<script>alert(1)</script>") ||
		words.Find(`[data-testid="input-form"]`).Length() != 0 || words.Find(`details`).Length() != 0 {
		t.Fatalf("input card's model words: %q", words.Text())
	}
	if strings.Contains(res.body, "<script>alert(1)") {
		t.Errorf("the model's words reach the page unescaped")
	}
	if n := rita.get(views.RunPath(app.pause(runtime.RoleReviewer, "silent"))).doc(t).Find(`[data-testid="model-words"]`).Length(); n != 0 {
		t.Errorf("a turn without words shows %d boxes", n)
	}
}

// patchDigestOf is the patch digest of edits (JSON text) on the turn with digest turn, or
// "x" when edits do not decode (the refusal under test comes first).
func patchDigestOf(t *testing.T, turn, edits string) string {
	t.Helper()
	var raw map[string]json.RawMessage
	if json.Unmarshal([]byte(edits), &raw) != nil {
		return "x"
	}
	decoded, e := runtime.DecodeEdits("", raw)
	if e != nil {
		return "x"
	}
	return schema.PatchDigest(turn, decoded)
}

// TestTwoReviewersEditTheSameTurn: two people each review their own edit of the same turn
// and confirm at the same moment: exactly one approval is recorded and runs, the other is
// told who approved first (409), and the tool runs once with the winner's arguments.
func TestTwoReviewersEditTheSameTurn(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	uuid := app.pause(runtime.RoleReviewer, "edit")
	href := views.EditCallPath(uuid, app.callID(uuid))
	people := []*client{app.login(runtime.RoleAdmin), app.login(runtime.RoleReviewer)}
	confirms := make([]url.Values, len(people))
	for i, c := range people {
		values := formValues(c.get(href).doc(t).Find(`[data-testid="input-form"]`))
		values.Set("input/amount", []string{"10", "20"}[i])
		review := c.postForm(href, values)
		if review.status != http.StatusOK {
			t.Fatalf("review %d: %d", i, review.status)
		}
		confirms[i] = formValues(review.doc(t).Find(`[data-testid="edit-approve-form"]`))
		confirms[i].Set(views.FieldDecision, views.DecisionApprove)
	}
	var wg sync.WaitGroup
	results := make([]response, len(people))
	start := make(chan struct{})
	for i, c := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = c.postForm(views.RunPath(uuid)+"/approval", confirms[i])
		}()
	}
	close(start)
	wg.Wait()
	app.row(uuid)
	won := 0
	for i, c := range people {
		switch res := results[i]; res.status {
		case http.StatusSeeOther:
			if f := c.flashTexts(); f != "Approval recorded; the run continues." {
				t.Errorf("confirmation %d: flash %q", i, f)
			}
			won++
			if got := app.ran(); len(got) != 1 || got[0] != `{"amount":`+[]string{"10", "20"}[i]+`,"order_id":"A1"}` {
				t.Errorf("the tool ran with %q, want the winner's amount once", got)
			}
		case http.StatusConflict:
			if got := res.doc(t).Find(`[data-testid="late-decision-text"]`).Text(); !strings.Contains(got, "Approved by") {
				t.Errorf("confirmation %d: the page says %q, want who approved first", i, strings.Join(strings.Fields(got), " "))
			}
		default:
			t.Fatalf("confirmation %d: %d", i, res.status)
		}
	}
	if won != 1 {
		t.Fatalf("%d confirmations won, want exactly one", won)
	}
}
