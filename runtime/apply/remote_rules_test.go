package apply_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/tool/mcptest"
	"runsdesk/runtime/wait"
)

// remoteServer is a real MCP server listing a read-only lookup with an id and one with no
// properties.
func remoteServer(t *testing.T) *mcptest.Server {
	return mcptest.New(t,
		mcptest.Tool{Tool: mcp.Tool{Name: "lookup", InputSchema: mcptest.ObjectSchema(map[string]any{"id": map[string]any{"type": "string"}}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("found")},
		mcptest.Tool{Tool: mcp.Tool{Name: "bare", InputSchema: mcptest.ObjectSchema(nil),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("ok")},
	)
}

// remoteFile is a file with servers crm (approval required) and ops (not), and tool r of
// server:tool with the extra keys.
func remoteFile(url, target, extra string) string {
	return "mcp_servers:\n  - name: crm\n    url: \"" + url + "\"\n  - name: ops\n    url: \"" + url + "\"\n    requires_approval: false\n" +
		"tools:\n  - name: r\n    mcp: {" + target + "}\n" + extra
}

// TestEveryToolRuleOnARemoteTool: each rule apply holds a tool to holds for an mcp: tool too,
// with its path, and nothing is written.
func TestEveryToolRuleOnARemoteTool(t *testing.T) {
	srv := remoteServer(t)
	const ops = "server: ops, tool: lookup"
	cases := []struct{ name, target, extra, want string }{
		{"no approve", ops, "    wait: {expires_after: 4h, on_expiry: approve}\n", "tools[0].wait.on_expiry: there is no approve"},
		{"expires_after required", ops, "    wait: {on_expiry: deny}\n", "tools[0].wait.expires_after: required"},
		{"on_expiry required", ops, "    wait: {expires_after: 4h}\n", "tools[0].wait.on_expiry: required"},
		{"unknown action", ops, "    wait: {expires_after: 4h, on_expiry: ignore}\n", `tools[0].wait.on_expiry: must be deny, answer, cancel or escalate, not "ignore"`},
		{"unknown wait key", ops, "    wait: {expires_after: 4h, on_expiry: deny, snooze: 1h}\n", "tools[0].wait.snooze: unknown key"},
		{"duration too short", ops, "    wait: {expires_after: 10ms, on_expiry: deny}\n", "tools[0].wait.expires_after: must be between 1s and"},
		{"remind after expiry", ops, "    wait: {expires_after: 1h, on_expiry: deny, remind_after: 2h}\n", "tools[0].wait.remind_after: must be shorter than expires_after"},
		{"escalate without escalate_after", ops, "    wait: {expires_after: 4h, on_expiry: escalate}\n", "tools[0].wait.escalate_after: required with on_expiry: escalate"},
		{"after_escalation answer", ops, "    wait: {expires_after: 4h, on_expiry: escalate, escalate_after: 2h, after_escalation: answer}\n", `tools[0].wait.after_escalation: must be deny or cancel, not "answer"`},
		{"answer without input", ops, "    wait: {expires_after: 4h, on_expiry: answer, answer: {a: 1}}\n", "tools[0].wait.on_expiry: answer exists only for an input tool, and this tool has no input_schema"},
		{"answer on a tool needing approval", "server: crm, tool: lookup", "    input_schema: {type: object, properties: {code: {type: string}}}\n    wait: {expires_after: 4h, on_expiry: answer, answer: {code: x}}\n", "tools[0].wait.on_expiry: a tool that declares a write can only be denied or cancelled on expiry"},
		{"answer without on_expiry answer", ops, "    wait: {expires_after: 4h, on_expiry: deny, answer: {a: 1}}\n", "tools[0].wait.answer: only with on_expiry: answer"},
		{"answer fails the input schema", ops, "    input_schema: {type: object, properties: {code: {type: string}}}\n    wait: {expires_after: 4h, on_expiry: answer, answer: {code: 5}}\n", "tools[0].wait.answer.code: does not match the tool's input_schema"},
		{"editable without approval", ops, "    editable: true\n", "tools[0].editable: only a tool that needs approval can be editable"},
		{"editable without properties", "server: crm, tool: bare", "    editable: true\n", "tools[0].editable: an editable tool needs parameters with properties"},
		{"input schema without properties", ops, "    input_schema: {type: object}\n", `tools[0].input_schema: tool "r" would ask a person for nothing`},
		{"approval with input", "server: crm, tool: lookup", "    input_schema: {type: object, properties: {a: {type: string}}}\n", "tools[0]: a tool may not both need approval and require input"},
		{"response limit too large", ops + ", max_response_bytes: 999999999", "", "tools[0].mcp.max_response_bytes: max response bytes must be"},
		{"negative response limit", ops + ", max_response_bytes: -1", "", "tools[0].mcp.max_response_bytes: max response bytes must be"},
		{"unknown mcp key", ops + ", retries: 3", "", "tools[0].mcp.retries: unknown key"},
		{"description", ops, "    description: d\n", "tools[0].description: not allowed with mcp"},
		{"unknown tool key", ops, "    colour: red\n", "tools[0].colour: unknown key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{}
			a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
			wantOneProblem(t, cat, a, remoteFile(srv.URL, c.target, c.extra), c.want)
		})
	}
	cat := &fakeCatalog{}
	a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	bad := "mcp_servers:\n  - name: crm\n    url: \"" + srv.URL + "\"\n    max_response_bytes: 999999999\n"
	if _, err := a.Plan(context.Background(), []byte(bad)); err == nil || !strings.Contains(err.Error(), "mcp_servers[0].max_response_bytes: max response bytes must be") {
		t.Errorf("server's response limit: %v", err)
	}
}

// TestRemoteToolWaitAndLimitApply: an mcp: tool's wait:, editable and max_arguments_bytes reach
// the catalog and the built tool, and its response limit is its own when set, its server's
// otherwise.
func TestRemoteToolWaitAndLimitApply(t *testing.T) {
	srv := remoteServer(t)
	file := "mcp_servers:\n  - name: crm\n    url: \"" + srv.URL + "\"\n    max_response_bytes: 2048\n" +
		"tools:\n  - name: r\n    mcp: {server: crm, tool: lookup, max_response_bytes: 4096}\n    editable: true\n    max_arguments_bytes: 512\n" +
		"    wait: {expires_after: 4h, on_expiry: deny}\n  - name: s\n    mcp: {server: crm, tool: bare}\n"
	cat, _ := appliedFile(t, file)
	if len(cat.tools) != 2 {
		t.Fatalf("stored %d tools", len(cat.tools))
	}
	r, s := cat.tools[0], cat.tools[1]
	if r.Wait.OnExpiry != wait.Deny || r.Wait.ExpiresAfter != 4*time.Hour || !r.Editable || r.HTTP.MaxResponseBytes != 4096 || s.HTTP.MaxResponseBytes != 2048 ||
		r.MaxArgumentsBytes != 512 || s.MaxArgumentsBytes != 0 {
		t.Fatalf("stored r %+v, s %+v", r, s)
	}
	tl, err := tool.NewMCP(r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := tl.(tool.Waiter); !ok || w.WaitPolicy().OnExpiry != wait.Deny || !tool.IsEditable(tl) || tool.MaxArgumentsBytes(tl) != 512 {
		t.Fatalf("the built remote tool does not carry its wait: and editable (%T)", tl)
	}
}
