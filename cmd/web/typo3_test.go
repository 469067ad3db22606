package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runsdesk/typo3/backend/backendtest"
	"runsdesk/typo3/roles"
	"runsdesk/typo3/typo3test"
)

// typo3Site is a TYPO3 12 site's database as runsdesk finds it: backend groups and accounts
// whose passwords PHP hashed as TYPO3 does, and runs of the nr-llm extension in every state
// runsdesk's workers, reaper and expirer act on.
type typo3Site struct {
	dsn  string
	pool *sql.DB
}

// The site's people: password, and what each account is.
const (
	typo3Password = "editor password of some length 42"
	typo3Editor   = "Erika"   // in Editors, mapped to reviewer
	typo3Admin    = "siteadm" // a TYPO3 admin
	typo3Disabled = "dora"    // in Editors, disabled
	typo3Expired  = "exi"     // in Editors, endtime passed
	typo3Unmapped = "ulla"    // in a group runsdesk does not map
	typo3MFA      = "mfa"     // in Editors, TYPO3's own MFA on
)

func newTYPO3Site(t *testing.T) typo3Site {
	t.Helper()
	site := typo3test.NewSite(t)
	pool := site.Site
	editors := backendtest.InsertGroup(t, pool, roles.Group{Title: "Editors"})
	others := backendtest.InsertGroup(t, pool, roles.Group{Title: "Marketing"})
	hash := backendtest.Hash(t, backendtest.BcryptFast, typo3Password)
	past := time.Now().Add(-time.Hour).Unix()
	for _, u := range []backendtest.User{
		{Username: typo3Editor, Password: hash, UserGroups: fmt.Sprint(editors), RealName: "Erika Editor", Email: "erika@example.com"},
		{Username: typo3Admin, Password: backendtest.Hash(t, backendtest.Argon2id, typo3Password), Admin: 1},
		{Username: typo3Disabled, Password: hash, UserGroups: fmt.Sprint(editors), Disable: true},
		{Username: typo3Expired, Password: hash, UserGroups: fmt.Sprint(editors), EndTime: past},
		{Username: typo3Unmapped, Password: hash, UserGroups: fmt.Sprint(others)},
		{Username: typo3MFA, Password: hash, UserGroups: fmt.Sprint(editors), MFA: []byte(`{"totp":{"active":true,"secret":"JBSWY3DPEHPK3PXP"}}`)},
	} {
		backendtest.InsertUser(t, pool, u)
	}
	now := time.Now().Unix()
	for _, r := range []struct {
		status, state, claimedBy string
		lease, crdate            int64
	}{
		{"queued", "", "", 0, now},
		{"running", "", "worker:php:1", now - 3600, now - 7200},
		{"waiting_for_approval", "nrv1:sealed-by-the-extension", "", 0, now - 40*86400},
		{"waiting_for_input", `{"messages":[],"pendingCalls":[{"id":"c1","type":"function","function":{"name":"ask","arguments":{}}}],"inputToolName":"ask","inputSchema":{"type":"object"}}`, "", 0, now - 40*86400},
	} {
		if _, err := pool.Exec(`INSERT INTO tx_nrllm_agentrun (uuid, status, configuration_uid, configuration_identifier,
			suspended_state, queued_request, claimed_by, lease_expires, started_at, crdate, tstamp)
			VALUES (UUID(), ?, 1, 'php-extension', ?, '{"prompt":"hi"}', ?, ?, ?, ?, ?)`,
			r.status, r.state, r.claimedBy, r.lease, r.crdate, r.crdate, r.crdate); err != nil {
			t.Fatal(err)
		}
	}
	return typo3Site{dsn: site.DSN, pool: pool}
}

// TestBesideTYPO3 runs the built binary with --typo3 on a TYPO3 12 site's database: the site's
// editor, mapped to reviewer by their TYPO3 group, signs in with their TYPO3 password and
// decides a run runsdesk started; disabled, expired, unmapped accounts and wrong passwords are
// refused, an account with TYPO3's own MFA is refused while the desk has no sealing keys, and
// the CLI will not manage a TYPO3 account. Every TYPO3 table (definition and rows) is the same
// after migrations, sign-ins, the decision, the reaper and the expirer as before; runsdesk's
// run is in its own table.
func TestBesideTYPO3(t *testing.T) {
	t.Parallel()
	site := newTYPO3Site(t)
	before := backendtest.Snapshot(t, site.pool)
	bin, dir := buildBinary(t)
	model := fakeModel(t)
	defer model.Close()
	endpoint := &toolEndpoint{}
	tools := httptest.NewServer(endpoint)
	defer tools.Close()
	cfg := filepath.Join(dir, "desk.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(journeyYAML, model.URL, tools.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "RUNSDESK_DSN=" + site.dsn,
		"RUNSDESK_LOG_LEVEL=warn", "RUNSDESK_ADDR=" + addr, "RUNSDESK_TYPO3=1",
		"RUNSDESK_TYPO3_ROLES=reviewer=Editors", "RUNSDESK_TYPO3_BACKEND_URL=https://cms.example.com/typo3", "RUNSDESK_REAP_INTERVAL=200ms", "RUNSDESK_EXPIRE_INTERVAL=200ms",
		"JOURNEY_API_KEY=sk-journey", "JOURNEY_TOOL_TOKEN=tool-secret",
	}
	if r := runBinary(t, bin, env, "", "migrate"); r.code != exitOK {
		t.Fatalf("migrate --typo3: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBinary(t, bin, env, "a long enough password for the cli\n", "user", "add", "--username", strings.ToLower(typo3Editor), "--role", "admin"); r.code == exitOK ||
		!strings.Contains(r.stderr, "manage this account in TYPO3") {
		t.Errorf("user add of a TYPO3 username: exit %d, stderr %q; want refused with \"manage this account in TYPO3\"", r.code, r.stderr)
	}
	for _, step := range [][]string{{"user", "add", "--username", "olga", "--role", "admin"}, {"apply", "-f", cfg}} {
		if r := runBinary(t, bin, env, "correct horse battery staple 7\n", step...); r.code != exitOK {
			t.Fatalf("runsdesk %s: exit %d\n%s%s", strings.Join(step, " "), r.code, r.stdout, r.stderr)
		}
	}
	tok := runBinary(t, bin, env, "", "token", "create", "--name", "typo3", "--scopes", "run,read")
	token := strings.TrimSpace(tok.stdout)
	if tok.code != exitOK || token == "" {
		t.Fatalf("token create: %+v", tok)
	}

	base := serveBinary(t, bin, env, addr)

	for _, refused := range []struct{ username, password string }{
		{typo3Editor, "not the password at all, but long"}, {typo3Disabled, typo3Password},
		{typo3Expired, typo3Password}, {typo3Unmapped, typo3Password}, {"nobody", typo3Password},
	} {
		if code, _ := newBrowserless(t, base).tryLogin(refused.username, refused.password); code != http.StatusUnprocessableEntity {
			t.Errorf("sign-in as %s: %d, want 422", refused.username, code)
		}
	}
	if code, body := newBrowserless(t, base).tryLogin(typo3MFA, typo3Password); code != http.StatusForbidden ||
		!strings.Contains(body, "uses two-factor sign-in in TYPO3") {
		t.Errorf("sign-in with TYPO3's MFA on and no sealing keys: %d, want 403 saying why", code)
	}

	api := apiClient{t: t, base: base, token: token, hc: checkedClient(t)}
	var created struct{ UUID, Status string }
	api.do(http.MethodPost, "/api/v1/runs", `{"configuration":"parcels","prompt":"Where does parcel 7 go?"}`, http.StatusCreated, &created)
	var status struct{ Status string }
	api.waitFor(created.UUID, "waiting_for_input", &status)
	ui := newBrowserless(t, base)
	ui.login(typo3Editor, typo3Password)
	form := ui.form("/runs/"+created.UUID, "/runs/"+created.UUID+"/input")
	form.Set("input/city", "Berlin")
	if code, loc := ui.post("/runs/"+created.UUID+"/input", form); code != http.StatusSeeOther || loc != "/runs/"+created.UUID {
		t.Fatalf("the TYPO3 editor's submit: %d Location %q, want 303 to the run page", code, loc)
	}
	api.waitFor(created.UUID, "completed", &status)
	if got := endpoint.received(); len(got) != 1 {
		t.Fatalf("tool endpoint called %d times, want 1", len(got))
	}
	code, list := ui.get("/typo3/runs")
	if code != http.StatusOK || strings.Count(list, `data-testid="typo3-run-link"`) != 2 ||
		!strings.Contains(list, `href="https://cms.example.com/typo3"`) {
		t.Errorf("/typo3/runs for the TYPO3 editor: %d; want the extension's two waiting runs, linked to its backend", code)
	}
	var sealed string
	if err := site.pool.QueryRow(`SELECT uuid FROM tx_nrllm_agentrun WHERE status = 'waiting_for_approval'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if code, page := ui.get("/typo3/runs/" + sealed); code != http.StatusOK || !strings.Contains(page, "sealed by the TYPO3 extension") ||
		strings.Contains(page, "<form method=\"post\"") {
		t.Errorf("the extension's sealed run: %d; want it shown as sealed by the TYPO3 extension, read only", code)
	}
	admin := newBrowserless(t, base)
	admin.login(typo3Admin, typo3Password)
	if code, body := admin.get("/admin/people"); code != http.StatusOK || !strings.Contains(body, "erika") {
		t.Errorf("the TYPO3 admin's /admin/people: %d, want 200 listing erika", code)
	}

	if r := runBinary(t, bin, env, "", "user", "disable", strings.ToLower(typo3Editor)); r.code == exitOK ||
		!strings.Contains(r.stderr, "manage this account in TYPO3") {
		t.Errorf("user disable of a TYPO3 account: exit %d, stderr %q; want refused", r.code, r.stderr)
	}
	if r := runBinary(t, bin, env, "", "reap"); r.code != exitOK {
		t.Errorf("reap: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	time.Sleep(time.Second) // several passes of serve's reaper and expirer
	var own, theirs int
	if err := site.pool.QueryRow(`SELECT (SELECT COUNT(*) FROM tx_runsdesk_run WHERE uuid = ?),
		(SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE uuid = ?)`, created.UUID, created.UUID).Scan(&own, &theirs); err != nil {
		t.Fatal(err)
	}
	if own != 1 || theirs != 0 {
		t.Errorf("runsdesk's run: %d rows in tx_runsdesk_run, %d in tx_nrllm_agentrun; want 1 and 0", own, theirs)
	}
	if after := backendtest.Snapshot(t, site.pool); after != before {
		t.Errorf("TYPO3's tables changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// tryLogin posts the sign-in form and returns the status and body.
func (b *browserless) tryLogin(username, password string) (int, string) {
	b.t.Helper()
	form := b.form("/login", "/login")
	form.Set("username", username)
	form.Set("password", password)
	resp, err := b.c.PostForm(b.base+"/login", form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// get fetches path and returns the status and body.
func (b *browserless) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestServeRefusesBadTYPO3Flags: the TYPO3 flags without --typo3, a bad role mapping or
// admins-as, a backend URL that is not absolute http(s), and --demo beside TYPO3 are usage
// errors naming the flag, before any database is opened.
func TestServeRefusesBadTYPO3Flags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  environ
		args []string
		want string
	}{
		{"roles without --typo3", nil, []string{"serve", "--typo3-roles", "reviewer=Editors"}, "need --typo3"},
		{"backend url without --typo3", nil, []string{"serve", "--typo3-backend-url", "https://cms.example.com/typo3"}, "need --typo3"},
		{"admins-as without --typo3", nil, []string{"serve", "--typo3-admins-as", "reviewer"}, "need --typo3"},
		{"bad roles", nil, []string{"serve", "--typo3", "--typo3-roles", "owner=Editors"}, "--typo3-roles:"},
		{"bad admins-as", nil, []string{"serve", "--typo3", "--typo3-admins-as", "support"}, "--typo3-admins-as:"},
		{"relative backend url", nil, []string{"serve", "--typo3", "--typo3-backend-url", "/typo3"}, "--typo3-backend-url: \"/typo3\" is not an absolute http or https URL"},
		{"demo beside TYPO3", environ{"RUNSDESK_TYPO3": "1"}, []string{"serve", "--demo"}, "does not run beside a TYPO3 site"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cliRun(t, c.env, nil, c.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", r.code, r.stderr, exitUsage, c.want)
			}
		})
	}
}
