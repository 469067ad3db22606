package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool"
)

// builtin is an in-process tool the program registers.
type builtin struct{}

func (builtin) Name() string                { return "builtin_tool" }
func (builtin) Description() string         { return "built in" }
func (builtin) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (builtin) Execute(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok"}, nil
}

const okTool = `  - name: t
    http: {url: "http://127.0.0.1:9000/t"}
`

const okConfiguration = `  - identifier: c
    name: C
    provider: {kind: scripted, script: [{content: hi}]}
`

func TestEveryRule(t *testing.T) {
	cases := []struct {
		name string
		file string
		want string
	}{
		{"not YAML", "configurations: [", "not valid YAML: "},
		{"empty", "", "the file is empty"},
		{"only a comment", "# nothing\n", "the file is empty"},
		{"nothing defined", "configurations: []\n", "the file defines no configurations and no tools"},
		{"two documents", "tools:\n" + okTool + "---\ntools: []\n", "the file holds more than one YAML document"},
		{"root not a mapping", "- a\n", "must be a mapping (key: value), not a list"},
		{"unknown top-level key", "tools:\n" + okTool + "tool: []\n", "tool: unknown key (known keys: configurations, tools, mcp_servers, standing_approvals)"},
		{"unknown tool key", "tools:\n" + okTool + "    colour: red\n", "tools[0].colour: unknown key"},
		{"unknown http key", "tools:\n  - name: t\n    http: {url: \"http://x/\", retries: 3}\n", "tools[0].http.retries: unknown key"},
		{"unknown provider key", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted, script: [{content: hi}], temperature: 1}\n", "configurations[0].provider.temperature: unknown key"},
		{"unknown script key", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted, script: [{text: hi}]}\n", "configurations[0].provider.script[0].text: unknown key"},
		{"key given twice", "tools:\n  - name: t\n    name: u\n    http: {url: \"http://x/\"}\n", "tools[0].name: given twice (first on line 2)"},
		{"key given twice at the top", "tools:\n" + okTool + "tools:\n" + okTool, "tools: given twice (first on line 1) (line 4)"},
		{"header given twice", "tools:\n  - name: t\n    http:\n      url: \"http://x/\"\n      headers: {X-A: a, X-A: b}\n", "tools[0].http.headers.X-A: given twice (line 5)"},
		{"schema key given twice", "tools:\n" + okTool + "    parameters:\n      type: object\n      type: array\n", "tools[0].parameters.type: given twice (line 6)"},
		{"nested schema key given twice", "tools:\n" + okTool + "    input_schema: {type: object, properties: {a: {type: string, title: A, title: B}}}\n", "tools[0].input_schema.properties.a.title: given twice (line 4)"},
		{"arguments key given twice", "configurations:\n  - identifier: c\n    name: C\n    tools: [stored_tool]\n    provider: {kind: scripted, script: [{tool_calls: [{name: stored_tool, arguments: {a: 1, a: 2}}]}]}\n", "configurations[0].provider.script[0].tool_calls[0].arguments.a: given twice (line 5)"},
		{"key in another case", "tools:\n" + okTool + "    Description: d\n", "tools[0].Description: unknown key (known keys: name, description"},
		{"top-level key in another case", "Tools:\n" + okTool, "Tools: unknown key (known keys: configurations, tools, mcp_servers, standing_approvals) (line 1)"},
		{"invalid UTF-8", "tools:\n  - name: t\n    description: \"caf\xe9\"\n    http: {url: \"http://x/\"}\n", "the file is not valid UTF-8 text (or holds a NUL character); save it as UTF-8 (line 3)"},
		{"invalid UTF-8 in a comment", "# r\xe9sum\xe9\ntools:\n" + okTool, "the file is not valid UTF-8 text (or holds a NUL character); save it as UTF-8 (line 1)"},
		{"NUL character", "tools:\n" + okTool + "    description: \"a\x00b\"\n", "the file is not valid UTF-8 text (or holds a NUL character); save it as UTF-8 (line 4)"},
		{"merge key", "tools:\n  - <<: {name: t}\n    http: {url: \"http://x/\"}\n", "tools[0]: merge keys (<<) are not supported"},
		{"list where a mapping belongs", "tools:\n  - name: t\n    http: [a]\n", "tools[0].http: must be a mapping (key: value), not a list"},
		{"text where a list belongs", "configurations:\n" + okConfiguration + "    tools: lookup\n", "configurations[0].tools: must be a list, not a single value"},
		{"not a boolean", "tools:\n" + okTool + "    admin_only: yes please\n", "tools[0].admin_only: must be true or false"},
		{"not a whole number", "configurations:\n" + okConfiguration + "    max_iterations: 2.5\n", "configurations[0].max_iterations: must be a whole number"},
		{"duration without unit", "tools:\n  - name: t\n    http: {url: \"http://x/\", timeout: 10}\n", `tools[0].http.timeout: must be a duration with a unit`},
		{"infinite number in a schema", "tools:\n" + okTool + "    parameters: {type: object, maximum: .inf}\n", "tools[0].parameters.maximum: must be a finite number"},
		{"custom YAML tag", "tools:\n" + okTool + "    parameters: {type: !thing object}\n", "tools[0].parameters.type: the YAML tag"},

		{"tool without name", "tools:\n  - http: {url: \"http://x/\"}\n", "tools[0].name: required"},
		{"tool with a bad name", "tools:\n  - name: issue refund\n    http: {url: \"http://x/\"}\n", "tools[0].name: name must be 1 to 64 characters"},
		{"duplicate tool", "tools:\n" + okTool + okTool, `tools[1].name: "t" is already defined by tools[0]`},
		{"tool shadows a built-in", "tools:\n  - name: builtin_tool\n    http: {url: \"http://x/\"}\n", `tools[0].name: "builtin_tool" is a built-in tool of this program`},
		{"tool without http offered by an agent", "configurations:\n" + okConfiguration + "    tools: [t]\n" + "tools:\n  - name: t\n", `configurations[0].tools[0]: tool "t" has no http: or mcp:, so nothing would run it; only kind: external`},
		{"http without url", "tools:\n  - name: t\n    http: {timeout: 5s}\n", "tools[0].http.url: required: the endpoint the tool calls"},
		{"relative URL", "tools:\n  - name: t\n    http: {url: /refund}\n", "tools[0].http.url: url must be an absolute http or https URL"},
		{"file URL", "tools:\n  - name: t\n    http: {url: \"file:///etc/passwd\"}\n", "tools[0].http.url: url must be an absolute http or https URL"},
		{"credentials in URL", "tools:\n  - name: t\n    http: {url: \"https://u:p@x/\"}\n", "tools[0].http.url: url must be"},
		{"timeout too long", "tools:\n  - name: t\n    http: {url: \"http://x/\", timeout: 6m}\n", "tools[0].http.timeout: timeout must be positive and at most 5m"},
		{"timeout below a millisecond", "tools:\n  - name: t\n    http: {url: \"http://x/\", timeout: 10us}\n", "tools[0].http.timeout: must be at least 1ms"},
		{"response limit too large", "tools:\n  - name: t\n    http: {url: \"http://x/\", max_response_bytes: 999999999}\n", "tools[0].http.max_response_bytes: max response bytes must be"},
		{"arguments bound too large", "tools:\n" + okTool + "    max_arguments_bytes: 2000000\n", "tools[0].max_arguments_bytes: max arguments bytes must be positive and at most 1 MiB"},
		{"negative arguments bound", "tools:\n" + okTool + "    max_arguments_bytes: -1\n", "tools[0].max_arguments_bytes: max arguments bytes must be"},
		{"bad header name", "tools:\n  - name: t\n    http: {url: \"http://x/\", headers: {\"X Key\": v}}\n", "tools[0].http.headers.X Key: header must have a valid name"},
		{"unterminated env reference", "tools:\n  - name: t\n    http: {url: \"http://x/\", headers: {X-Key: \"${TOKEN\"}}\n", "tools[0].http.headers.X-Key: header must have"},
		{"env var not set", "tools:\n  - name: t\n    http: {url: \"http://x/\", headers: {X-Key: \"${UNSET_VAR}\"}}\n", "tools[0].http.headers.X-Key: environment variable UNSET_VAR is not set"},
		{"unknown effect", "tools:\n" + okTool + "    effect: write\n", `tools[0].effect: effect must be read_only, idempotent_write or non_idempotent_write (got "write")`},
		{"parameters not an object schema", "tools:\n" + okTool + "    parameters: {type: array}\n", `tools[0].parameters: parameters must be a JSON object schema`},
		{"parameters not a JSON Schema", "tools:\n" + okTool + "    parameters: {type: object, properties: {a: {type: 7}}}\n", `tools[0].parameters: schema is not a valid JSON Schema (keyword "type") at /properties/a/type`},
		{"parameters with a remote ref", "tools:\n" + okTool + "    parameters: {type: object, properties: {a: {$ref: \"http://example.com/s.json\"}}}\n", `tools[0].parameters: schema refers to an external document`},
		{"empty input schema", "tools:\n" + okTool + "    input_schema: {}\n", "tools[0].input_schema: not usable (an empty schema accepts anything)"},
		{"input schema without type or properties", "tools:\n" + okTool + "    input_schema: {description: nothing}\n", "tools[0].input_schema: not usable (it needs a type or a non-empty properties map)"},
		{"input schema without properties", "tools:\n" + okTool + "    input_schema: {type: object}\n", `tools[0].input_schema: tool "t" would ask a person for nothing: it yields no field a person can fill (it declares no properties)`},
		{"input schema not an object", "tools:\n" + okTool + "    input_schema: {type: string}\n", `tools[0].input_schema: tool "t" would ask a person for nothing: it yields no field a person can fill (its type is string, not object)`},
		{"input schema whose properties are false", "tools:\n" + okTool + "    input_schema: {type: object, properties: {x: false}}\n", `tools[0].input_schema: tool "t" would ask a person for nothing: it yields no field a person can fill (each of its properties is false, so none accepts a value)`},
		{"remote tool's input schema without properties", "mcp_servers:\n  - name: crm\n    url: \"http://127.0.0.1:9/mcp\"\ntools:\n  - name: r\n    mcp: {server: crm, tool: x}\n    input_schema: {type: object}\n", `tools[0].input_schema: tool "r" would ask a person for nothing: it yields no field a person can fill (it declares no properties)`},
		{"input schema not a JSON Schema", "tools:\n" + okTool + "    input_schema: {type: object, properties: {a: {minimum: x}}}\n", `tools[0].input_schema: schema is not a valid JSON Schema (keyword "minimum")`},
		{"write with input", "tools:\n" + okTool + "    effect: idempotent_write\n    input_schema: {type: object, properties: {a: {type: string}}}\n", "tools[0]: a tool may not both need approval and require input"},
		{"approval with input", "tools:\n" + okTool + "    requires_approval: true\n    input_schema: {type: object, properties: {a: {type: string}}}\n", "tools[0]: a tool may not both need approval and require input"},

		{"configuration without identifier", "configurations:\n  - name: C\n    provider: {kind: scripted, script: [{content: hi}]}\n", "configurations[0].identifier: required"},
		{"bad identifier", "configurations:\n  - identifier: \"a b\"\n    name: C\n    provider: {kind: scripted, script: [{content: hi}]}\n", "configurations[0].identifier: must be 1 to 150 characters"},
		{"duplicate identifier", "configurations:\n" + okConfiguration + okConfiguration, `configurations[1].identifier: "c" is already defined by configurations[0]`},
		{"configuration without name", "configurations:\n  - identifier: c\n    provider: {kind: scripted, script: [{content: hi}]}\n", "configurations[0].name: required"},
		{"max_iterations zero", "configurations:\n" + okConfiguration + "    max_iterations: 0\n", "configurations[0].max_iterations: must be between 1 and 20, got 0"},
		{"max_iterations 21", "configurations:\n" + okConfiguration + "    max_iterations: 21\n", "configurations[0].max_iterations: must be between 1 and 20, got 21"},
		{"undefined tool", "configurations:\n" + okConfiguration + "    tools: [nope]\n", `configurations[0].tools[0]: tool "nope" is not defined`},
		{"tool listed twice", "configurations:\n" + okConfiguration + "    tools: [builtin_tool, builtin_tool]\n", `configurations[0].tools[1]: tool "builtin_tool" is listed twice`},
		{"without provider", "configurations:\n  - identifier: c\n    name: C\n", "configurations[0].provider: required"},
		{"provider without kind", "configurations:\n  - identifier: c\n    name: C\n    provider: {model: m}\n", "configurations[0].provider.kind: required"},
		{"unknown kind", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: foo}\n", `configurations[0].provider.kind: unknown kind "foo"`},
		{"openai without base_url", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, model: m}\n", "configurations[0].provider.base_url: required for kind openai"},
		{"openai with a bad base_url", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, model: m, base_url: \"ftp://x/\"}\n", "configurations[0].provider.base_url: must be an absolute http or https URL"},
		{"openai without model", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, base_url: \"http://x/v1\"}\n", "configurations[0].provider.model: required for kind openai"},
		{"api key env not set", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, model: m, base_url: \"http://x/v1\", api_key_env: UNSET_KEY}\n", "configurations[0].provider.api_key_env: environment variable UNSET_KEY is not set"},
		{"api key env not a name", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, model: m, base_url: \"http://x/v1\", api_key_env: \"sk-123\"}\n", "configurations[0].provider.api_key_env: must be the name of an environment variable"},
		{"too many retries", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, model: m, base_url: \"http://x/v1\", max_retries: 11}\n", "configurations[0].provider.max_retries: must be between 0 and 10"},
		{"openai with a script", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: openai, model: m, base_url: \"http://x/v1\", script: [{content: hi}]}\n", "configurations[0].provider.script: only kind scripted uses a script"},
		{"scripted without script", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted}\n", "configurations[0].provider.script: required for kind scripted"},
		{"scripted with a model", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted, model: m, script: [{content: hi}]}\n", "configurations[0].provider.model: only kind openai uses model"},
		{"script calls an unknown tool", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted, script: [{tool_calls: [{name: ghost}]}]}\n", `configurations[0].provider.script[0].tool_calls[0].name: tool "ghost" is not defined`},
		{"script calls an unlisted tool", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted, script: [{tool_calls: [{name: stored_tool}]}]}\n", `configurations[0].provider.script[0].tool_calls[0].name: tool "stored_tool" is not in this configuration's tools`},
		{"script call without name", "configurations:\n  - identifier: c\n    name: C\n    provider: {kind: scripted, script: [{tool_calls: [{arguments: {}}]}]}\n", "configurations[0].provider.script[0].tool_calls[0].name: required"},
		{"script arguments a list", "configurations:\n  - identifier: c\n    name: C\n    tools: [stored_tool]\n    provider: {kind: scripted, script: [{tool_calls: [{name: stored_tool, arguments: [1]}]}]}\n", "configurations[0].provider.script[0].tool_calls[0].arguments: must be a mapping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{tools: []tool.Definition{{Name: "stored_tool", HTTP: tool.HTTPConfig{URL: "http://x/"}}}}
			a := apply.New(apply.Config{Catalog: cat, Builtin: []tool.Tool{builtin{}}, Getenv: fullEnv})
			wantOneProblem(t, cat, a, c.file, c.want)
		})
	}
}

func TestValidReferencesPass(t *testing.T) {
	file := `configurations:
  - identifier: c
    name: C
    tools: [stored_tool, builtin_tool, t]
    provider:
      kind: scripted
      script:
        - tool_calls:
            - {name: stored_tool, arguments: {a: 1}}
            - {name: builtin_tool, arguments: '{"broken'}
            - {name: t}
tools:
` + okTool
	cat := &fakeCatalog{tools: []tool.Definition{{Name: "stored_tool", HTTP: tool.HTTPConfig{URL: "http://x/"}}}}
	a := apply.New(apply.Config{Catalog: cat, Builtin: []tool.Tool{builtin{}}, Getenv: env(nil)})
	if _, err := a.Plan(context.Background(), []byte(file)); err != nil {
		t.Fatalf("Plan: %v", err)
	}
}

// TestIdentifierRules pins the README's rules at their boundaries: a configuration identifier
// is [a-z0-9][a-z0-9_-]{0,149} (lower case: the database compares identifiers without case),
// a tool name [A-Za-z0-9_-]{1,64}, and two tool names may not differ only in case.
func TestIdentifierRules(t *testing.T) {
	configuration := func(id string) string {
		return "configurations:\n  - identifier: \"" + id + "\"\n    name: C\n    provider: {kind: scripted, script: [{content: hi}]}\n"
	}
	toolNamed := func(names ...string) string {
		out := "tools:\n"
		for _, n := range names {
			out += "  - name: \"" + n + "\"\n    http: {url: \"http://x/\"}\n"
		}
		return out
	}
	const badIdentifier = "configurations[0].identifier: must be 1 to 150 characters from a-z, 0-9, _ and -, starting with a letter or digit"
	const badName = "tools[0].name: name must be 1 to 64 characters from a-z, A-Z, 0-9, _ and -"
	cases := []struct {
		name, file, want string
	}{
		{"one character", configuration("a"), ""},
		{"digits, underscore, hyphen", configuration("0refunds_v2-eu"), ""},
		{"150 characters", configuration(strings.Repeat("a", 150)), ""},
		{"151 characters", configuration(strings.Repeat("a", 151)), badIdentifier},
		{"upper case", configuration("Refunds"), badIdentifier},
		{"dot", configuration("refunds.v2"), badIdentifier},
		{"leading hyphen", configuration("-refunds"), badIdentifier},
		{"leading underscore", configuration("_refunds"), badIdentifier},
		{"space", configuration("a b"), badIdentifier},
		{"non-ASCII letter", configuration("réfunds"), badIdentifier},
		{"tool of one character", toolNamed("t"), ""},
		{"tool with capitals, digits, _ and -", toolNamed("Issue_Refund-2"), ""},
		{"tool starting with a hyphen", toolNamed("-t"), ""},
		{"tool of 64 characters", toolNamed(strings.Repeat("T", 64)), ""},
		{"tool of 65 characters", toolNamed(strings.Repeat("T", 65)), badName},
		{"tool with a dot", toolNamed("issue.refund"), badName},
		{"tool with a non-ASCII letter", toolNamed("rückgabe"), badName},
		{"tools differing in case", toolNamed("lookup", "Lookup"), `tools[1].name: "Lookup" differs from tools[0] ("lookup") only in case; tool names must differ in more than case`},
		{"tool differing in case from a stored one", toolNamed("Stored_Tool"), `tools[0].name: "Stored_Tool" differs from the stored tool "stored_tool" only in case; tool names must differ in more than case`},
		{"tool differing in case from a built-in", toolNamed("Builtin_Tool"), `tools[0].name: "Builtin_Tool" differs from the built-in tool "builtin_tool" only in case; tool names must differ in more than case`},
		{"stored tool redefined exactly", toolNamed("stored_tool"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{tools: []tool.Definition{{Name: "stored_tool", HTTP: tool.HTTPConfig{URL: "http://x/"}}}}
			a := apply.New(apply.Config{Catalog: cat, Builtin: []tool.Tool{builtin{}}, Getenv: fullEnv})
			_, err := a.Plan(context.Background(), []byte(c.file))
			if c.want == "" {
				if err != nil {
					t.Fatalf("Plan: %v", err)
				}
				return
			}
			var ps apply.Problems
			if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), c.want) {
				t.Errorf("Plan error = %v, want exactly one problem starting %q", err, c.want)
			}
		})
	}
}
