package apply_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool"
)

// externalFile is an external configuration offering a declared approval and a declared
// question.
const externalFile = `configurations:
  - identifier: agent-approvals
    name: Approvals for agents elsewhere
    kind: external
    callers: [claude-code, nightly-cron]
    ad_hoc: true
    tools: [wire_transfer, ask_budget]
    subject: "Pay {{amount}}"
    approvals_required: 2
tools:
  - name: wire_transfer
    description: Send money.
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
  - name: ask_budget
    input_schema: {type: object, properties: {budget: {type: integer}}, required: [budget]}
`

// TestExternalConfigurationIsApplied: kind: external stores its callers and ad_hoc with no
// provider; its declared tools (no http:, no mcp:) are stored without an endpoint; applying
// it again changes nothing, and dropping ad_hoc plans an update naming it.
func TestExternalConfigurationIsApplied(t *testing.T) {
	cat, a := appliedFile(t, externalFile)
	c := cat.configs[0]
	want := runtime.ExternalPolicy{Callers: []string{"claude-code", "nightly-cron"}, AdHoc: true}
	if !c.IsExternal() || !c.External.Equal(want) || c.Provider.Kind != "" || c.Quorum.Required != 2 {
		t.Fatalf("applied %+v (external %+v)", c, c.External)
	}
	if !c.AcceptsCaller("claude-code") || c.AcceptsCaller("ci") || c.AcceptsCaller("") {
		t.Errorf("AcceptsCaller wrong for %+v", c.External)
	}
	for _, d := range cat.tools {
		if !d.Declared() {
			t.Errorf("tool %s stored with an endpoint: %+v", d.Name, d.HTTP)
		}
	}
	if got := cat.tools[0].Effect; got != tool.EffectNonIdempotentWrite {
		t.Errorf("wire_transfer effect %q", got)
	}
	p, err := a.Plan(context.Background(), []byte(externalFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range p.Changes {
		if ch.Action != apply.Unchanged {
			t.Errorf("applied again: %+v", ch)
		}
	}
	p, err = a.Plan(context.Background(), []byte(strings.Replace(externalFile, "    ad_hoc: true\n", "", 1)))
	if err != nil || !slices.Equal(p.Changes[2].Fields, []string{"ad_hoc"}) {
		t.Fatalf("dropping ad_hoc: %+v, %v; want an update naming ad_hoc", p.Changes, err)
	}
	export := apply.FileOf(runtime.AppliedDesk{Configurations: cat.configs, Tools: cat.tools})
	if s := export.Configurations[0]; s.Kind != apply.KindExternal || s.Provider != nil || s.MaxIterations != nil || !s.AdHoc || len(s.Callers) != 2 {
		t.Errorf("exported %+v", s)
	}
	if s := export.Tools[0]; s.HTTP != nil || s.MCP != nil {
		t.Errorf("exported tool %+v", s)
	}
}

// TestExternalConfigurationRules: every misuse of the external keys is a problem at its
// path: an unknown kind, callers missing or repeated, model-loop keys on an external
// configuration, callers or ad_hoc on an agent one, an external configuration offering a
// tool that calls an endpoint or a built-in, and an agent offering a declared tool.
func TestExternalConfigurationRules(t *testing.T) {
	const declared = "tools:\n  - name: ask\n    input_schema: {type: object, properties: {x: {type: string}}}\n"
	const httpTool = "  - name: call\n    http: {url: \"http://127.0.0.1:9/\"}\n"
	ext := func(keys string) string {
		return "configurations:\n  - identifier: e\n    name: E\n    kind: external\n" + keys + declared
	}
	cases := []struct{ name, file, want string }{
		{"unknown kind", "configurations:\n  - identifier: e\n    name: E\n    kind: agentic\n    provider: {kind: scripted, script: [{content: hi}]}\n",
			`configurations[0].kind: must be external (or absent for an agent configuration), got "agentic"`},
		{"no callers", ext(""), "configurations[0].callers: required for kind: external"},
		{"caller twice", ext("    callers: [a, a]\n"), `configurations[0].callers[1]: "a" is listed twice`},
		{"provider", ext("    callers: [a]\n    provider: {kind: scripted, script: [{content: hi}]}\n"), "configurations[0].provider: kind: external runs no model, so it takes no provider"},
		{"system prompt", ext("    callers: [a]\n    system_prompt: be nice\n"), "configurations[0].system_prompt: kind: external runs no model"},
		{"max iterations", ext("    callers: [a]\n    max_iterations: 3\n"), "configurations[0].max_iterations: kind: external runs no model"},
		{"http tool", ext("    callers: [a]\n    tools: [call]\n") + httpTool, `configurations[0].tools[0]: tool "call" calls an endpoint; kind: external offers only tools without http: and mcp:`},
		{"built-in tool", ext("    callers: [a]\n    tools: [builtin_tool]\n"), `configurations[0].tools[0]: tool "builtin_tool" is built into this program`},
		{"callers on an agent", "configurations:\n" + okConfiguration + "    callers: [a]\n", "configurations[0].callers: only kind: external takes callers"},
		{"ad_hoc on an agent", "configurations:\n" + okConfiguration + "    ad_hoc: true\n", "configurations[0].ad_hoc: only kind: external takes ad_hoc"},
		{"agent offers a declared tool", "configurations:\n" + okConfiguration + "    tools: [ask]\n" + declared, `configurations[0].tools[0]: tool "ask" has no http: or mcp:, so nothing would run it`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := apply.New(apply.Config{Catalog: &fakeCatalog{}, Getenv: fullEnv, Builtin: []tool.Tool{builtin{}}})
			wantOneProblem(t, &fakeCatalog{}, a, tc.file, tc.want)
		})
	}
}

// TestDeclaredToolMustFitStoredConfigurations: a file that turns a tool a stored agent
// configuration offers into a declared one, or a declared tool a stored external
// configuration offers into one with an endpoint, is refused at that tool.
func TestDeclaredToolMustFitStoredConfigurations(t *testing.T) {
	cat, _ := appliedFile(t, externalFile)
	a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	cat.writes = 0
	wantOneProblem(t, cat, a, "tools:\n  - name: ask_budget\n    input_schema: {type: object, properties: {budget: {type: integer}}}\n    http: {url: \"http://127.0.0.1:9/\"}\n",
		`tools[0]: the stored external configuration "agent-approvals" offers "ask_budget", so it must have neither http: nor mcp:`)

	agent := "configurations:\n" + okConfiguration + "    tools: [lookup]\ntools:\n  - name: lookup\n    http: {url: \"http://127.0.0.1:9/\"}\n"
	cat, _ = appliedFile(t, agent)
	a = apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	cat.writes = 0
	wantOneProblem(t, cat, a, "tools:\n  - name: lookup\n", `tools[0]: the stored configuration "c" offers "lookup", which needs http: or mcp:`)
	var ps apply.Problems
	if _, err := a.Plan(context.Background(), []byte(agent)); errors.As(err, &ps) {
		t.Errorf("the stored agent file again: %v", err)
	}
}

// callbackFile is an external configuration that takes callbacks to two hosts.
const callbackFile = `configurations:
  - identifier: agent-callbacks
    name: Requests with callbacks
    kind: external
    callers: [nightly-cron]
    callback_hosts: [hooks.example.com, 127.0.0.1]
    callback_secret_env: AGENT_CALLBACK_SECRET
    tools: [ask_budget]
tools:
  - name: ask_budget
    input_schema: {type: object, properties: {budget: {type: integer}}, required: [budget]}
`

// TestExternalCallbacksRoundTrip: callback_hosts and callback_secret_env are stored on the
// external policy, exported as they were applied (applying the export changes nothing), and
// changing the hosts plans an update naming callback_hosts; a secret variable unset where
// apply runs is a warning, not a refusal.
func TestExternalCallbacksRoundTrip(t *testing.T) {
	cat, a := appliedFile(t, callbackFile)
	c := cat.configs[0]
	want := runtime.ExternalPolicy{Callers: []string{"nightly-cron"}, CallbackHosts: []string{"hooks.example.com", "127.0.0.1"}, CallbackSecretEnv: "AGENT_CALLBACK_SECRET"}
	if !c.IsExternal() || !c.External.Equal(want) || !c.AcceptsCallbacks() {
		t.Fatalf("applied external %+v, want %+v", c.External, want)
	}
	exported, err := apply.Export(runtime.AppliedDesk{Configurations: cat.configs, Tools: cat.tools})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(exported), "callback_secret_env: AGENT_CALLBACK_SECRET") || !strings.Contains(string(exported), "hooks.example.com") {
		t.Errorf("export lacks the callback keys:\n%s", exported)
	}
	p, err := a.Plan(context.Background(), exported)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range p.Changes {
		if ch.Action != apply.Unchanged {
			t.Errorf("the export applied again: %+v", ch)
		}
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, "callback_secret_env AGENT_CALLBACK_SECRET is not set here")
	}) {
		t.Errorf("warnings %q, want one naming the unset callback_secret_env", p.Warnings)
	}
	p, err = a.Plan(context.Background(), []byte(strings.Replace(callbackFile, ", 127.0.0.1]", "]", 1)))
	if err != nil || !slices.Equal(p.Changes[1].Fields, []string{"callback_hosts"}) {
		t.Fatalf("dropping a host: %+v, %v; want an update naming callback_hosts", p.Changes, err)
	}
}

// TestExternalCallbackRules: apply refuses callback_hosts without callback_secret_env and
// the other way round, either key on an agent configuration, and hosts that are not bare
// host names or listed twice.
func TestExternalCallbackRules(t *testing.T) {
	const declared = "tools:\n  - name: ask\n    input_schema: {type: object, properties: {x: {type: string}}}\n"
	ext := func(keys string) string {
		return "configurations:\n  - identifier: e\n    name: E\n    kind: external\n    callers: [a]\n    tools: [ask]\n" + keys + declared
	}
	cases := []struct{ name, file, want string }{
		{"hosts without secret", ext("    callback_hosts: [hooks.example.com]\n"), "configurations[0].callback_secret_env: required with callback_hosts"},
		{"secret without hosts", ext("    callback_secret_env: CB_SECRET\n"), "configurations[0].callback_hosts: required with callback_secret_env"},
		{"secret not a variable name", ext("    callback_hosts: [h.example]\n    callback_secret_env: 1-bad\n"), "configurations[0].callback_secret_env: must be the name of an environment variable"},
		{"host with a scheme", ext("    callback_hosts: [\"https://h.example\"]\n    callback_secret_env: CB_SECRET\n"), "configurations[0].callback_hosts[0]: must be a host name"},
		{"host with a port", ext("    callback_hosts: [\"h.example:8443\"]\n    callback_secret_env: CB_SECRET\n"), "configurations[0].callback_hosts[0]: must be a host name"},
		{"host twice", ext("    callback_hosts: [h.example, H.example]\n    callback_secret_env: CB_SECRET\n"), `configurations[0].callback_hosts[1]: "H.example" is listed twice`},
		{"hosts on an agent", "configurations:\n" + okConfiguration + "    callback_hosts: [h.example]\n", "configurations[0].callback_hosts: only kind: external takes callback_hosts"},
		{"secret on an agent", "configurations:\n" + okConfiguration + "    callback_secret_env: CB_SECRET\n", "configurations[0].callback_secret_env: only kind: external takes callback_secret_env"},
		{"callers beyond what is stored", strings.Replace(ext(""), "callers: [a]", "callers: ["+manyCallers(200)+"]", 1), "configurations[0].callers: callers and callback_hosts take"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := apply.New(apply.Config{Catalog: &fakeCatalog{}, Getenv: fullEnv})
			wantOneProblem(t, &fakeCatalog{}, a, tc.file, tc.want)
		})
	}
}

// manyCallers is a YAML flow list body of n distinct 40-byte caller names.
func manyCallers(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("agent-%034d", i)
	}
	return strings.Join(names, ", ")
}
