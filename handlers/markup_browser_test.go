package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/views"
)

// The markup check runs the W3C Nu HTML Checker (npm package vnu-jar, run by Java 17) over
// every kind of page. `npm ci --prefix tools/vnu` installs the checker; RUNSDESK_VNU_JAR names
// another vnu.jar. Without Java or the jar the check skips, unless CI or
// RUNSDESK_REQUIRE_VNU is set (.ci/run sets it), which makes that a failure.

// vnuJarDefault is where `npm ci --prefix tools/vnu` puts the checker, from this package.
const vnuJarDefault = "../tools/vnu/node_modules/vnu-jar/build/dist/vnu.jar"

// vnuCommand returns the java binary and the checker's jar, or skips (fails when required).
func vnuCommand(t *testing.T) (java, jar string) {
	t.Helper()
	jar = os.Getenv("RUNSDESK_VNU_JAR")
	if jar == "" {
		jar = vnuJarDefault
	}
	java, err := exec.LookPath("java")
	_, jarErr := os.Stat(jar)
	if err == nil && jarErr == nil {
		return java, jar
	}
	missing := "java (apt-get install -y openjdk-17-jre-headless)"
	if err == nil {
		missing = jar + " (npm ci --prefix tools/vnu)"
	}
	if os.Getenv("CI") != "" || os.Getenv("RUNSDESK_REQUIRE_VNU") != "" {
		t.Fatalf("the Nu HTML Checker is required here (CI or RUNSDESK_REQUIRE_VNU is set) but %s is missing", missing)
	}
	t.Skipf("markup check skipped: %s is missing; set RUNSDESK_REQUIRE_VNU=1 to make this a failure", missing)
	return "", ""
}

// vnuMessage is one message of the checker's JSON report.
type vnuMessage struct {
	Type     string `json:"type"`
	SubType  string `json:"subType"`
	URL      string `json:"url"`
	LastLine int    `json:"lastLine"`
	Message  string `json:"message"`
	Extract  string `json:"extract"`
}

// checkMarkup writes pages (name → HTML) to files and runs the checker once over all of
// them; it fails with every error, named by page and line.
func checkMarkup(t *testing.T, pages map[string]string) {
	t.Helper()
	java, jar := vnuCommand(t)
	dir := t.TempDir()
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	args := []string{"-jar", jar, "--errors-only", "--format", "json", "--stdout"}
	for _, name := range names {
		file := filepath.Join(dir, name+".html")
		if err := os.WriteFile(file, []byte(pages[name]), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, file)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(java, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var report struct {
		Messages []vnuMessage `json:"messages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("the checker's report could not be read (%v, run: %v):\n%s\n%s", err, runErr, stdout.String(), stderr.String())
	}
	for _, m := range report.Messages {
		if m.Type != "error" && m.SubType != "fatal" {
			continue
		}
		page := strings.TrimSuffix(filepath.Base(m.URL), ".html")
		t.Errorf("%s line %d: %s\n\t%s", page, m.LastLine, m.Message, strings.TrimSpace(m.Extract))
	}
	if t.Failed() {
		return
	}
	if runErr != nil {
		t.Fatalf("the checker failed without reporting an error: %v\n%s", runErr, stderr.String())
	}
	t.Logf("the Nu HTML Checker found no error in %d pages: %s", len(names), strings.Join(names, ", "))
}

// markupPages collects every kind of page the desk shows, each as a browser gets it.
type markupPages struct {
	t     *testing.T
	pages map[string]string
}

// add fetches path with c and records the page under name, requiring status.
func (m *markupPages) add(name string, res response, status int) {
	m.t.Helper()
	if res.status != status {
		m.t.Fatalf("%s: status %d, want %d: %.300s", name, res.status, status, res.body)
	}
	if !strings.Contains(res.header.Get("Content-Type"), "text/html") {
		m.t.Fatalf("%s: Content-Type %q is not HTML", name, res.header.Get("Content-Type"))
	}
	m.pages[name] = res.body
}

func TestBrowserPagesPassTheNuHTMLChecker(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	app := newDeskApp(t)
	m := &markupPages{t: t, pages: map[string]string{}}

	anon := app.newClient()
	m.add("login", anon.get("/login"), http.StatusOK)
	m.add("login-failed", anon.postForm("/login", url.Values{"username": {"ada"}, "password": {"wrong"}, "_csrf": {anon.csrfFrom("/login")}}),
		http.StatusUnprocessableEntity)

	approval := app.pause(runtime.RoleReviewer, "mail")
	fourEyes := app.pause(runtime.RoleReviewer, "foureyes")
	input := app.pause(runtime.RoleReviewer, "ask")
	invalid := app.pause(runtime.RoleReviewer, "ask")
	long := app.pause(runtime.RoleReviewer, "long")
	completed := app.pause(runtime.RoleReviewer, "plain")
	cancelled := app.pause(runtime.RoleReviewer, "mail")
	if _, err := app.rt.Cancel(t.Context(), app.deskActor(runtime.RoleReviewer), cancelled); err != nil {
		t.Fatal(err)
	}
	queued, err := app.rt.Start(t.Context(), app.deskActor(runtime.RoleAdmin), "plain", "hi")
	if err != nil {
		t.Fatal(err)
	}
	failed := app.pause(runtime.RoleReviewer, "plain")
	app.exec(`UPDATE tx_nrllm_agentrun SET status = 'failed', error_class = 'provider_failed' WHERE uuid = ?`, failed)
	running, err := app.rt.Start(t.Context(), app.deskActor(runtime.RoleAdmin), "plain", "hi")
	if err != nil {
		t.Fatal(err)
	}
	app.exec(`UPDATE tx_nrllm_agentrun SET status = 'running' WHERE uuid = ?`, running.UUID)

	ada := app.login(runtime.RoleAdmin)
	sam := app.login(runtime.RoleSupport)
	m.add("inbox", ada.get("/runs"), http.StatusOK)
	m.add("inbox-read-only", sam.get("/runs"), http.StatusOK)
	m.add("inbox-filtered-empty", ada.get("/runs?kind=input&tool=no_such_tool"), http.StatusOK)
	m.add("inbox-select-all", ada.get("/runs?tool=send_mail&select=all"), http.StatusOK)
	m.add("recent", ada.get("/runs/recent"), http.StatusOK)
	m.add("queue-no-decisions", ada.get(views.QueuePath), http.StatusOK)
	m.add("configuration", ada.get(views.ConfigurationPath), http.StatusOK)
	m.add("new-run", ada.get("/runs/new"), http.StatusOK)
	m.add("new-run-rejected", ada.postForm("/runs", url.Values{"_csrf": {ada.token()}, "configuration": {"nope"}, "prompt": {" "}}),
		http.StatusUnprocessableEntity)
	m.add("home", ada.get("/"), http.StatusOK)
	m.add("password", ada.get("/account/password"), http.StatusOK)
	m.add("account", ada.get(views.AccountPath), http.StatusOK)
	app.login(runtime.RoleAdmin)
	m.add("sessions", ada.get(views.SessionsPath), http.StatusOK)
	m.add("sessions-only-this", sam.get(views.SessionsPath), http.StatusOK)
	m.add("account-error", ada.postForm(views.AccountTimeZonePath, url.Values{"_csrf": {ada.token()}, "time_zone": {"Mars/Olympus"}}),
		http.StatusUnprocessableEntity)
	m.add("password-error", ada.postForm("/account/password", url.Values{"_csrf": {ada.token()}, "current": {"wrong"}, "new": {"x"}, "confirm": {"y"}}),
		http.StatusUnprocessableEntity)
	for name, uuid := range map[string]string{"run-waiting-approval": approval, "run-four-eyes": fourEyes, "run-waiting-input": input,
		"run-long-arguments": long, "run-completed": completed, "run-cancelled": cancelled, "run-queued": queued.UUID, "run-running": running.UUID, "run-failed": failed} {
		m.add(name, ada.get(views.RunPath(uuid)), http.StatusOK)
	}
	m.add("run-waiting-input-read-only", sam.get(views.RunPath(input)), http.StatusOK)
	m.add("cancel-confirm", ada.get(views.RunPath(approval)+"/cancel"), http.StatusOK)

	form := ada.get(views.RunPath(invalid)).doc(t).Find(`#` + views.InputFormID(invalid))
	posted := url.Values{"_csrf": {ada.token()}, "input/city": {"x"}}
	for _, name := range []string{views.FormFieldDigest, views.FormFieldIdempotencyKey} {
		posted.Set(name, form.Find(`[name="`+name+`"]`).AttrOr("value", ""))
	}
	m.add("run-input-rejected", ada.postForm(views.RunPath(invalid)+"/input", posted), http.StatusUnprocessableEntity)

	decided := app.pause(runtime.RoleReviewer, "mail")
	wantSeeOther(t, "approve", ada.postForm(views.RunPath(decided)+"/approval", ada.approvalFormOf(decided, "approve")), views.RunPath(decided))
	m.add("queue", ada.get(views.QueuePath), http.StatusOK)
	m.add("queue-reviewer", app.login(runtime.RoleReviewer).get(views.QueuePath), http.StatusOK)

	m.add("error-404", ada.get("/runs/0a6e2b58-1234-4abc-9def-000000000000"), http.StatusNotFound)
	m.add("error-403", sam.get("/runs/new"), http.StatusForbidden)
	m.add("error-404-anonymous", anon.get("/no-such-page"), http.StatusNotFound)

	checkMarkup(t, m.pages)
}

func TestBrowserFormWidgetsPassTheNuHTMLChecker(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	ask := &recordingTool{name: "ask_all", schema: markupWidgetSchema}
	app := newTestApp(t, appOptions{tools: []tool.Tool{ask},
		configurations: []runtime.Configuration{inputConfiguration("all", "ask_all", `{}`)}})
	uuid := app.startRun(runtime.RoleReviewer, "all").Run.UUID
	ada := app.login(runtime.RoleAdmin)
	m := &markupPages{t: t, pages: map[string]string{}}
	m.add("form-widgets", ada.get(views.RunPath(uuid)), http.StatusOK)
	m.add("form-widgets-read-only", app.login(runtime.RoleSupport).get(views.RunPath(uuid)), http.StatusOK)
	form := ada.get(views.RunPath(uuid)).doc(t).Find(`#` + views.InputFormID(uuid))
	posted := url.Values{"_csrf": {ada.token()}, "input/lines": {"1"}, "input/lines/0/sku": {"A-1"}, views.FormFieldRows: {"add /lines"}}
	for _, name := range []string{views.FormFieldDigest, views.FormFieldIdempotencyKey} {
		posted.Set(name, form.Find(`[name="`+name+`"]`).AttrOr("value", ""))
	}
	m.add("form-widgets-row-added", ada.postForm(views.RunPath(uuid)+"/input", posted), http.StatusOK)
	posted.Del(views.FormFieldRows)
	m.add("form-widgets-rejected", ada.postForm(views.RunPath(uuid)+"/input", posted), http.StatusUnprocessableEntity)
	checkMarkup(t, m.pages)
}

// markupWidgetSchema has one property per widget the input form offers.
const markupWidgetSchema = `{"type":"object","required":["name","method"],"properties":{
	"name":{"type":"string","title":"Name","description":"As on the card.","minLength":2,"pattern":"^[A-Za-z ]+$"},
	"story":{"type":"string","maxLength":5000},
	"amount":{"type":"number","minimum":0.5,"exclusiveMaximum":100,"multipleOf":0.5},
	"count":{"type":"integer","minimum":1},
	"agree":{"type":"boolean","default":true},
	"method":{"type":"string","enum":["card","bank"]},
	"reason":{"type":"string","oneOf":[{"const":"original_payment","title":"Refund to the original payment"},{"const":"credit","title":"Store credit"}]},
	"day":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"clock":{"type":"string","format":"time"},
	"mail":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"address":{"type":"object","required":["street"],"properties":{"street":{"type":"string"},"zip":{"type":"string"}}},
	"notes":{"type":"array","items":{"type":"string"},"maxItems":3},
	"colours":{"type":"array","items":{"enum":["red","green"]}},
	"channels":{"type":"array","items":{"anyOf":[{"const":"mail","title":"E-mail"},{"const":"sms","title":"Text message"}]}},
	"lines":{"type":"array","minItems":1,"maxItems":4,"items":{"type":"object","required":["sku"],"properties":{
		"sku":{"type":"string"},"qty":{"type":"integer","minimum":1},"gift":{"type":"boolean"}}}},
	"blob":{"oneOf":[{"type":"object"},{"type":"array"}]}}}`

// TestTranscriptMarkup: the run page with its tabs and the Transcript tab — in full, withheld
// from support, and of a metadata run — pass the Nu HTML Checker.
func TestTranscriptMarkup(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	app := transcriptApp(t)
	full := app.pause(runtime.RoleReviewer, string(runtime.PrivacyFull))
	meta := app.pause(runtime.RoleReviewer, string(runtime.PrivacyMetadata))
	ada := app.login(runtime.RoleAdmin)
	m := &markupPages{t: t, pages: map[string]string{}}
	m.add("run-with-tabs", ada.get(views.RunPath(full)), http.StatusOK)
	m.add("transcript-full", ada.get(views.TranscriptPath(full)), http.StatusOK)
	m.add("transcript-support", app.login(runtime.RoleSupport).get(views.TranscriptPath(full)), http.StatusOK)
	m.add("transcript-metadata", ada.get(views.TranscriptPath(meta)), http.StatusOK)
	checkMarkup(t, m.pages)
}

// TestAdminPagesPassTheNuHTMLChecker checks the people and API token pages: listed, showing a
// secret once, and with refused forms.
func TestAdminPagesPassTheNuHTMLChecker(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	app := newTestApp(t, appOptions{})
	ada := app.login(runtime.RoleAdmin)
	m := &markupPages{t: t, pages: map[string]string{}}
	person := func(username, role string) url.Values {
		return url.Values{"_csrf": {ada.token()}, "username": {username}, "role": {role}, "email": {username + "@example.com"}}
	}
	m.add("people", ada.get(views.AdminPeoplePath), http.StatusOK)
	m.add("people-added", ada.postForm(views.AdminPeoplePath, person("nina", "reviewer")), http.StatusOK)
	m.add("people-add-refused", ada.postForm(views.AdminPeoplePath, person("nina", "root")), http.StatusUnprocessableEntity)
	m.add("people-last-admin", ada.postForm(views.PersonActionPath("role"), person("ada", "support")), http.StatusUnprocessableEntity)
	m.add("people-password-reset", ada.postForm(views.PersonActionPath("password"), person("nina", "")), http.StatusOK)

	token := func(name, expires string) url.Values {
		return url.Values{"_csrf": {ada.token()}, "name": {name}, "expires": {expires}, "scopes": {"run", "read"}}
	}
	m.add("tokens-empty", ada.get(views.AdminTokensPath), http.StatusOK)
	m.add("tokens-created", ada.postForm(views.AdminTokensPath, token("ci", "90d")), http.StatusOK)
	m.add("tokens-create-refused", ada.postForm(views.AdminTokensPath, token("nightly", "soon")), http.StatusUnprocessableEntity)
	m.add("tokens", ada.get(views.AdminTokensPath), http.StatusOK)
	checkMarkup(t, m.pages)
}
