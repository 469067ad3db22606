package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"runsdesk/runtime/schema"
)

// DefinitionPin is what a pause pins of the definitions a decision on it depends on, as they
// were when the run paused (docs/state-machine.md, "Definitions pinned to the pause"): each
// pending call's tool by name and the configuration's decision policy. A decision made
// against other definitions is refused as CodeToolChanged.
type DefinitionPin struct {
	Tools  map[string]ToolPin `json:"tools"`
	Policy PolicyPin          `json:"policy"`
}

// ToolPin is a tool's definition as a decision depends on it. Parameters and InputSchema are
// digests (ValueDigest of the schema, "" when the tool has none), never the schemas.
type ToolPin struct {
	Registered  bool   `json:"registered"`
	Parameters  string `json:"parameters"`
	InputSchema string `json:"inputSchema"`
	Effect      string `json:"effect"`
	AdminOnly   bool   `json:"adminOnly"`
	Approval    bool   `json:"approval"`
	Editable    bool   `json:"editable"`
	// Wait is the canonical JSON of the tool's wait policy, "" when it declares none.
	Wait string `json:"wait"`
	// ApprovalsRequired and AutomaticVote are the tool's own quorum keys (zero: none; left out
	// of the digest then, so pins taken before the keys existed still hold).
	ApprovalsRequired int  `json:"approvalsRequired,omitempty"`
	AutomaticVote     bool `json:"automaticVote,omitempty"`
}

// PolicyPin is the configuration's decision policy.
type PolicyPin struct {
	FourEyes bool `json:"fourEyes"`
	// ApprovalsRequired and AutomaticVote are the configuration's quorum keys (zero: the
	// defaults, left out of the digest).
	ApprovalsRequired int  `json:"approvalsRequired,omitempty"`
	AutomaticVote     bool `json:"automaticVote,omitempty"`
}

// Digest is the pin's digest: the lowercase hex SHA-256 of its canonical JSON.
func (p DefinitionPin) Digest() string {
	return schema.ValueDigest(p)
}

// DefinitionChange is one difference between the pinned definitions and the current ones:
// Tool names the tool ("" for the configuration's policy), Field what changed ("effect",
// "parameters", "four_eyes", …), Was and Now the values shown to a reviewer (a schema as
// "changed", never its text).
type DefinitionChange struct {
	Tool  string
	Field string
	Was   string
	Now   string
}

// Setting reports whether c is a setting of the configuration (its decision policy), not a
// tool's definition nor a pause stored without a pin.
func (c DefinitionChange) Setting() bool { return c.Tool == "" && c.Field != "pinned" }

// Changes lists how now differs from the pin p, tools by name, then the policy. A pause
// stored without a pin (pinned nil) is one change of field "pinned": its definitions are
// unknown, so it counts as changed.
func Changes(pinned *DefinitionPin, now DefinitionPin) []DefinitionChange {
	if pinned == nil {
		return []DefinitionChange{{Field: "pinned", Was: "not recorded", Now: "current definitions"}}
	}
	var out []DefinitionChange
	names := make([]string, 0, len(now.Tools))
	for name := range now.Tools {
		names = append(names, name)
	}
	for name := range pinned.Tools {
		if _, ok := now.Tools[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		out = append(out, toolChanges(name, pinned.Tools[name], now.Tools[name])...)
	}
	if pinned.Policy.FourEyes != now.Policy.FourEyes {
		out = append(out, DefinitionChange{Field: "four_eyes", Was: onOff(pinned.Policy.FourEyes), Now: onOff(now.Policy.FourEyes)})
	}
	if pinned.Policy.ApprovalsRequired != now.Policy.ApprovalsRequired {
		out = append(out, DefinitionChange{Field: "approvals_required", Was: approvals(pinned.Policy.ApprovalsRequired), Now: approvals(now.Policy.ApprovalsRequired)})
	}
	if pinned.Policy.AutomaticVote != now.Policy.AutomaticVote {
		out = append(out, DefinitionChange{Field: "allow_automatic_vote", Was: onOff(pinned.Policy.AutomaticVote), Now: onOff(now.Policy.AutomaticVote)})
	}
	return out
}

func toolChanges(name string, was, now ToolPin) []DefinitionChange {
	var out []DefinitionChange
	add := func(field, w, n string) {
		if w != n {
			out = append(out, DefinitionChange{Tool: name, Field: field, Was: w, Now: n})
		}
	}
	add("registered", yesNo(was.Registered), yesNo(now.Registered))
	add("effect", effectText(was.Effect), effectText(now.Effect))
	add("admin_only", yesNo(was.AdminOnly), yesNo(now.AdminOnly))
	add("approval", yesNo(was.Approval), yesNo(now.Approval))
	add("editable", yesNo(was.Editable), yesNo(now.Editable))
	add("approvals_required", approvals(was.ApprovalsRequired), approvals(now.ApprovalsRequired))
	add("allow_automatic_vote", yesNo(was.AutomaticVote), yesNo(now.AutomaticVote))
	if was.Parameters != now.Parameters {
		out = append(out, DefinitionChange{Tool: name, Field: "parameters", Was: "as pinned", Now: "changed"})
	}
	if was.InputSchema != now.InputSchema {
		out = append(out, DefinitionChange{Tool: name, Field: "input_schema", Was: presence(was.InputSchema), Now: changedOrNone(now.InputSchema)})
	}
	if was.Wait != now.Wait {
		out = append(out, DefinitionChange{Tool: name, Field: "wait", Was: presence(was.Wait), Now: changedOrNone(now.Wait)})
	}
	return out
}

// SchemaDigest is the digest a ToolPin keeps of a schema: "" for none, else ValueDigest of
// the schema's JSON value (the raw text when it is not JSON).
func SchemaDigest(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var v any
	if err := decodeNumbers(string(raw), &v); err != nil {
		return schema.ValueDigest(fmt.Sprintf("invalid:%s", raw))
	}
	if v == nil {
		return ""
	}
	return schema.ValueDigest(v)
}

// approvals is a quorum key as a reviewer reads it ("not set" for 0).
func approvals(n int) string {
	if n == 0 {
		return "not set"
	}
	return strconv.Itoa(n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func effectText(e string) string {
	if e == "" {
		return "read_only"
	}
	return e
}

func presence(digest string) string {
	if digest == "" {
		return "none"
	}
	return "as pinned"
}

func changedOrNone(digest string) string {
	if digest == "" {
		return "none"
	}
	return "changed"
}
