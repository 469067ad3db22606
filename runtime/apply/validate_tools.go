package apply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// maxTextBytes is the most a text column (description, system prompt) holds.
const maxTextBytes = 65535

// validator checks a decoded File against the rules and the names already known.
type validator struct {
	c       *collector
	builtin map[string]bool
	stored  map[string]bool
	getenv  func(string) string
	// defined maps the name of every tool the file defines to its index in tools; folded
	// maps each of those names in lower case to the name.
	defined map[string]int
	folded  map[string]string
	// servers indexes the valid mcp_servers entries by name.
	servers map[string]*mcpServer
	// declared names the tools, of the file or stored, that have neither http nor mcp
	// (tool.Definition.Declared); the file's override the stored ones.
	declared map[string]bool
}

// tools checks every tool and returns their definitions in file order.
func (v *validator) tools(specs []ToolSpec) []tool.Definition {
	defs := make([]tool.Definition, 0, len(specs))
	for i, s := range specs {
		defs = append(defs, v.tool(joinIndex("tools", i), i, s))
	}
	return defs
}

// caseClash reports a tool name that differs only in case from another tool of the file, a
// stored tool or a built-in one: the database compares tool names without case, so such a
// tool would replace the other.
func (v *validator) caseClash(path, name string) {
	const rule = "tool names must differ in more than case"
	lower := strings.ToLower(name)
	if first, ok := v.folded[lower]; ok {
		v.c.add(path, "%q differs from tools[%d] (%q) only in case; %s", name, v.defined[first], first, rule)
		return
	}
	v.folded[lower] = name
	for _, known := range []struct {
		what  string
		names map[string]bool
	}{{"stored tool", v.stored}, {"built-in tool", v.builtin}} {
		for other := range known.names {
			if other != name && strings.EqualFold(other, name) {
				v.c.add(path, "%q differs from the %s %q only in case; %s", name, known.what, other, rule)
				return
			}
		}
	}
}

// tool checks one tool definition.
func (v *validator) tool(path string, i int, s ToolSpec) tool.Definition {
	def := toolDefinition(s)
	switch first, dup := v.defined[s.Name]; {
	case s.Name == "":
		v.c.add(joinKey(path, "name"), "required")
	case v.builtin[s.Name]:
		v.c.add(joinKey(path, "name"), "%q is a built-in tool of this program; choose another name", s.Name)
	case dup:
		v.c.add(joinKey(path, "name"), "%q is already defined by tools[%d]", s.Name, first)
	default:
		v.defined[s.Name] = i
		v.caseClash(joinKey(path, "name"), s.Name)
	}
	if len(def.Description) > maxTextBytes {
		v.c.add(joinKey(path, "description"), "longer than %d bytes", maxTextBytes)
	}
	delete(v.declared, s.Name)
	if s.MCP != nil {
		return v.remoteTool(path, s, def)
	}
	switch {
	case s.HTTP == nil:
		v.declared[s.Name] = true
	case s.HTTP.URL == "":
		v.c.add(joinKey(path, "http.url"), "required: the endpoint the tool calls (a tool without http: and mcp: only declares what may be asked)")
	default:
		if t := s.HTTP.Timeout; t != nil && *t > 0 && time.Duration(*t) < time.Millisecond {
			v.c.add(joinKey(path, "http.timeout"), "must be at least 1ms")
		}
	}
	reported := map[string]bool{}
	for _, err := range tool.Check(def) {
		var p *tool.Problem
		if !errors.As(err, &p) {
			v.c.add(path, "%v", err)
			continue
		}
		if (p.Field == "name" && s.Name == "") || (strings.HasPrefix(p.Field, "http.") && s.HTTP == nil) || (p.Field == "http.url" && s.HTTP.URL == "") {
			continue
		}
		reported[p.Field] = true
		v.c.add(fieldPath(path, p.Field), "%s", checkMessage(p, def))
	}
	if !reported["parameters"] {
		v.schema(joinKey(path, "parameters"), def.Parameters)
	}
	if !reported["input_schema"] {
		v.inputSchema(joinKey(path, "input_schema"), s.Name, def.InputSchema)
	}
	v.headerEnv(joinKey(path, "http.headers"), def.HTTP.Headers)
	v.editable(path, def)
	def.Quorum = v.quorum(path, s.ApprovalsRequired, s.AllowAutomaticVote)
	def.Wait = v.wait(joinKey(path, "wait"), s.Wait, &def)
	return def
}

// toolDefinition converts a spec to the definition stored; durations are kept to whole
// milliseconds, as the store keeps them.
func toolDefinition(s ToolSpec) tool.Definition {
	def := tool.Definition{
		Name:              s.Name,
		Description:       s.Description,
		Parameters:        rawJSON(s.Parameters),
		InputSchema:       rawJSON(s.InputSchema),
		Effect:            tool.Effect(s.Effect),
		AdminOnly:         s.AdminOnly,
		RequiresApproval:  s.RequiresApproval,
		Editable:          s.Editable,
		MaxArgumentsBytes: s.MaxArgumentsBytes,
	}
	if s.HTTP != nil {
		def.HTTP = tool.HTTPConfig{URL: s.HTTP.URL, Headers: s.HTTP.Headers, MaxResponseBytes: s.HTTP.MaxResponseBytes}
		if s.HTTP.Timeout != nil {
			def.HTTP.Timeout = time.Duration(*s.HTTP.Timeout).Truncate(time.Millisecond)
		}
		if len(def.HTTP.Headers) == 0 {
			def.HTTP.Headers = nil
		}
	}
	return def
}

// rawJSON returns j as a RawMessage, nil when empty.
func rawJSON(j JSON) json.RawMessage {
	if len(j) == 0 {
		return nil
	}
	return json.RawMessage(j)
}

// fieldPath appends a tool.Problem field ("" = the tool itself) to path.
func fieldPath(path, field string) string {
	if field == "" {
		return path
	}
	return joinKey(path, field)
}

// checkMessage words a tool.Check problem for the file's author.
func checkMessage(p *tool.Problem, def tool.Definition) string {
	if errors.Is(p.Rule, tool.ErrUnusableInputSchema) {
		if bytes.Equal(bytes.TrimSpace(def.InputSchema), []byte("{}")) {
			return "not usable (an empty schema accepts anything)"
		}
		return "not usable (it needs a type or a non-empty properties map)"
	}
	if p.Detail == "" {
		return p.Rule.Error()
	}
	return fmt.Sprintf("%s (%s)", p.Rule.Error(), p.Detail)
}

// schema compiles raw (when set) as a JSON Schema and reports why it cannot be used; it
// returns the compiled schema, nil when unset or refused.
func (v *validator) schema(path string, raw json.RawMessage) *schema.Schema {
	if len(raw) == 0 {
		return nil
	}
	sch, err := schema.Compile(raw)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "schema: ")
		var ce *schema.CompileError
		if errors.As(err, &ce) && ce.Location != "" {
			msg += " at " + ce.Location
		}
		v.c.add(path, "%s", msg)
	}
	return sch
}

// inputSchema checks tool name's input_schema raw as schema does and refuses one that yields
// no field a person can fill: the run would wait for an answer nobody can give.
func (v *validator) inputSchema(path, name string, raw json.RawMessage) {
	if sch := v.schema(path, raw); sch != nil && !sch.HasForm() {
		v.c.add(path, "tool %q would ask a person for nothing: it yields no field a person can fill (%s)", name, sch.NoFormReason())
	}
}

// headerEnv reports every ${NAME} a header references that is not set in the environment.
func (v *validator) headerEnv(path string, headers map[string]string) {
	names := make([]string, 0, len(headers))
	for name := range headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		one := tool.Definition{HTTP: tool.HTTPConfig{Headers: map[string]string{name: headers[name]}}}
		for _, ref := range tool.EnvRefs(one) {
			if v.getenv(ref) == "" {
				v.c.add(joinKey(path, name), "environment variable %s is not set", ref)
			}
		}
	}
}
