package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"runsdesk/runtime/quorum"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

const toolColumns = `name, description, parameters, input_schema, effect, admin_only,
	requires_approval, http_url, http_headers, http_timeout_ms, http_max_response_bytes,
	mcp_server, mcp_tool, mcp_annotations, mcp_digest, mcp_elicitation_timeout_ms, editable, wait_policy,
	max_arguments_bytes, approvals_required, allow_automatic_vote`

const sqlToolDefinitions = `SELECT ` + toolColumns + ` FROM tx_runsdesk_tool
	WHERE deleted = 0 ORDER BY uid`

const sqlToolForUpsert = `SELECT uid, deleted, ` + toolColumns + ` FROM tx_runsdesk_tool
	WHERE name = ? FOR UPDATE`

const sqlInsertTool = `INSERT INTO tx_runsdesk_tool (` + toolColumns + `, tstamp, crdate)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const sqlUpdateTool = `UPDATE tx_runsdesk_tool
	SET name = ?, description = ?, parameters = ?, input_schema = ?, effect = ?, admin_only = ?,
	    requires_approval = ?, http_url = ?, http_headers = ?, http_timeout_ms = ?,
	    http_max_response_bytes = ?, mcp_server = ?, mcp_tool = ?, mcp_annotations = ?,
	    mcp_digest = ?, mcp_elicitation_timeout_ms = ?, editable = ?, wait_policy = ?,
	    max_arguments_bytes = ?, approvals_required = ?, allow_automatic_vote = ?, deleted = 0, tstamp = ?
	WHERE uid = ?`

// toolRow is a tool definition in column form, as compared and written by UpsertTool.
type toolRow struct {
	name, description, parameters, inputSchema, effect   string
	adminOnly, requiresApproval, editable, automaticVote bool
	url, headers, wait                                   string
	timeoutMS, maxResponseBytes                          int64
	mcpServer, mcpTool, mcpAnnotations, mcpDigest        string
	mcpElicitationMS, maxArgumentsBytes, approvals       int64
}

func (r toolRow) args() []any {
	return []any{r.name, r.description, r.parameters, r.inputSchema, r.effect, r.adminOnly,
		r.requiresApproval, r.url, r.headers, r.timeoutMS, r.maxResponseBytes,
		r.mcpServer, r.mcpTool, r.mcpAnnotations, r.mcpDigest, r.mcpElicitationMS, r.editable, r.wait, r.maxArgumentsBytes,
		r.approvals, r.automaticVote}
}

func (r *toolRow) dest() []any {
	return []any{&r.name, &r.description, &r.parameters, &r.inputSchema, &r.effect,
		&r.adminOnly, &r.requiresApproval, &r.url, &r.headers, &r.timeoutMS, &r.maxResponseBytes,
		&r.mcpServer, &r.mcpTool, &r.mcpAnnotations, &r.mcpDigest, &r.mcpElicitationMS, &r.editable, &r.wait, &r.maxArgumentsBytes,
		&r.approvals, &r.automaticVote}
}

// compactJSON returns raw compacted ("" for empty), refusing text that is not JSON.
func compactJSON(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "", nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

func toolToRow(d tool.Definition) (toolRow, error) {
	params, err := compactJSON(d.Parameters)
	if err != nil {
		return toolRow{}, fmt.Errorf("parameters: %w", err)
	}
	input, err := compactJSON(d.InputSchema)
	if err != nil {
		return toolRow{}, fmt.Errorf("input schema: %w", err)
	}
	headers := ""
	if len(d.HTTP.Headers) > 0 {
		h, err := json.Marshal(d.HTTP.Headers)
		if err != nil {
			return toolRow{}, fmt.Errorf("http headers: %w", err)
		}
		headers = string(h)
	}
	waitPolicy, err := d.Wait.Encode()
	if err != nil {
		return toolRow{}, err
	}
	row := toolRow{
		name: d.Name, description: d.Description, parameters: params, inputSchema: input,
		effect: string(d.Effect), adminOnly: d.AdminOnly, requiresApproval: d.RequiresApproval,
		url: d.HTTP.URL, headers: headers, timeoutMS: d.HTTP.Timeout.Milliseconds(),
		maxResponseBytes: d.HTTP.MaxResponseBytes, editable: d.Editable, wait: waitPolicy,
		maxArgumentsBytes: int64(d.MaxArgumentsBytes),
		approvals:         int64(d.Quorum.Required), automaticVote: d.Quorum.AutomaticVote,
	}
	if m := d.MCP; m != nil {
		ann, err := compactJSON(m.Annotations)
		if err != nil {
			return toolRow{}, fmt.Errorf("mcp annotations: %w", err)
		}
		row.mcpServer, row.mcpTool, row.mcpAnnotations, row.mcpDigest = m.Server, m.Tool, ann, m.Digest
		row.mcpElicitationMS = m.ElicitationTimeout.Milliseconds()
	}
	return row, nil
}

func rowToTool(r toolRow) (tool.Definition, error) {
	d := tool.Definition{
		Name: r.name, Description: r.description, Effect: tool.Effect(r.effect),
		AdminOnly: r.adminOnly, RequiresApproval: r.requiresApproval, Editable: r.editable,
		MaxArgumentsBytes: int(r.maxArgumentsBytes),
		Quorum:            quorum.Policy{Required: int(r.approvals), AutomaticVote: r.automaticVote},
		HTTP: tool.HTTPConfig{URL: r.url, Timeout: time.Duration(r.timeoutMS) * time.Millisecond,
			MaxResponseBytes: r.maxResponseBytes},
	}
	if r.parameters != "" {
		d.Parameters = json.RawMessage(r.parameters)
	}
	if r.inputSchema != "" {
		d.InputSchema = json.RawMessage(r.inputSchema)
	}
	if r.headers != "" {
		if err := json.Unmarshal([]byte(r.headers), &d.HTTP.Headers); err != nil {
			return tool.Definition{}, fmt.Errorf("tool %q: http_headers: %w", r.name, err)
		}
	}
	if r.mcpServer != "" {
		d.MCP = &tool.MCPConfig{Server: r.mcpServer, Tool: r.mcpTool, Digest: r.mcpDigest,
			ElicitationTimeout: time.Duration(r.mcpElicitationMS) * time.Millisecond}
		if r.mcpAnnotations != "" {
			d.MCP.Annotations = json.RawMessage(r.mcpAnnotations)
		}
	}
	w, err := wait.Decode(r.wait)
	if err != nil {
		return tool.Definition{}, fmt.Errorf("tool %q: wait_policy: %w", r.name, err)
	}
	d.Wait = w
	return d, nil
}

// ToolDefinitions returns every tool definition not deleted, by uid. JSON columns are
// returned as stored ("" as nil); undecodable headers fail the call with an error naming the
// tool.
func (s *Store) ToolDefinitions(ctx context.Context) ([]tool.Definition, error) {
	out, err := queryAll(ctx, s.prep.on(nil), scanTool, sqlToolDefinitions)
	if err != nil {
		return nil, fmt.Errorf("db: tool definitions: %w", err)
	}
	return out, nil
}

func scanTool(rows *sql.Rows) (tool.Definition, error) {
	var r toolRow
	if err := rows.Scan(r.dest()...); err != nil {
		return tool.Definition{}, err
	}
	return rowToTool(r)
}
