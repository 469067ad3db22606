package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool/mcptest"
)

const configurationReference = "../../docs/configuration.md"

// referenceExample is the first YAML block of docs/configuration.md: the complete example.
func referenceExample(t *testing.T) string {
	t.Helper()
	doc := readTestFile(t, configurationReference)
	_, rest, ok := strings.Cut(doc, "```yaml\n")
	example, _, closed := strings.Cut(rest, "```\n")
	if !ok || !closed {
		t.Fatalf("%s has no YAML block", configurationReference)
	}
	return example
}

// TestConfigurationReferenceApplies: the complete example of docs/configuration.md applies to a
// migrated database as it is written (its MCP server's address pointed at a test server), and
// applying it again changes nothing.
func TestConfigurationReferenceApplies(t *testing.T) {
	t.Parallel()
	srv := mcptest.New(t, mcptest.Tool{Tool: mcp.Tool{Name: "lookup_customer", Description: "Look a customer up.",
		InputSchema: mcptest.ObjectSchema(map[string]any{"id": map[string]any{"type": "string"}}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, Handler: mcptest.Text("found")})
	example := strings.Replace(referenceExample(t), "http://127.0.0.1:9100/mcp", srv.URL, 1)
	path := filepath.Join(t.TempDir(), "desk.yaml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	env := applyEnv(t)
	env["CRM_TOKEN"], env["DESK_HOOK_SECRET"], env["SLACK_WEBHOOK_URL"] = "crm-test", "whsec_test", "https://hooks.slack.com/services/T/B/x"
	r := cliRun(t, env, nil, "apply", "-f", path)
	if r.code != exitOK || !strings.Contains(r.stdout, "Applied: ") {
		t.Fatalf("the reference example does not apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cliRun(t, env, nil, "apply", "-f", path)
	if r.code != exitOK || !regexp.MustCompile(`Applied: 0 created, 0 updated, \d+ unchanged\.`).MatchString(r.stdout) {
		t.Fatalf("applying the reference example again: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestConfigurationReferenceNamesEveryKey: every key an apply file may hold (the yaml tags of
// apply.File, at every depth) is written in the complete example of docs/configuration.md, so
// a new key cannot go undocumented there.
func TestConfigurationReferenceNamesEveryKey(t *testing.T) {
	t.Parallel()
	example := referenceExample(t)
	var missing []string
	for _, key := range yamlKeys(reflect.TypeFor[apply.File](), "", map[reflect.Type]bool{}) {
		name := key[strings.LastIndex(key, ".")+1:]
		if !regexp.MustCompile(`(^|[\s{,])` + regexp.QuoteMeta(name) + `:`).MatchString(example) {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		t.Errorf("keys missing from the example of %s: %s", configurationReference, strings.Join(missing, ", "))
	}
}

// yamlKeys lists the yaml keys of struct type t and of the structs it holds, as dotted paths
// under prefix, each struct type once.
func yamlKeys(t reflect.Type, prefix string, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		keys = append(keys, prefix+name)
		keys = append(keys, yamlKeys(f.Type, prefix+name+".", seen)...)
	}
	slices.Sort(keys)
	return keys
}
