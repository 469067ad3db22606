package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// adHocTool is the tool a request of an ad_hoc external configuration asks about under name,
// which no tool of the desk has: declared (nothing runs it) and without parameters (its
// arguments are shown as JSON); for a question (inputSchema set) it asks for input against
// inputSchema, else it is a write, so no service account approves it. A name outside the
// tool name rule, or an unusable schema, is an error.
func adHocTool(name string, inputSchema json.RawMessage) (tool.Tool, error) {
	def := tool.Definition{Name: name, Effect: tool.EffectNonIdempotentWrite}
	if len(inputSchema) > 0 {
		def = tool.Definition{Name: name, InputSchema: inputSchema}
	}
	return tool.NewHTTP(def, nil, nil)
}

// withAdHoc is cfg and reg as pause p of a run of cfg sees them: for an external configuration
// with ad_hoc: true, each tool p names that reg lacks is its adHocTool (the input target's
// with p's schema), registered in a copy of reg and offered by cfg. cfg and reg are returned
// unchanged otherwise. An ad hoc tool that cannot be registered is an error.
func withAdHoc(cfg runtime.Configuration, reg *tool.Registry, p runtime.PauseState) (runtime.Configuration, *tool.Registry, error) {
	if cfg.External == nil || !cfg.External.AdHoc {
		return cfg, reg, nil
	}
	var added []tool.Tool
	offered := slices.Clone(cfg.Tools)
	for _, name := range p.ToolNames() {
		if _, known := reg.Get(name); known {
			continue
		}
		var sch json.RawMessage
		if p.IsInputPause() && name == p.InputTool() {
			sch = p.InputSchema
		}
		t, err := adHocTool(name, sch)
		if err != nil {
			return cfg, reg, fmt.Errorf("ad hoc tool %q: %w", name, err)
		}
		added = append(added, t)
		if !slices.Contains(offered, name) {
			offered = append(offered, name)
		}
	}
	if len(added) == 0 {
		return cfg, reg, nil
	}
	withTools, err := reg.With(added...)
	if err != nil {
		return cfg, reg, fmt.Errorf("ad hoc tools: %w", err)
	}
	cfg.Tools = offered
	return cfg, withTools, nil
}

// adHocRequest is the tool an ad hoc request asks about (req.Tool, one the desk does not
// have): an action to approve, or a question with req.Schema, which must be one JSON object
// of at most runtime.MaxAdHocSchemaBytes declaring at most runtime.MaxAdHocSchemaFields
// properties, compile and render as a form. The compacted schema is returned with it. A
// refusal is CodeInvalidRequest, or CodeInvalidSchema (wrapping runtime.ErrUnusableSchema) for the schema's.
func adHocRequest(req runtime.NewRequest) (tool.Tool, json.RawMessage, error) {
	action, err := adHocTool(req.Tool, nil)
	switch {
	case err != nil:
		return nil, nil, newError(runtime.CodeInvalidRequest, "", "tool: %s", tool.ErrInvalidName)
	case req.Kind != runtime.RequestInput && len(bytes.TrimSpace(req.Schema)) > 0:
		return nil, nil, newError(runtime.CodeInvalidRequest, "", "a schema is given only with a question (kind input)")
	case req.Kind != runtime.RequestInput:
		return action, nil, nil
	}
	sch, e := adHocSchema(req.Schema)
	if e != nil {
		return nil, nil, e
	}
	question, err := adHocTool(req.Tool, sch)
	if err != nil {
		return nil, nil, adHocSchemaRefused("the schema is not one a form can ask for")
	}
	return question, sch, nil
}

// adHocSchema is raw compacted, checked as adHocRequest says.
func adHocSchema(raw json.RawMessage) (json.RawMessage, *runtime.Error) {
	var b bytes.Buffer
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return nil, adHocSchemaRefused("an ad hoc question needs its schema (field \"schema\")")
	case len(raw) > runtime.MaxAdHocSchemaBytes:
		return nil, adHocSchemaRefused("the schema is larger than %d KiB", runtime.MaxAdHocSchemaBytes>>10)
	case json.Compact(&b, raw) != nil || b.Bytes()[0] != '{':
		return nil, adHocSchemaRefused("the schema must be one JSON object")
	}
	var v any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		return nil, adHocSchemaRefused("the schema must be one JSON object")
	}
	if n := schemaFields(v); n > runtime.MaxAdHocSchemaFields {
		return nil, adHocSchemaRefused("the schema declares %d fields, more than %d", n, runtime.MaxAdHocSchemaFields)
	}
	compiled, err := schema.Compile(b.Bytes())
	if err != nil {
		return nil, adHocSchemaRefused("the schema does not compile as a JSON Schema")
	}
	if !compiled.HasForm() {
		return nil, adHocSchemaRefused("the schema yields no form field a person could fill in")
	}
	return b.Bytes(), nil
}

// schemaFields counts the properties v, a decoded JSON Schema, declares at every depth.
func schemaFields(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			n += len(props)
		}
		for _, c := range x {
			n += schemaFields(c)
		}
	case []any:
		for _, c := range x {
			n += schemaFields(c)
		}
	}
	return n
}

// adHocSchemaRefused is the CodeInvalidSchema refusal of an ad hoc question's schema; its
// message names the rule broken and never a value of the schema, so the API may repeat it.
func adHocSchemaRefused(format string, args ...any) *runtime.Error {
	e := newError(runtime.CodeInvalidSchema, "", format, args...)
	e.Err = runtime.ErrUnusableSchema
	return e
}
