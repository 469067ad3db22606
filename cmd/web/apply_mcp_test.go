package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime/tool/mcptest"
)

// crmServer is a real MCP server listing a read-only lookup, a destructive delete and an
// idempotent update.
func crmServer(t *testing.T) *mcptest.Server {
	props := mcptest.ObjectSchema(map[string]any{"id": map[string]any{"type": "string"}})
	return mcptest.New(t,
		mcptest.Tool{Tool: mcp.Tool{Name: "lookup_customer", Description: "Find a customer.", InputSchema: props,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("found")},
		mcptest.Tool{Tool: mcp.Tool{Name: "delete_customer", Description: "Delete a customer.", InputSchema: props,
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}}, Handler: mcptest.Text("deleted")},
		mcptest.Tool{Tool: mcp.Tool{Name: "update_customer", Description: "Update a customer.", InputSchema: props,
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, Handler: mcptest.Text("updated")},
	)
}

func mcpFile(t *testing.T, url, extra string) string {
	t.Helper()
	file := `mcp_servers:
  - name: crm
    url: "` + url + `"
    headers: {Authorization: "Bearer ${CRM_TOKEN}"}
    timeout: 5s
    elicitation_timeout: 2m
  - name: ops
    url: "` + url + `"
    requires_approval: false
tools:
  - name: crm_lookup
    mcp: {server: crm, tool: lookup_customer}
  - name: crm_delete
    mcp: {server: crm, tool: delete_customer}
  - name: ops_update
    mcp: {server: ops, tool: update_customer}
    input_schema: {type: object, properties: {code: {type: string, pattern: "^[A-Z]+$"}}}
` + extra
	path := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestApplyReadsMCPToolsAndReportsChanges(t *testing.T) {
	t.Parallel()
	srv := crmServer(t)
	env := newDatabase(t)
	env["CRM_TOKEN"] = "tok-secret"
	path := mcpFile(t, srv.URL, "")
	r := cliRun(t, env, nil, "apply", "-f", path)
	want := `tool crm_lookup: created
tool crm_delete: created
tool ops_update: created
tool ops_update: input_schema desk-only: ` + "`pattern`" + ` at /properties/code/pattern
Applied: 3 created, 0 updated, 0 unchanged.
`
	if r.code != exitOK || r.stdout != want {
		t.Fatalf("apply: exit %d\n%s\nwant\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	if got := srv.Headers()[0].Get("Authorization"); got != "Bearer tok-secret" {
		t.Errorf("apply connected with Authorization %q", got)
	}
	if strings.Contains(r.stdout+r.stderr, "tok-secret") {
		t.Error("the expanded header was printed")
	}
	c := store(t, env)
	rows, err := c.pool.QueryContext(context.Background(), `SELECT name, description, parameters, effect, requires_approval,
		http_headers, mcp_server, mcp_tool, mcp_digest, mcp_elicitation_timeout_ms FROM tx_runsdesk_tool ORDER BY uid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		name, desc, params, effect string
		approval                   bool
		headers, server, tool      string
		digest                     string
		elicitMS                   int64
	}
	var got []row
	for rows.Next() {
		var x row
		if err := rows.Scan(&x.name, &x.desc, &x.params, &x.effect, &x.approval, &x.headers, &x.server, &x.tool, &x.digest, &x.elicitMS); err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	if len(got) != 3 {
		t.Fatalf("rows = %+v", got)
	}
	for i, w := range []struct {
		desc, effect string
		approval     bool
	}{{"Find a customer.", "read_only", true}, {"Delete a customer.", "non_idempotent_write", true}, {"Update a customer.", "idempotent_write", false}} {
		g := got[i]
		if g.desc != w.desc || g.effect != w.effect || g.approval != w.approval || len(g.digest) != 64 || !strings.Contains(g.params, `"id"`) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	if got[0].headers != `{"Authorization":"Bearer ${CRM_TOKEN}"}` || got[0].elicitMS != 120000 || got[0].server != "crm" || got[0].tool != "lookup_customer" {
		t.Errorf("crm_lookup stored %+v; headers must stay unexpanded", got[0])
	}

	if r := cliRun(t, env, nil, "apply", "-f", path, "--dry-run"); r.code != exitOK || !strings.Contains(r.stdout, "Dry run: 0 to create, 0 to update, 3 unchanged") || strings.Contains(r.stdout, "changed server") {
		t.Errorf("unchanged dry run: %+v", r)
	}
	srv.Set(mcptest.Tool{Tool: mcp.Tool{Name: "lookup_customer", Description: "Find and export a customer.",
		InputSchema: mcptest.ObjectSchema(nil), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("found")})
	r = cliRun(t, env, nil, "apply", "-f", path, "--dry-run")
	if r.code != exitOK || !strings.Contains(r.stdout, "tool crm_lookup: update (description, parameters, mcp)\n") ||
		!strings.Contains(r.stdout, "changed server crm: tool lookup_customer (crm_lookup) changed since it was applied; its calls are refused until this file is applied\n") {
		t.Errorf("dry run after the server changed: %+v", r)
	}
	r = cliRun(t, env, nil, "apply", "-f", path)
	if r.code != exitOK || !strings.Contains(r.stdout, "tool crm_lookup: updated\n") ||
		!strings.Contains(r.stdout, "changed server crm: tool lookup_customer (crm_lookup) changed since it was applied; applied as the server describes it now\n") {
		t.Errorf("apply after the server changed: %+v", r)
	}
	if r := cliRun(t, env, nil, "apply", "-f", path, "--dry-run"); r.code != exitOK || strings.Contains(r.stdout, "changed server") {
		t.Errorf("dry run after applying the change: %+v", r)
	}
}

func TestApplyRefusesBadMCPEntries(t *testing.T) {
	t.Parallel()
	srv := crmServer(t)
	env := newDatabase(t)
	env["CRM_TOKEN"] = "tok"
	path := mcpFile(t, srv.URL, `  - name: crm_confirm
    mcp: {server: crm, tool: update_customer}
    input_schema: {type: object, properties: {ok: {type: boolean}}}
  - name: crm_gone
    mcp: {server: crm, tool: no_such_tool}
  - name: crm_nowhere
    mcp: {server: billing, tool: x}
    description: mine
`)
	r := cliRun(t, env, nil, "apply", "-f", path)
	if r.code != exitFailure {
		t.Fatalf("apply: %+v", r)
	}
	for _, want := range []string{
		"tools[5].mcp.server: \"billing\" is not defined in mcp_servers",
		"tools[5].description: not allowed with mcp: a remote tool's description comes from its server",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	path = mcpFile(t, srv.URL, `  - name: crm_confirm
    mcp: {server: crm, tool: update_customer}
    input_schema: {type: object, properties: {ok: {type: boolean}}}
  - name: crm_gone
    mcp: {server: crm, tool: no_such_tool}
`)
	r = cliRun(t, env, nil, "apply", "-f", path)
	for _, want := range []string{
		"tools[3]: a tool may not both need approval and require input: the approval pause would precede the input pause forever (its server declares that calls require approval and it declares an input schema)",
		`tools[4].mcp.tool: server crm does not list a tool "no_such_tool"`,
	} {
		if r.code != exitFailure || !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	delete(env, "CRM_TOKEN")
	r = cliRun(t, env, nil, "apply", "-f", mcpFile(t, srv.URL, ""))
	if r.code != exitFailure || !strings.Contains(r.stderr, "mcp_servers[0].headers.Authorization: environment variable CRM_TOKEN is not set") {
		t.Errorf("unset header variable: %+v", r)
	}
	if got := tableTstamps(t, env); got != "0/0 0/0" {
		t.Errorf("rows written: %s", got)
	}
}
