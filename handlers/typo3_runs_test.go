package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/typo3/extruns/extrunstest"
	"runsdesk/views"
)

// typo3Backend is the TYPO3 backend address of the test apps that list the extension's runs.
const typo3Backend = "https://cms.example.com/typo3/"

// typo3Fixture names the runs a TYPO3 site's table holds in the tests, by what they show.
var typo3Fixture = []struct {
	name string
	row  extrunstest.Row
}{
	{"sealed", extrunstest.Row{Status: "waiting_for_approval", ConfigurationIdentifier: "mailer", BeUser: 4, Crdate: 1_700_000_100, Tstamp: 1_700_000_160,
		SuspendedState: "nrv1:c2VhbGVkIGJ5IHRoZSBleHRlbnNpb24"}},
	{"sealed-legacy", extrunstest.Row{Status: "waiting_for_input", ConfigurationIdentifier: "mailer", Crdate: 1_700_000_200, SuspendedState: "v2:b2xkZXI"}},
	{"approval", extrunstest.Row{Status: "waiting_for_approval", ConfigurationIdentifier: "refunds", BeUser: 9, Crdate: 1_700_000_300, Tstamp: 1_700_000_330,
		SuspendedState: `{"messages":[],"pendingCalls":[{"id":"call_1","type":"function","function":{"name":"refund_order","arguments":{"order":"A-17","amount":"<12.50>"}}}],"inputToolName":null,"inputSchema":[]}`}},
	{"input", extrunstest.Row{Status: "waiting_for_input", ConfigurationIdentifier: "travel", BeUser: 9, Crdate: 1_700_000_400,
		SuspendedState: `{"messages":[],"pendingCalls":[{"id":"call_2","type":"function","function":{"name":"ask_city","arguments":{"hint":"north"}}}],` +
			`"inputToolName":"ask_city","inputSchema":{"type":"object","properties":{"city":{"type":"string","title":"City"},` +
			`"mode":{"type":"string","enum":["rail","car"]},"notes":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"}}},"minItems":1}},"required":["city"]}}`}},
	{"corrupt", extrunstest.Row{Status: "waiting_for_approval", ConfigurationIdentifier: "refunds", Crdate: 1_700_000_500,
		SuspendedState: `{"messages":[],"pendingCalls":[{"id":"call_3","function":{"name":"refund_order","arguments":"{\"order\":1}"}}]}`}},
	{"completed", extrunstest.Row{Status: "completed", ConfigurationIdentifier: "refunds", Crdate: 1_700_000_050}},
}

// newTYPO3App is a test app listing the runs of typo3Fixture, with their uuids by name.
func newTYPO3App(t *testing.T) (*testApp, map[string]string) {
	t.Helper()
	app := newTestApp(t, appOptions{typo3Runs: true, typo3Backend: typo3Backend})
	uuids := map[string]string{}
	for i, f := range typo3Fixture {
		f.row.UUID = fmt.Sprintf("7d3c0a52-0000-4000-8000-%012d", i+1)
		uuids[f.name] = f.row.UUID
		extrunstest.Insert(t, app.typo3, f.row)
	}
	return app, uuids
}

// mainOf is the page's <main>, failing the test when it holds a form that posts.
func mainOf(t *testing.T, what string, res response) *goquery.Selection {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("%s: %d, want 200: %.300s", what, res.status, res.body)
	}
	main := res.doc(t).Find("main")
	if n := main.Find("form, button, [type=submit]").Length(); n > 0 {
		t.Errorf("%s: %d forms or buttons, want none (the extension's runs are decided in TYPO3)", what, n)
	}
	banner := main.Find(`[data-testid="typo3-banner"]`)
	if !strings.Contains(banner.Text(), "decide it in TYPO3") || banner.Find(`a[href="`+typo3Backend+`"]`).Length() != 1 {
		t.Errorf("%s: banner %q, want it linked to the TYPO3 backend", what, banner.Text())
	}
	return main
}

// TestTYPO3RunPages: any signed-in person lists the extension's waiting runs, oldest first and
// paged, and opens each: a sealed state shown as sealed by the extension, the pending calls
// with their arguments, an input form with every control disabled, a corrupt state refused
// with its reason, a finished run without pending calls; an unknown uuid is 404. Nothing on
// them posts, and the site's table is exactly as it was.
func TestTYPO3RunPages(t *testing.T) {
	t.Parallel()
	app, uuids := newTYPO3App(t)
	before := extrunstest.Dump(t, app.typo3)
	sam := app.login(runtime.RoleSupport)

	list := mainOf(t, "list", sam.get(views.TYPO3RunsPath))
	var order []string
	list.Find(`[data-testid="typo3-run-row"]`).Each(func(_ int, s *goquery.Selection) { order = append(order, s.AttrOr("data-run", "")) })
	if want := []string{uuids["sealed"], uuids["sealed-legacy"], uuids["approval"], uuids["input"], uuids["corrupt"]}; strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("listed %v, want the waiting runs oldest first %v", order, want)
	}
	if row := list.Find(`[data-run="` + uuids["sealed"] + `"]`).Text(); !strings.Contains(row, "mailer") || !strings.Contains(row, "backend user 4") || !strings.Contains(row, "Waiting for approval") {
		t.Errorf("sealed run's row: %q", row)
	}
	nav := sam.get(views.TYPO3RunsPath).doc(t).Find(`[data-testid="nav-typo3-runs"]`)
	if nav.AttrOr("href", "") != views.TYPO3RunsPath || nav.AttrOr("aria-current", "") != "page" {
		t.Errorf("navigation entry: %v", nav.Nodes)
	}

	page := mainOf(t, "list page 1", sam.get(views.TYPO3RunsPath+"?per=2"))
	next := page.Find(`[data-testid="pager-next"]`).AttrOr("href", "")
	if page.Find(`[data-testid="typo3-run-row"]`).Length() != 2 || !strings.HasPrefix(next, views.TYPO3RunsPath+"?") {
		t.Fatalf("page 1 of 2: next %q", next)
	}
	page2 := mainOf(t, "list page 2", sam.get(next))
	if got := page2.Find(`[data-testid="typo3-run-row"]`).First().AttrOr("data-run", ""); got != uuids["approval"] {
		t.Errorf("page 2 starts with %s, want the approval run", got)
	}
	if res := sam.get(views.TYPO3RunsPath + "?after=x"); res.status != http.StatusBadRequest {
		t.Errorf("a bad page cursor: %d, want 400", res.status)
	}
	if got := mainOf(t, "after a run without crdate", sam.get(views.TYPO3RunsPath+"?after=0-1")).Find(`[data-testid="typo3-run-row"]`).Length(); got != 5 {
		t.Errorf("the page after a run created at 0 lists %d runs, want 5", got)
	}

	for _, name := range []string{"sealed", "sealed-legacy"} {
		run := mainOf(t, name, sam.get(views.TYPO3RunPath(uuids[name])))
		if got := run.Find(`[data-testid="typo3-run-sealed"]`).Text(); !strings.Contains(got, "sealed by the TYPO3 extension") {
			t.Errorf("%s: %q, want it shown as sealed by the extension", name, got)
		}
		if run.Find(".alert--error, [data-testid=pending-call]").Length() != 0 {
			t.Errorf("%s: shown as an error or with calls", name)
		}
	}
	sealed := mainOf(t, "sealed", sam.get(views.TYPO3RunPath(uuids["sealed"])))
	if got := sealed.Find(`[data-testid="typo3-run-owner"]`).Text() + sealed.Find(`[data-testid="typo3-run-configuration"]`).Text(); got != "backend user 4mailer" {
		t.Errorf("sealed run's owner and configuration: %q", got)
	}
	if sealed.Find(`[data-testid="typo3-run-since"] time`).AttrOr("datetime", "") != "2023-11-14T22:16:00Z" {
		t.Errorf("waiting since: %v, want the row's last change", sealed.Find(`[data-testid="typo3-run-since"]`).Text())
	}

	approval := mainOf(t, "approval", sam.get(views.TYPO3RunPath(uuids["approval"])))
	call := approval.Find(`[data-testid="pending-call"]`)
	if call.Length() != 1 || call.Find(`[data-testid="call-tool"]`).Text() != "refund_order" ||
		!strings.Contains(call.Find(`[data-testid="call-arguments"]`).Text(), `"amount": "<12.50>"`) {
		t.Errorf("approval's pending call: %q", call.Text())
	}

	input := mainOf(t, "input", sam.get(views.TYPO3RunPath(uuids["input"])))
	form := input.Find(`fieldset[disabled][data-testid="typo3-run-form"]`)
	if form.Length() != 1 || input.Find(`[data-testid="typo3-run-input"]`).AttrOr("data-tool", "") != "ask_city" {
		t.Fatalf("input run: no disabled form for ask_city: %s", input.Text())
	}
	if n := form.Find("input, select, textarea").Length(); n < 3 {
		t.Errorf("the input form has %d controls, want the schema's", n)
	}
	if input.Find("input, select, textarea").Length() != form.Find("input, select, textarea").Length() {
		t.Errorf("a control outside the disabled fieldset")
	}
	if input.Find(`[data-testid="call-tool"]`).Text() != "ask_city" {
		t.Errorf("input run's pending call not shown")
	}

	corrupt := mainOf(t, "corrupt", sam.get(views.TYPO3RunPath(uuids["corrupt"])))
	if got := corrupt.Find(`[data-testid="typo3-run-unreadable"]`).Text(); !strings.Contains(got, "arguments are not an object") {
		t.Errorf("corrupt run: %q, want the reason it was refused", got)
	}
	if corrupt.Find(`[data-testid="pending-call"]`).Length() != 0 {
		t.Errorf("corrupt run: calls guessed from a refused state")
	}

	completed := mainOf(t, "completed", sam.get(views.TYPO3RunPath(uuids["completed"])))
	if completed.Find(`[data-testid="typo3-run-pending"], [data-testid="typo3-run-since"]`).Length() != 0 ||
		completed.Find(`[data-testid="status-badge"]`).AttrOr("data-status", "") != "completed" {
		t.Errorf("completed run: %q", completed.Text())
	}

	for _, path := range []string{views.TYPO3RunPath("7d3c0a52-0000-4000-8000-999999999999"), views.TYPO3RunPath("not-a-run")} {
		if res := sam.get(path); res.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, res.status)
		}
	}
	if after := extrunstest.Dump(t, app.typo3); after != before {
		t.Errorf("the TYPO3 site's table changed:\nbefore %s\nafter %s", before, after)
	}
}

// TestTYPO3RunPagesPassTheNuHTMLChecker: the list and every kind of run page.
func TestTYPO3RunPagesPassTheNuHTMLChecker(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	app, uuids := newTYPO3App(t)
	ada := app.login(runtime.RoleAdmin)
	pages := map[string]string{"typo3-runs": ada.get(views.TYPO3RunsPath).body,
		"typo3-runs-last-page": ada.get(views.TYPO3RunsPath + "?after=1800000000-1").body}
	for name, uuid := range uuids {
		pages["typo3-run-"+name] = ada.get(views.TYPO3RunPath(uuid)).body
	}
	checkMarkup(t, pages)
}

// TestTYPO3RunsOnlyWhenConfigured: without Config.TYPO3Runs the routes do not exist and the
// navigation does not offer them.
func TestTYPO3RunsOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	ada := app.login(runtime.RoleAdmin)
	for _, path := range []string{views.TYPO3RunsPath, views.TYPO3RunPath("7d3c0a52-0000-4000-8000-000000000001")} {
		if res := ada.get(path); res.status != http.StatusNotFound {
			t.Errorf("%s without TYPO3Runs: %d, want 404", path, res.status)
		}
	}
	if ada.get("/runs").doc(t).Find(`[data-testid="nav-typo3-runs"]`).Length() != 0 {
		t.Error("the navigation offers TYPO3 runs without TYPO3Runs")
	}
}

func TestCheckBackendURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", typo3Backend, "http://localhost:8080/typo3"} {
		if err := checkBackendURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"javascript:alert(1)", "/typo3/", "cms.example.com", "https://user:pw@cms.example.com/", "ftp://cms.example.com/"} {
		err := checkBackendURL(bad)
		if err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: %v, want refused without quoting it", bad, err)
		}
	}
}
