package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

// deskSecret is a value the model puts into tool arguments: the pending call view shows it
// (escaped), the timeline never does.
const deskSecret = "TOPSECRET-7f3a9c"

// deskXSS are markup payloads in tool arguments; they must render as text.
const deskXSS = `<script>alert(1)</script><img src=x onerror=alert(1)>`

// deskTool is an in-process read-only tool.
type deskTool struct{ name string }

func (t deskTool) Name() string                { return t.name }
func (t deskTool) Description() string         { return "desk test tool " + t.name }
func (t deskTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t deskTool) Execute(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok from " + t.name}, nil
}

// deskMailTool needs approval and previews what it would do.
type deskMailTool struct{ deskTool }

func (deskMailTool) RequiresApproval() bool { return true }
func (deskMailTool) Preview(context.Context, tool.Call) ([]string, error) {
	return []string{"Would send one mail to the operations team."}, nil
}

// deskWriteTool declares a write (so it needs approval) and has no preview.
type deskWriteTool struct {
	deskTool
	effect    tool.Effect
	adminOnly bool
}

func (t deskWriteTool) Effect() tool.Effect { return t.effect }
func (t deskWriteTool) AdminOnly() bool     { return t.adminOnly }

// deskAskTool needs typed input.
type deskAskTool struct{ deskTool }

func (deskAskTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","required":["city"],"properties":{"city":{"type":"string","title":"City","minLength":2}}}`)
}

func deskCall(name, args string) model.ScriptedCall {
	return model.ScriptedCall{Name: name, Arguments: json.RawMessage(args)}
}

// deskArgs are the arguments of the mail call: a secret and markup.
var deskArgs = `{"to": "ops@example.com", "body": "` + deskSecret + ` ` + deskXSS + `"}`

// deskLongArgs are arguments long enough to be collapsed.
var deskLongArgs = func() string {
	m := map[string]string{}
	for _, k := range strings.Split("a b c d e f g h i j k l m n o p", " ") {
		m["field_"+k] = "value " + k
	}
	b, _ := json.Marshal(m)
	return string(b)
}()

func deskConfiguration(id, name string, secondApprover bool, turns ...model.Turn) runtime.Configuration {
	return runtime.Configuration{Identifier: id, Name: name, MaxIterations: 5, RequireSecondApprover: secondApprover,
		Tools:    []string{"lookup", "send_mail", "wipe_cache", "issue_refund", "ask_city"},
		Provider: model.Settings{Kind: "scripted", Script: append(turns, model.Turn{Content: "All done."})}}
}

// newDeskApp is a test app with the desk's tools and configurations:
//
//	mail      send_mail (approval, preview) with deskArgs
//	wipe      wipe_cache (idempotent write, no preview)
//	refund    issue_refund (non-idempotent write, admin-only)
//	ask       ask_city (typed input)
//	foureyes  send_mail, second approver required
//	long      send_mail with long arguments
//	plain     no tool call: completes
func newDeskApp(t *testing.T) *testApp {
	t.Helper()
	return newDeskAppWith(t, appOptions{})
}

// newDeskAppWith is newDeskApp with opts (its tools and configurations are the desk's).
func newDeskAppWith(t *testing.T, opts appOptions) *testApp {
	t.Helper()
	tools := []tool.Tool{
		deskTool{"lookup"}, deskMailTool{deskTool{"send_mail"}},
		deskWriteTool{deskTool: deskTool{"wipe_cache"}, effect: tool.EffectIdempotentWrite},
		deskWriteTool{deskTool: deskTool{"issue_refund"}, effect: tool.EffectNonIdempotentWrite, adminOnly: true},
		deskAskTool{deskTool{"ask_city"}},
	}
	cfgs := []runtime.Configuration{
		deskConfiguration("mail", "Mail assistant", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", deskArgs)}}),
		deskConfiguration("wipe", "Cache keeper", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("wipe_cache", `{"scope":"all"}`)}}),
		deskConfiguration("refund", "Refund assistant", false, model.Turn{ToolCalls: []model.ScriptedCall{
			deskCall("lookup", `{"order":"A1"}`), deskCall("issue_refund", `{"order":"A1","amount":5}`)}}),
		deskConfiguration("ask", "City finder", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("ask_city", `{"city":"ModelGuess"}`)}}),
		deskConfiguration("foureyes", "Four eyes mail", true, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", deskArgs)}}),
		deskConfiguration("long", "Long mail", false, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", deskLongArgs)}}),
		deskConfiguration("plain", "Plain talk", false),
	}
	opts.tools, opts.configurations = tools, cfgs
	return newTestApp(t, opts)
}

// deskActor is the runtime actor of a test user.
func (a *testApp) deskActor(role runtime.Role) runtime.Actor {
	return runtime.Actor{UserUID: a.uids[role], Name: testUsers[role], Role: role}
}

// pause starts a run of configuration as role and executes it until it waits or finishes;
// it returns the run's uuid.
func (a *testApp) pause(role runtime.Role, configuration string) string {
	a.t.Helper()
	return a.pauseAs(a.deskActor(role), configuration)
}

// pauseAs is pause with the run started by actor.
func (a *testApp) pauseAs(actor runtime.Actor, configuration string) string {
	a.t.Helper()
	ctx := context.Background()
	run, err := a.rt.Start(ctx, actor, configuration, "please help")
	if err != nil {
		a.t.Fatalf("start %s: %v", configuration, err)
	}
	for i := 0; a.row(run.UUID).Status == runtime.StatusQueued; i++ {
		if i > 10 {
			a.t.Fatalf("run %s stays queued", run.UUID)
		}
		if _, err := a.rt.RunOnce(ctx); err != nil {
			a.t.Fatalf("run once: %v", err)
		}
	}
	return run.UUID
}

// row returns the stored run after every dispatched segment has ended.
func (a *testApp) row(uuid string) runtime.Run {
	a.t.Helper()
	a.rt.Wait()
	r, err := a.store.FindByUUID(context.Background(), uuid)
	if err != nil {
		a.t.Fatalf("find %s: %v", uuid, err)
	}
	return r
}

// storedEvents returns the run's events.
func (a *testApp) storedEvents(uuid string) []runtime.Event {
	a.t.Helper()
	evs, err := a.store.Events(context.Background(), a.row(uuid).UID, -1)
	if err != nil {
		a.t.Fatal(err)
	}
	return evs
}

// exec runs SQL against the test database.
func (a *testApp) exec(query string, args ...any) {
	a.t.Helper()
	if _, err := a.pool.ExecContext(context.Background(), query, args...); err != nil {
		a.t.Fatalf("%s: %v", query, err)
	}
}

// approvalFormOf returns the approval form the client's run page shows for uuid, with
// decision set; the test fails if there is none.
func (c *client) approvalFormOf(uuid, decision string) url.Values {
	c.t.Helper()
	res := c.get("/runs/" + uuid)
	form := res.doc(c.t).Find(`[data-testid="approval-form"]`)
	if res.status != http.StatusOK || form.Length() != 1 {
		c.t.Fatalf("run page of %s: status %d, %d approval forms, want 200 and one", uuid, res.status, form.Length())
	}
	v := url.Values{"decision": {decision}}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		v.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	return v
}

// flashTexts returns the flash messages the client's next page shows, joined by " | ".
func (c *client) flashTexts() string {
	c.t.Helper()
	var out []string
	c.get("/account/password").doc(c.t).Find(`[data-testid="flash"] span:not(.alert__icon)`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimSpace(s.Text()))
	})
	return strings.Join(out, " | ")
}

// rowsOf returns the run uuids of the inbox rows at path, in order.
func (c *client) rowsOf(path string) []string {
	c.t.Helper()
	res := c.get(path)
	if res.status != http.StatusOK {
		c.t.Fatalf("GET %s: %d; body %.300s", path, res.status, res.body)
	}
	var out []string
	res.doc(c.t).Find(`[data-testid="inbox-row"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.AttrOr("data-run", ""))
	})
	return out
}

func wantSeeOther(t *testing.T, what string, res response, location string) {
	t.Helper()
	if res.status != http.StatusSeeOther || res.header.Get("Location") != location {
		t.Fatalf("%s: %d Location %q, want 303 to %q; body %.300s", what, res.status, res.header.Get("Location"), location, res.body)
	}
}
