package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// roundTripFile uses what the reference example does not: ${VAR} references inside a header
// value, two MCP servers (one without approval, with its own quorum), a tool's own wait with
// an answer, an escalation without after_escalation, a budget of tokens only, a provider
// without retries, scripted arguments given as text, a rule without a configuration or a
// bound, JSON strings that look like numbers and dates, and text on several lines. %s is the
// MCP servers' address.
const roundTripFile = `configurations:
  - identifier: intake
    name: "Intake: 2024"
    provider:
      kind: openai
      base_url: "https://llm.example/v1"
      model: "0123"
      api_key_env: OPENAI_API_KEY
      timeout: 1m30s
      max_retries: 0
    system_prompt: |
      You triage.
      Two lines: "quoted" and # not a comment.
    max_iterations: 4
    require_second_approver: true
    approvals_required: 2
    allow_automatic_vote: true
    tools: [ask_city, crm_lookup, ops_update]
    wait: {expires_after: 36h, on_expiry: escalate, remind_after: 90m, escalate_after: 1d}
    pricing: {prompt_per_1k: 0.001, completion_per_1k: 0}
    budget: {max_total_tokens: 1000}
    max_context_tokens: 8000
    guardrails:
      - deny_pattern: "(?i)secret: \\d+"
        on: [output]
      - http: {url: "http://127.0.0.1:9300/check"}
        on: [arguments, output]
    notify:
      - on: [assigned, waiting]
        email: {to: ["ops@example.com"], to_people: true}
      - on: [expired]
        slack: {webhook_url_env: SLACK_WEBHOOK_URL}
    keep_output: false
    privacy: full
    support_sees: full
    assignment: {reviewers_may_assign: true, strict: true}
    retention: {runs: 400d}
  - identifier: replay
    name: Replay
    provider:
      kind: scripted
      script:
        - tool_calls: [{name: ask_city, arguments: "{\"broken\": "}]
        - content: "{{ask_city.city}}"
    tools: [ask_city]
  - identifier: outside
    name: Outside agents
    kind: external
    callers: [claude-code]
    ad_hoc: true
    tools: [ask_budget]
    wait: {expires_after: 2h, on_expiry: cancel}
tools:
  - name: ask_budget
    input_schema: {type: object, properties: {budget: {type: integer}}}
  - name: ask_city
    description: Where to?
    parameters: {type: object, properties: {zip: {type: string, default: "01234"}, on: {type: string, default: "2024-05-01"}}}
    input_schema:
      type: object
      required: [city]
      properties:
        city: {type: string, title: City, maxLength: 40}
        note: {type: string, x-multiline: true}
    max_arguments_bytes: 2048
    http:
      url: "http://127.0.0.1:9000/city"
      headers: {Authorization: "Token ${CITY_USER}:${CITY_KEY}", X-Literal: "plain value"}
      timeout: 500ms
      max_response_bytes: 4096
    wait: {expires_after: 2h, on_expiry: answer, answer: {city: Berlin}}
  - name: crm_lookup
    mcp: {server: crm, tool: lookup_customer}
  - name: ops_update
    mcp: {server: ops, tool: update_customer, max_response_bytes: 65536}
    approvals_required: 3
mcp_servers:
  - name: crm
    url: "%[1]s"
    headers: {Authorization: "Bearer ${CRM_TOKEN}"}
    timeout: 5s
    elicitation_timeout: 2m
    max_response_bytes: 131072
  - name: ops
    url: "%[1]s"
    requires_approval: false
    approvals_required: 2
    allow_automatic_vote: true
standing_approvals:
  - name: any-lookup
    tool: crm_lookup
    when: {type: object}
  - name: berlin
    tool: ops_update
    configuration: intake
    when: {type: object, properties: {id: {const: "007"}}}
    until: 2031-01-31T12:30:00Z
    max_uses: 5
    allow_writes: true
`

// TestAppliedConfigurationRoundTrips: the complete example of docs/configuration.md,
// roundTripFile and the demo desk, each applied (`apply -f`; `serve --demo` for the demo),
// downloaded by an admin from /admin/configuration.yaml and applied again with `apply -f`
// (`--demo` for the demo): every item is unchanged, nothing is written, the applied desk
// reads back the same, and a second download is the same text. Header values come back as
// they were applied, ${VAR} references included, never a variable's value; the demo's
// built-in tools are not defined in the file.
func TestAppliedConfigurationRoundTrips(t *testing.T) {
	t.Parallel()
	srv := crmServer(t)
	for _, tc := range []struct {
		name, file string
		demo       bool
	}{
		{name: "reference", file: strings.Replace(referenceExample(t), "http://127.0.0.1:9100/mcp", srv.URL, 1)},
		{name: "round-trip", file: fmt.Sprintf(roundTripFile, srv.URL)},
		{name: "demo", demo: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := applyEnv(t)
			env["CRM_TOKEN"], env["DESK_HOOK_SECRET"], env["SLACK_WEBHOOK_URL"] = "crm-test", "whsec_test", "https://hooks.slack.com/services/T/B/x"
			env["CITY_USER"], env["CITY_KEY"] = "city-user", "city-key"
			var demo []string
			if tc.demo {
				demo = []string{"--demo"}
			} else {
				path := filepath.Join(t.TempDir(), "desk.yaml")
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				if r := cliRun(t, env, nil, "apply", "-f", path); r.code != exitOK {
					t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
			}
			const password = "correct horse battery staple 7"
			if r := cliRun(t, env, strings.NewReader(password+"\n"), "user", "add", "--username", "olga", "--role", "admin"); r.code != exitOK {
				t.Fatalf("user add: %+v", r)
			}
			s := start(t, env, append([]string{"serve", "--addr", "127.0.0.1:0"}, demo...)...)
			base := s.waitFor(t, regexp.MustCompile(`(http://127\.0\.0\.1:[0-9]+)/`))
			ui := newBrowserless(t, base)
			ui.login("olga", password)

			exported := download(t, ui)
			if tc.demo {
				f, err := apply.Load([]byte(exported))
				if err != nil || len(f.Configurations) == 0 || !slices.Contains(f.Configurations[0].Tools, "lookup_order") || len(f.Tools) != 0 {
					t.Errorf("the demo's configurations name its built-in tools, and the download defines none of them (%v):\n%s", err, exported)
				}
			}
			for _, header := range []string{"Bearer ${CRM_TOKEN}", "Token ${CITY_USER}:${CITY_KEY}", "Bearer ${REFUND_TOKEN}"} {
				if strings.Contains(tc.file, header) && !strings.Contains(exported, header) {
					t.Errorf("the download lacks the header value %q as applied:\n%s", header, exported)
				}
			}
			for _, secret := range []string{"crm-test", "city-key", "rt-test", "whsec_test"} {
				if strings.Contains(exported, secret) {
					t.Errorf("the download holds the value of a variable (%q):\n%s", secret, exported)
				}
			}

			catalog := []string{"tx_runsdesk_tool", "tx_nrllm_configuration", "tx_runsdesk_standing_approval"}
			before, rows := appliedDesk(t, env), tableSums(t, env, catalog...)
			again := filepath.Join(t.TempDir(), "runsdesk.yaml")
			if err := os.WriteFile(again, []byte(exported), 0o600); err != nil {
				t.Fatal(err)
			}
			r := cliRun(t, env, nil, append([]string{"apply", "-f", again}, demo...)...)
			if r.code != exitOK || !regexp.MustCompile(`Applied: 0 created, 0 updated, \d+ unchanged\.\n$`).MatchString(r.stdout) {
				t.Fatalf("applying the download: exit %d\n%s\n%s\nthe download:\n%s", r.code, r.stdout, r.stderr, exported)
			}
			if after := tableSums(t, env, catalog...); after != rows {
				t.Errorf("applying the download wrote: %s -> %s", rows, after)
			}
			if after := appliedDesk(t, env); !reflect.DeepEqual(after, before) {
				t.Errorf("the applied desk changed:\n%+v\n%+v", before, after)
			}
			if second := download(t, ui); second != exported {
				t.Errorf("a second download differs:\n%s\nfirst:\n%s", second, exported)
			}
		})
	}
}

// download is GET /admin/configuration.yaml as ui, checked to be an attachment of YAML.
func download(t *testing.T, ui *browserless) string {
	t.Helper()
	resp, err := ui.c.Get(ui.base + "/admin/configuration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/yaml" ||
		resp.Header.Get("Content-Disposition") != "attachment; filename=runsdesk.yaml" {
		t.Fatalf("GET /admin/configuration.yaml: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	return string(body)
}

// appliedDesk is what the store reads back of the applied configurations, tools and
// standing approvals.
func appliedDesk(t *testing.T, env environ) runtime.AppliedDesk {
	t.Helper()
	d, err := db.New(store(t, env).pool).AppliedDesk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.Sent, d.Failed = nil, nil
	return d
}
