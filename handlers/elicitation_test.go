package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime"
	"runsdesk/runtime/tool/mcptest"
	"runsdesk/views"
)

// elicitWorld is a test app whose configuration "refund" calls a remote tool of a real MCP
// server that asks for an amount in the middle of the call.
type elicitWorld struct {
	app     *testApp
	mu      sync.Mutex
	answers []string
}

func (w *elicitWorld) got() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.answers...)
}

func newElicitWorld(t *testing.T) *elicitWorld {
	t.Helper()
	requested := map[string]any{"type": "object", "required": []any{"amount"},
		"properties": map[string]any{"amount": map[string]any{"type": "integer", "minimum": 1, "title": "Amount"}}}
	return newAskingWorld(t, "How much should <b>we</b> refund?", requested)
}

// newAskingWorld is an elicitWorld whose server asks with message and the requested schema.
func newAskingWorld(t *testing.T, message string, requested map[string]any) *elicitWorld {
	t.Helper()
	w := &elicitWorld{}
	srv := mcptest.New(t, mcptest.Tool{
		Tool: mcp.Tool{Name: "refund", Description: "Refund an order.", InputSchema: mcptest.ObjectSchema(nil),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		Handler: mcptest.Asking(message, requested, "opaque-1", func(a mcptest.Answer) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.answers = append(w.answers, a.String())
		}),
	})
	w.app = newTestApp(t, appOptions{configurations: []runtime.Configuration{inputConfiguration("refund", "crm_refund", `{}`)}})
	if _, err := w.app.store.UpsertTool(context.Background(), srv.Definition(t, "crm_refund", "refund", false)); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestElicitationWebForm: the card shows the server's message (escaped) and the requested
// schema as the form, with Decline and Cancel; an invalid submission re-renders with 422 and
// reaches no server; a valid one is accepted and the run completes; Decline and Cancel reach
// the server as decline and cancel.
func TestElicitationWebForm(t *testing.T) {
	t.Parallel()
	w := newElicitWorld(t)
	v := w.app.startRun(runtime.RoleReviewer, "refund")
	if v.Run.Status != runtime.StatusWaitingInput {
		t.Fatalf("status %s", v.Run.Status)
	}
	c := w.app.login(runtime.RoleReviewer)
	token, err := w.app.tokens.CreateToken(t.Context(), "ci", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	api := c.request(http.MethodGet, "/api/v1/runs/"+v.Run.UUID, nil, http.Header{"Authorization": {"Bearer " + token}})
	var got struct {
		Pending struct {
			Kind        string         `json:"kind"`
			InputSchema map[string]any `json:"input_schema"`
			Elicitation struct {
				Message   string `json:"message"`
				ExpiresAt int64  `json:"expires_at"`
			} `json:"elicitation"`
		} `json:"pending"`
	}
	if err := json.Unmarshal([]byte(api.body), &got); err != nil || got.Pending.Kind != "input" ||
		got.Pending.Elicitation.Message != "How much should <b>we</b> refund?" || got.Pending.Elicitation.ExpiresAt <= v.Run.SuspendedAt || got.Pending.InputSchema["required"] == nil {
		t.Fatalf("API run: %d %s (%v)", api.status, api.body, err)
	}
	page := c.get("/runs/" + v.Run.UUID)
	doc := page.doc(t)
	if got := strings.TrimSpace(doc.Find(`[data-testid="elicitation-message"]`).Text()); got != "How much should <b>we</b> refund?" {
		t.Fatalf("message %q", got)
	}
	if strings.Contains(page.body, "<b>we</b>") {
		t.Fatal("the server's message was not escaped")
	}
	if doc.Find(`input[name="input/amount"]`).Length() != 1 || doc.Find(`[data-testid="elicitation-decline"]`).Length() != 1 ||
		doc.Find(`[data-testid="elicitation-cancel"]`).Length() != 1 {
		t.Fatal("the form lacks the amount field or the Decline and Cancel buttons")
	}
	res := c.postForm(inputPath(v), submission(c, v, "k-bad", url.Values{"input/amount": {"0"}}))
	if res.status != http.StatusUnprocessableEntity || len(w.got()) != 0 {
		t.Fatalf("invalid: status %d, server answers %v", res.status, w.got())
	}
	wantSeeOtherToRun(t, "accept", c.postForm(inputPath(v), submission(c, v, "k-ok", url.Values{"input/amount": {"7"}})), v.Run.UUID)
	wantFlash(t, c, "Input submitted; the run continues.")
	wantStatus(t, w.app, v.Run.UUID, runtime.StatusCompleted)
	if got := w.got(); len(got) != 1 || got[0] != "accept 7 state-ok=true" {
		t.Fatalf("server answers %q", got)
	}
	for _, tt := range []struct{ action, flash string }{
		{"decline", "You declined the server's request for input; the run continues."},
		{"cancel", "You cancelled the server's request for input; the run continues."},
	} {
		v := w.app.startRun(runtime.RoleReviewer, "refund")
		form := submission(c, v, "k-"+tt.action, url.Values{"_elicitation": {tt.action}, "input/amount": {""}})
		wantSeeOtherToRun(t, tt.action, c.postForm(inputPath(v), form), v.Run.UUID)
		wantFlash(t, c, tt.flash)
		wantStatus(t, w.app, v.Run.UUID, runtime.StatusCompleted)
		if got := w.got(); got[len(got)-1] != tt.action+" <nil> state-ok=true" {
			t.Fatalf("server answers %q", got)
		}
		want := map[string]string{"decline": "declined by rita", "cancel": "cancelled by rita"}[tt.action]
		if page := c.get("/runs/" + v.Run.UUID); !strings.Contains(page.body, "The server&#39;s request for input was "+want) {
			t.Errorf("the timeline does not say the request was %s", want)
		}
	}
}

// confirmRequest is a remote server's request for input without fields: a confirmation.
var confirmRequest = map[string]any{"type": "object", "properties": map[string]any{}}

// TestElicitationConfirmation: a server's request without fields is a confirmation, through
// the real router: the card shows the server's message with Confirm, Decline and Cancel, and
// neither the card nor the inbox row says the state is unreadable; Confirm is a submission
// without values, sent as accept with no content, and Decline and Cancel reach the server as
// decline and cancel. A viewer who may not answer sees the message without buttons.
func TestElicitationConfirmation(t *testing.T) {
	t.Parallel()
	w := newAskingWorld(t, "Proceed with the refund?", confirmRequest)
	c := w.app.login(runtime.RoleReviewer)
	for _, tt := range []struct{ button, action, flash string }{
		{"input-submit", "accept", "Input submitted; the run continues."},
		{"elicitation-decline", "decline", "You declined the server's request for input; the run continues."},
		{"elicitation-cancel", "cancel", "You cancelled the server's request for input; the run continues."},
	} {
		v := w.app.startRun(runtime.RoleReviewer, "refund")
		if v.Run.Status != runtime.StatusWaitingInput {
			t.Fatalf("status %s", v.Run.Status)
		}
		doc := c.get("/runs/" + v.Run.UUID).doc(t)
		if got := strings.TrimSpace(doc.Find(`[data-testid="elicitation-message"]`).Text()); got != "Proceed with the refund?" {
			t.Fatalf("message %q", got)
		}
		for testid, label := range map[string]string{"input-submit": "Confirm", "elicitation-decline": "Decline", "elicitation-cancel": "Cancel"} {
			if got := strings.TrimSpace(doc.Find(`[data-testid="` + testid + `"]`).Text()); got != label {
				t.Errorf("button %s reads %q, want %q", testid, got, label)
			}
		}
		if n := doc.Find(`[data-testid="input-unreadable"], [data-testid="run-card-unreadable"], input[name^="input/"]`).Length(); n != 0 {
			t.Fatalf("the confirmation shows %d unreadable notes or fields", n)
		}
		if n := c.get("/runs").doc(t).Find(row(v.Run.UUID, `[data-testid="inbox-row-unreadable"]`)).Length(); n != 0 {
			t.Fatal("the inbox lists the confirmation as unreadable")
		}
		form := submission(c, v, "k-"+tt.action, url.Values{})
		if tt.action != "accept" {
			form.Set("_elicitation", tt.action)
		}
		wantSeeOtherToRun(t, tt.action, c.postForm(inputPath(v), form), v.Run.UUID)
		wantFlash(t, c, tt.flash)
		wantStatus(t, w.app, v.Run.UUID, runtime.StatusCompleted)
		if got := w.got(); got[len(got)-1] != tt.action+" <nil> state-ok=true" {
			t.Fatalf("server answers %q", got)
		}
	}
	v := w.app.startRun(runtime.RoleReviewer, "refund")
	doc := w.app.login(runtime.RoleSupport).get("/runs/" + v.Run.UUID).doc(t)
	if got := strings.TrimSpace(doc.Find(`[data-testid="elicitation-message"]`).Text()); got != "Proceed with the refund?" ||
		doc.Find(`[data-testid="input-submit"], [data-testid="elicitation-decline"], [data-testid="elicitation-cancel"]`).Length() != 0 {
		t.Fatalf("a viewer who may not answer sees message %q and buttons", got)
	}
}

// TestBrowserElicitationConfirmation: in the browser, each of Confirm, Decline and Cancel on a
// server's request without fields answers the server (accept, decline, cancel) and the run
// continues to completion.
func TestBrowserElicitationConfirmation(t *testing.T) {
	t.Parallel()
	w := newAskingWorld(t, "Proceed with the refund?", confirmRequest)
	b := newTab(t, w.app)
	b.signIn(runtime.RoleReviewer)
	for _, tt := range []struct{ button, label, action string }{
		{"input-submit", "Confirm", "accept"},
		{"elicitation-decline", "Decline", "decline"},
		{"elicitation-cancel", "Cancel", "cancel"},
	} {
		v := w.app.startRun(runtime.RoleReviewer, "refund")
		b.open(views.RunPath(v.Run.UUID))
		if tt.action == "accept" {
			b.screenshot("elicitation-confirmation")
		}
		button := `[data-testid="` + tt.button + `"]`
		if got := b.text(button); got != tt.label {
			t.Fatalf("button %s reads %q, want %q", tt.button, got, tt.label)
		}
		b.do("press "+tt.label, chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
		b.waitFor("the run completes", views.RunPath(v.Run.UUID), func() bool { return w.app.view(v.Run.UUID).Run.Status == runtime.StatusCompleted })
		if got := w.got(); len(got) == 0 || got[len(got)-1] != tt.action+" <nil> state-ok=true" {
			t.Fatalf("after %s the server answers %q", tt.label, got)
		}
	}
}
