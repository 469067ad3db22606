package apply

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"runsdesk/runtime/quorum"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// MCPServerSpec is one entry of `mcp_servers:`: a remote tool server reached over streamable
// HTTP. Header values may reference environment variables as ${NAME}, expanded only when
// connecting. RequiresApproval is the operator's declaration for the server's tools: only a
// literal false turns approval off (absent means true). ApprovalsRequired and
// AllowAutomaticVote are its tools' quorum keys, unless a tool sets its own.
type MCPServerSpec struct {
	Name               string            `yaml:"name,omitempty"`
	URL                string            `yaml:"url,omitempty"`
	Headers            map[string]string `yaml:"headers,omitempty"`
	RequiresApproval   *bool             `yaml:"requires_approval,omitempty"`
	Timeout            *Duration         `yaml:"timeout,omitempty"`
	ElicitationTimeout *Duration         `yaml:"elicitation_timeout,omitempty"`
	// MaxResponseBytes bounds the results of the server's tools (0 = tool.DefaultMaxResponseBytes).
	MaxResponseBytes   int64 `yaml:"max_response_bytes,omitempty"`
	ApprovalsRequired  *int  `yaml:"approvals_required,omitempty"`
	AllowAutomaticVote bool  `yaml:"allow_automatic_vote,omitempty"`
}

// MCPSpec is a tool's `mcp:`: tool Tool of server Server; its description and parameters come
// from the server's tools/list. MaxResponseBytes, when set, bounds the tool's results in place
// of its server's.
type MCPSpec struct {
	Server           string `yaml:"server,omitempty"`
	Tool             string `yaml:"tool,omitempty"`
	MaxResponseBytes int64  `yaml:"max_response_bytes,omitempty"`
}

// Bounds of a server entry.
const (
	maxServerNameLen      = 150
	minElicitationTimeout = time.Second
	maxElicitationTimeout = 24 * time.Hour
)

var serverNameRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// mcpServer is a validated server entry: where it stands in the file and how to reach it.
type mcpServer struct {
	path               string
	server             tool.MCPServer
	requiresApproval   bool
	elicitationTimeout time.Duration
	maxResponseBytes   int64
	quorum             quorum.Policy
}

// mcpServers checks every server entry and indexes the valid ones by name in v.servers.
func (v *validator) mcpServers(specs []MCPServerSpec) {
	v.servers = map[string]*mcpServer{}
	for i, s := range specs {
		path := joinIndex("mcp_servers", i)
		srv := &mcpServer{path: path, requiresApproval: s.RequiresApproval == nil || *s.RequiresApproval,
			server: tool.MCPServer{URL: s.URL, Headers: s.Headers}, elicitationTimeout: tool.DefaultElicitationTimeout,
			maxResponseBytes: s.MaxResponseBytes, quorum: v.quorum(path, s.ApprovalsRequired, s.AllowAutomaticVote)}
		switch _, dup := v.servers[s.Name]; {
		case s.Name == "":
			v.c.add(joinKey(path, "name"), "required")
		case len(s.Name) > maxServerNameLen || !serverNameRule.MatchString(s.Name):
			v.c.add(joinKey(path, "name"), "must be 1 to %d characters from A-Z, a-z, 0-9, _ and -, starting with a letter or digit", maxServerNameLen)
		case dup:
			v.c.add(joinKey(path, "name"), "%q is already defined by %s", s.Name, v.servers[s.Name].path)
		default:
			v.servers[s.Name] = srv
		}
		if s.Timeout != nil {
			srv.server.Timeout = time.Duration(*s.Timeout).Truncate(time.Millisecond)
			if srv.server.Timeout < time.Millisecond || srv.server.Timeout > tool.MaxTimeout {
				v.c.add(joinKey(path, "timeout"), "must be between 1ms and %s", tool.MaxTimeout)
			}
		}
		if s.ElicitationTimeout != nil {
			srv.elicitationTimeout = time.Duration(*s.ElicitationTimeout).Truncate(time.Millisecond)
			if srv.elicitationTimeout < minElicitationTimeout || srv.elicitationTimeout > maxElicitationTimeout {
				v.c.add(joinKey(path, "elicitation_timeout"), "must be between %s and %s", minElicitationTimeout, maxElicitationTimeout)
			}
		}
		probe := tool.Definition{Name: "probe", HTTP: tool.HTTPConfig{URL: s.URL, Headers: s.Headers, MaxResponseBytes: s.MaxResponseBytes}}
		for _, p := range toolProblems(probe) {
			switch {
			case p.Field == "http.url":
				v.c.add(joinKey(path, "url"), "%s", checkMessage(p, probe))
			case strings.HasPrefix(p.Field, "http."):
				v.c.add(joinKey(path, strings.TrimPrefix(p.Field, "http.")), "%s", checkMessage(p, probe))
			}
		}
		v.headerEnv(joinKey(path, "headers"), s.Headers)
	}
}

// remoteTool checks the mcp: entry of tool spec s at path and returns its definition, to be
// completed from the server's listing (listRemote). A remote tool takes its description,
// parameters, effect and approval from its server, so setting them in the file is a problem;
// every other rule of a tool applies to it (its wait: here, editable once listed). Its quorum
// keys are its own where set, else its server entry's (remoteQuorum).
func (v *validator) remoteTool(path string, s ToolSpec, def tool.Definition) tool.Definition {
	for key, set := range map[string]bool{"http": s.HTTP != nil, "description": s.Description != "",
		"parameters": len(s.Parameters) > 0, "effect": s.Effect != "", "requires_approval": s.RequiresApproval} {
		if set {
			v.c.add(joinKey(path, key), "not allowed with mcp: a remote tool's %s comes from its server", key)
		}
	}
	mpath := joinKey(path, "mcp")
	if s.MCP.Tool == "" {
		v.c.add(joinKey(mpath, "tool"), "required: the tool's name on the server")
	}
	own := v.quorum(path, s.ApprovalsRequired, s.AllowAutomaticVote)
	srv, ok := v.servers[s.MCP.Server]
	switch {
	case s.MCP.Server == "":
		v.c.add(joinKey(mpath, "server"), "required: the name of an entry of mcp_servers")
	case !ok:
		v.c.add(joinKey(mpath, "server"), "%q is not defined in mcp_servers", s.MCP.Server)
	default:
		def.HTTP = tool.HTTPConfig{URL: srv.server.URL, Headers: srv.server.Headers, Timeout: srv.server.Timeout,
			MaxResponseBytes: cmp.Or(s.MCP.MaxResponseBytes, srv.maxResponseBytes)}
		def.RequiresApproval = srv.requiresApproval
		def.MCP = &tool.MCPConfig{Server: s.MCP.Server, Tool: s.MCP.Tool, ElicitationTimeout: srv.elicitationTimeout}
		def.Quorum = remoteQuorum(own, srv.quorum)
	}
	probe := tool.Definition{Name: "probe", HTTP: tool.HTTPConfig{URL: "http://probe/", MaxResponseBytes: s.MCP.MaxResponseBytes}}
	for _, p := range toolProblems(probe) {
		v.c.add(joinKey(mpath, strings.TrimPrefix(p.Field, "http.")), "%s", checkMessage(p, probe))
	}
	v.inputSchema(joinKey(path, "input_schema"), s.Name, def.InputSchema)
	def.Wait = v.wait(joinKey(path, "wait"), s.Wait, &def)
	return def
}

// remoteQuorum is the quorum keys stored for a remote tool: its own approvals_required when
// set, else its server's; an automatic vote when either allows it.
func remoteQuorum(own, server quorum.Policy) quorum.Policy {
	return quorum.Policy{Required: cmp.Or(own.Required, server.Required), AutomaticVote: own.AutomaticVote || server.AutomaticVote}
}

// toolProblems is tool.Check of def as *tool.Problem values.
func toolProblems(def tool.Definition) []*tool.Problem {
	var out []*tool.Problem
	for _, err := range tool.Check(def) {
		if p, ok := err.(*tool.Problem); ok {
			out = append(out, p)
		}
	}
	return out
}

// listRemote completes every remote tool of p from its server's tools/list (each server
// listed once): description, parameters, annotations, digest and the effect the annotations
// map to; then applies the registration rules to the completed definition. A server that
// cannot be listed, or does not list a tool, is a problem; a stored tool the server now
// describes differently is noted in p.Drift.
func (a *Applier) listRemote(ctx context.Context, v *validator, p *Plan, stored map[string]tool.Definition) {
	listings := map[string]map[string]tool.ListedTool{}
	failed := map[string]bool{}
	for i := range p.tools {
		d := &p.tools[i]
		if d.MCP == nil {
			continue
		}
		path := joinIndex("tools", i)
		srv := v.servers[d.MCP.Server]
		listed, ok := listings[d.MCP.Server]
		if !ok && !failed[d.MCP.Server] {
			var err error
			listed, err = tool.ListMCP(ctx, srv.server, a.client, a.getenv)
			if err != nil {
				failed[d.MCP.Server] = true
				v.c.add(srv.path, "could not read the server's tools/list: %v", err)
				continue
			}
			listings[d.MCP.Server] = listed
		}
		lt, ok := listed[d.MCP.Tool]
		if !ok {
			if !failed[d.MCP.Server] {
				v.c.add(joinKey(path, "mcp.tool"), "server %s does not list a tool %q", d.MCP.Server, d.MCP.Tool)
			}
			continue
		}
		d.Description, d.Parameters = lt.Description, lt.InputSchema
		d.MCP.Annotations, d.MCP.Digest = lt.Annotations, lt.Digest
		d.Effect = tool.EffectOfAnnotations(lt.Annotations)
		for _, prob := range toolProblems(*d) {
			if !strings.HasPrefix(prob.Field, "http.") {
				v.c.add(fieldPath(path, prob.Field), "%s", checkMessage(prob, *d))
			}
		}
		v.editable(path, *d)
		if have, ok := stored[d.Name]; ok && have.MCP != nil && have.MCP.Digest != lt.Digest {
			p.Drift = append(p.Drift, Drift{Server: d.MCP.Server, Tool: d.MCP.Tool, Name: d.Name})
		}
	}
}

// Drift is a stored remote tool whose server now describes it differently from what was
// applied: until the file is applied again, its calls are refused.
type Drift struct {
	Server, Tool, Name string
}

// String says what changed.
func (d Drift) String() string {
	return fmt.Sprintf("server %s: tool %s (%s) changed since it was applied", d.Server, d.Tool, d.Name)
}

// SchemaTier is the tier of one tool's input schema (schema.Classify).
type SchemaTier struct {
	Tool   string
	Path   string
	Report schema.TierReport
}

// String renders the tier line of the report.
func (t SchemaTier) String() string {
	return fmt.Sprintf("tool %s: input_schema %s", t.Tool, t.Report)
}

// tiers labels the input schema of every tool of p that has one.
func tiers(p *Plan) []SchemaTier {
	var out []SchemaTier
	for i, d := range p.tools {
		if len(d.InputSchema) == 0 {
			continue
		}
		out = append(out, SchemaTier{Tool: d.Name, Path: joinKey(joinIndex("tools", i), "input_schema"), Report: schema.Classify(d.InputSchema)})
	}
	return out
}
