package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool/mcptest"
	"runsdesk/views"
)

// appliedFile is applied for the configuration page's tests; %s is the MCP server's address.
const appliedFile = `configurations:
  - identifier: refunds
    name: Refunds
    provider: {kind: openai, base_url: "http://127.0.0.1:11434/v1", model: llama3.1}
    approvals_required: 2
    tools: [ask_amount, crm_lookup]
    wait: {expires_after: 4h, on_expiry: deny}
    notify:
      - on: [waiting]
        webhook: {url: "https://hooks.example/desk", secret_env: DESK_HOOK_SECRET}
      - on: [expired]
        email: {to: ["ops@example.com"]}
tools:
  - name: ask_amount
    description: Ask how much.
    parameters: {type: object}
    input_schema: {type: object, properties: {amount: {type: number}}}
    http: {url: "http://127.0.0.1:9000/amount", headers: {Authorization: "Bearer ${AMOUNT_TOKEN}"}}
  - name: crm_lookup
    mcp: {server: crm, tool: lookup_customer}
  - name: crm_find
    mcp: {server: crm, tool: find_customer}
mcp_servers:
  - name: crm
    url: "%s"
    headers: {Authorization: "Bearer ${CRM_TOKEN}"}
standing_approvals:
  - name: small-lookups
    tool: crm_lookup
    configuration: refunds
    when: {type: object}
    max_uses: 5
`

// applyTo applies appliedFile to app's store through the code `apply -f` runs, against a
// live MCP server, with the variables it references set in the environment (the page reads
// them to ask the server for its listing), and returns the server.
func applyTo(t *testing.T, app *testApp) *mcptest.Server {
	t.Helper()
	schema := mcptest.ObjectSchema(map[string]any{"id": map[string]any{"type": "string"}})
	srv := mcptest.New(t,
		mcptest.Tool{Tool: mcp.Tool{Name: "lookup_customer", Description: "Find a customer.", InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("found")},
		mcptest.Tool{Tool: mcp.Tool{Name: "find_customer", Description: "Find one.", InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("found")})
	for name, value := range map[string]string{"CRM_TOKEN": "crm-secret", "AMOUNT_TOKEN": "amount-secret", "DESK_HOOK_SECRET": "whsec"} {
		t.Setenv(name, value)
	}
	a := apply.New(apply.Config{Catalog: app.store, Rules: app.store})
	plan, err := a.Plan(t.Context(), fmt.Appendf(nil, appliedFile, srv.URL))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(t.Context(), plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return srv
}

// TestAdminConfigurationPage: an admin's /admin/configuration shows what was applied: each
// tool's input tier and a remote tool's pin digest, each MCP server's drift (a tool whose
// stored digest no longer matches the server's listing is changed), each standing approval's
// uses and each notify rule's last delivery, never a header's value; viewing it is not
// audited. Its markup passes the Nu HTML Checker.
func TestAdminConfigurationPage(t *testing.T) {
	app := newTestApp(t, appOptions{})
	applyTo(t, app)
	ctx := t.Context()
	var digest string
	if err := app.pool.QueryRowContext(ctx, `SELECT mcp_digest FROM tx_runsdesk_tool WHERE name = 'crm_lookup'`).Scan(&digest); err != nil || len(digest) != 64 {
		t.Fatalf("stored digest %q: %v", digest, err)
	}
	app.exec(`UPDATE tx_runsdesk_tool SET mcp_digest = ? WHERE name = 'crm_find'`, strings.Repeat("0", 64))
	app.exec(`UPDATE tx_runsdesk_standing_approval SET uses = 3 WHERE name = 'small-lookups'`)
	sent := time.Now().Add(-2 * time.Hour).Unix()
	target, _ := json.Marshal(runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
		URL: "https://hooks.example/desk", SecretEnv: "DESK_HOOK_SECRET"})
	app.exec(`INSERT INTO tx_runsdesk_outbox (run, run_uuid, event, channel, target, run_status, kind, tool,
		configuration_identifier, configuration_name, state, sent_at, crdate, occurred_at)
		VALUES (1, 'r', 'waiting', 'webhook', ?, 'waiting_for_input', 'input', 'ask_amount', 'refunds', 'Refunds', 'sent', ?, ?, ?)`,
		string(target), sent, sent, sent)

	admin := app.login(runtime.RoleAdmin)
	res := admin.get(views.ConfigurationPath)
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", views.ConfigurationPath, res.status, res.body)
	}
	doc := res.doc(t)
	tiers := doc.Find(`[data-testid="tool-tier"]`)
	if got := strings.TrimSpace(tiers.First().Text()); got != "portable" {
		t.Errorf("ask_amount's tier: %q, want portable", got)
	}
	if got := doc.Find(`[data-testid="tool-pin"] code`).First().Text(); got != digest {
		t.Errorf("crm_lookup's pin digest: %q, want %q", got, digest)
	}
	drift := map[string]string{}
	doc.Find(`[data-testid="server-tool"]`).Each(func(_ int, s *goquery.Selection) {
		drift[s.Find("code").Text()] = s.AttrOr("data-drift", "")
	})
	if drift["crm_lookup"] != "unchanged" || drift["crm_find"] != "changed" {
		t.Errorf("drift: %v, want crm_lookup unchanged and crm_find changed", drift)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="rule-uses"]`).Text()); got != "3 of 5" {
		t.Errorf("uses: %q, want 3 of 5", got)
	}
	lastSent := doc.Find(`[data-testid="notify-last-sent"]`)
	if lastSent.Length() != 2 || lastSent.First().Find("time").AttrOr("datetime", "") != time.Unix(sent, 0).UTC().Format(time.RFC3339) ||
		!strings.Contains(lastSent.First().Text(), "waiting") || lastSent.Eq(1).Find("time").Length() != 0 {
		t.Errorf("last deliveries: %q", lastSent.Text())
	}
	for _, secret := range []string{"crm-secret", "amount-secret", "${CRM_TOKEN}", "whsec"} {
		if strings.Contains(res.body, secret) {
			t.Errorf("the page shows %q", secret)
		}
	}
	if !strings.Contains(res.body, `href="`+views.ConfigurationYAMLPath+`"`) || !strings.Contains(res.body, `href="`+views.ConfigurationPath+`"`) {
		t.Error("the page lacks the download link or the navigation's Configuration entry")
	}
	rows, err := app.audit.ListAudit(ctx, runtime.AuditFilter{Action: actionConfigurationExport, Limit: 10})
	if err != nil || len(rows) != 0 {
		t.Errorf("viewing the page was audited: %v %v", rows, err)
	}
	checkMarkup(t, map[string]string{"configuration": res.body})
}

// TestAdminConfigurationYAML: the download is an attachment runsdesk.yaml of type
// application/yaml holding the header values as applied (${VAR} references, never their
// values), the same text each time, and each download is audited; support staff and reviewers
// get 403 for the page and the download.
func TestAdminConfigurationYAML(t *testing.T) {
	app := newTestApp(t, appOptions{})
	applyTo(t, app)
	admin := app.login(runtime.RoleAdmin)
	res := admin.get(views.ConfigurationYAMLPath)
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/yaml" ||
		res.header.Get("Content-Disposition") != "attachment; filename=runsdesk.yaml" {
		t.Fatalf("GET %s: %d %v\n%s", views.ConfigurationYAMLPath, res.status, res.header, res.body)
	}
	for _, want := range []string{"Bearer ${CRM_TOKEN}", "Bearer ${AMOUNT_TOKEN}", "name: small-lookups", "mcp_servers:"} {
		if !strings.Contains(res.body, want) {
			t.Errorf("the download lacks %q:\n%s", want, res.body)
		}
	}
	if strings.Contains(res.body, "crm-secret") || strings.Contains(res.body, "amount-secret") {
		t.Errorf("the download holds a variable's value:\n%s", res.body)
	}
	if again := admin.get(views.ConfigurationYAMLPath); again.body != res.body {
		t.Errorf("a second download differs:\n%s\nfirst:\n%s", again.body, res.body)
	}
	rows, err := app.audit.ListAudit(t.Context(), runtime.AuditFilter{Action: actionConfigurationExport, Limit: 10})
	if err != nil || len(rows) != 2 || rows[0].Outcome != outcomeSuccess || rows[0].ActorName != testUsers[runtime.RoleAdmin] {
		t.Errorf("audit rows of the downloads: %+v %v", rows, err)
	}
	for _, role := range []runtime.Role{runtime.RoleReviewer, runtime.RoleSupport} {
		c := app.login(role)
		for _, path := range []string{views.ConfigurationPath, views.ConfigurationYAMLPath} {
			if res := c.get(path); res.status != http.StatusForbidden || strings.Contains(res.body, "CRM_TOKEN") {
				t.Errorf("%s GET %s: %d, want 403", role, path, res.status)
			}
		}
	}
}

// TestAdminConfigurationPageShowsExternal: an external configuration's row names its callers
// (whether ad hoc requests are allowed, and the hosts it calls back) where an agent's names
// its provider, and a declared tool is reached nowhere.
func TestAdminConfigurationPageShowsExternal(t *testing.T) {
	app := newTestApp(t, appOptions{})
	a := apply.New(apply.Config{Catalog: app.store, Rules: app.store})
	plan, err := a.Plan(t.Context(), []byte(`configurations:
  - identifier: outside
    name: Outside agents
    kind: external
    callers: [claude-code, nightly-cron]
    ad_hoc: true
    callback_hosts: [agents.example.com]
    callback_secret_env: OUTSIDE_CALLBACK_SECRET
    tools: [wire_transfer]
tools:
  - name: wire_transfer
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
`))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(t.Context(), plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
	doc := app.login(runtime.RoleAdmin).get(views.ConfigurationPath).doc(t)
	if got := doc.Find(`td[data-label="Provider"]`).Text(); got != "external: requests from claude-code, nightly-cron (ad hoc allowed); callbacks to agents.example.com" {
		t.Errorf("provider cell %q", got)
	}
	if got := doc.Find(`td[data-label="Reached at"]`).Text(); got != "nowhere: declared for external requests" {
		t.Errorf("reached-at cell %q", got)
	}
}
