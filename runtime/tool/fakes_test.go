package tool_test

import (
	"context"
	"encoding/json"

	"runsdesk/runtime/tool"
)

const objectParams = `{"type":"object","properties":{"order_id":{"type":"string"}}}`

const usableInput = `{"type":"object","required":["amount"],"properties":{"amount":{"type":"number"}}}`

// plain is a tool with no optional capability.
type plain struct{ name, params string }

func (p plain) Name() string                { return p.name }
func (p plain) Description() string         { return "does " + p.name }
func (p plain) Parameters() json.RawMessage { return json.RawMessage(p.params) }
func (p plain) Execute(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok"}, nil
}

func newPlain(name string) plain { return plain{name: name, params: objectParams} }

type marker struct {
	plain
	approve bool
}

func (m marker) RequiresApproval() bool { return m.approve }

type effectful struct {
	plain
	effect tool.Effect
}

func (e effectful) Effect() tool.Effect { return e.effect }

type inputter struct {
	plain
	schema string
}

func (i inputter) InputSchema() json.RawMessage { return json.RawMessage(i.schema) }

type markerInput struct {
	inputter
	approve bool
}

func (m markerInput) RequiresApproval() bool { return m.approve }

type effectInput struct {
	inputter
	effect tool.Effect
}

func (e effectInput) Effect() tool.Effect { return e.effect }

type admin struct {
	plain
	admin bool
}

func (a admin) AdminOnly() bool { return a.admin }
