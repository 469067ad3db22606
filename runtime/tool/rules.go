package tool

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"runsdesk/runtime/schema"
)

// maxNameLen is the longest tool name the OpenAI function-calling API accepts.
const maxNameLen = 64

// validName reports whether name follows the OpenAI function-name rule [a-zA-Z0-9_-]{1,64}.
func validName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// emptyJSON reports whether raw holds no value at all (absent or whitespace).
func emptyJSON(raw json.RawMessage) bool {
	return len(strings.TrimSpace(string(raw))) == 0
}

// parametersProblem returns why raw is not a JSON object schema, or "" when it is. Absent
// parameters are fine: the tool takes no arguments.
func parametersProblem(raw json.RawMessage) string {
	if emptyJSON(raw) {
		return ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "not a JSON object"
	}
	var typ string
	if err := json.Unmarshal(obj["type"], &typ); err != nil || typ != "object" {
		return "type is not \"object\""
	}
	if props, ok := obj["properties"]; ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(props, &m); err != nil || m == nil {
			return "properties is not a JSON object"
		}
	}
	return ""
}

// capabilities is what the rules shared by New and Check need to know about one tool.
type capabilities struct {
	name           string
	effect         Effect
	parameters     json.RawMessage
	approvalMarker bool
	hasInput       bool
	inputSchema    json.RawMessage
	// remote: the tool runs on a remote server whose declaration (approvalMarker) alone
	// decides approval.
	remote bool
}

// capabilityProblems applies the name, effect, parameters, input-schema and approval-plus-input
// rules to c, collecting every broken rule.
func capabilityProblems(c capabilities) []error {
	var errs []error
	add := func(field string, rule error, detail string) {
		errs = append(errs, &Problem{Tool: c.name, Field: field, Rule: rule, Detail: detail})
	}
	if !validName(c.name) {
		add("name", ErrInvalidName, fmt.Sprintf("got %q", truncate(c.name, 80)))
	}
	if !c.effect.Valid() {
		add("effect", ErrUnknownEffect, fmt.Sprintf("got %q", truncate(string(c.effect), 40)))
	}
	if d := parametersProblem(c.parameters); d != "" {
		add("parameters", ErrInvalidParameters, d)
	}
	if c.hasInput && !schema.Usable(c.inputSchema) {
		add("input_schema", ErrUnusableInputSchema, "")
	}
	if c.hasInput {
		switch {
		case c.remote && c.approvalMarker:
			add("", ErrApprovalAndInput, "its server declares that calls require approval and it declares an input schema")
		case c.remote:
		case c.approvalMarker:
			add("", ErrApprovalAndInput, "it requires approval and declares an input schema")
		case c.effect.IsWrite() || !c.effect.Valid():
			add("", ErrApprovalAndInput, fmt.Sprintf("its effect %s implies approval and it declares an input schema", c.effect))
		}
	}
	return errs
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
