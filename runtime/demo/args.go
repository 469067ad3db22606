package demo

import (
	"bytes"
	"encoding/json"
	"fmt"

	"runsdesk/runtime/tool"
)

// decodeArgs reads a call's arguments (a JSON object) into v.
func decodeArgs(call tool.Call, v any) error {
	raw := bytes.TrimSpace(call.Arguments)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("the arguments are not the JSON object %s expects", call.Name)
	}
	return nil
}

// failed is a tool error the model sees.
func failed(format string, args ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// text is a successful result.
func text(format string, args ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, args...)}
}

// euros formats an amount.
func euros(v float64) string { return fmt.Sprintf("%.2f EUR", v) }
