package tool

import (
	"errors"
	"fmt"
	"slices"

	"runsdesk/runtime/model"
)

// emptyParameters is what the model is offered for a tool that declares no parameters.
const emptyParameters = `{"type":"object","properties":{}}`

// Registry is an immutable set of tools that passed every registration rule. It is safe for
// concurrent use.
type Registry struct {
	tools map[string]Tool
	names []string
}

// New registers tools. It refuses the whole set, returning one error that joins a *Problem for
// every broken rule of every tool, when a tool is nil, has a name outside [a-zA-Z0-9_-]{1,64},
// repeats another tool's name, declares an unknown effect, has parameters that are not a JSON
// object schema, requires input with an unusable schema, or both needs approval (marker or a
// declared write) and requires input.
func New(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]Tool, len(tools))}
	var errs []error
	for i, t := range tools {
		if t == nil {
			errs = append(errs, &Problem{Rule: ErrNilTool, Detail: fmt.Sprintf("position %d", i)})
			continue
		}
		name := t.Name()
		errs = append(errs, capabilityProblems(capabilitiesOf(t))...)
		if _, dup := r.tools[name]; dup {
			errs = append(errs, &Problem{Tool: name, Field: "name", Rule: ErrDuplicateName})
			continue
		}
		r.tools[name] = t
		r.names = append(r.names, name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(r.names)
	return r, nil
}

// capabilitiesOf reads the declared capabilities of t. The raw declared effect is kept (not
// normalised by EffectOf) so that an unknown value is reported.
func capabilitiesOf(t Tool) capabilities {
	c := capabilities{name: t.Name(), parameters: t.Parameters()}
	if d, ok := t.(EffectDeclarer); ok {
		c.effect = d.Effect()
	}
	if a, ok := t.(ApprovalRequirer); ok {
		c.approvalMarker = a.RequiresApproval()
	}
	c.inputSchema, c.hasInput = InputSchemaOf(t)
	if r, ok := t.(RemoteTool); ok {
		c.remote, c.approvalMarker = true, r.RemoteApproval()
	}
	return c
}

// With is r with tools registered beside its own: New's rules apply to tools, and a name r
// holds already is ErrDuplicateName. r is unchanged.
func (r *Registry) With(tools ...Tool) (*Registry, error) {
	added, err := New(tools...)
	if err != nil {
		return nil, err
	}
	out := &Registry{tools: make(map[string]Tool, len(r.Names())+len(added.names)), names: r.Names()}
	for _, n := range out.names {
		out.tools[n] = r.tools[n]
	}
	for _, n := range added.names {
		if _, dup := out.tools[n]; dup {
			return nil, &Problem{Tool: n, Field: "name", Rule: ErrDuplicateName}
		}
		out.tools[n] = added.tools[n]
		out.names = append(out.names, n)
	}
	slices.Sort(out.names)
	return out, nil
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the registered names, sorted. The caller owns the returned slice.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.names)
}

// EffectOfName returns the effect of the tool registered under name, and
// EffectNonIdempotentWrite for a name that is not registered (fenced as the riskiest write).
func (r *Registry) EffectOfName(name string) Effect {
	t, ok := r.Get(name)
	if !ok {
		return EffectNonIdempotentWrite
	}
	return EffectOf(t)
}

// Specs describes the tools named in names, in that order, for offering to the model. Names
// that are not registered, and repeats, are skipped; nil offers nothing. A tool without
// parameters is offered with an empty object schema.
func (r *Registry) Specs(names []string) []model.ToolSpec {
	specs := make([]model.ToolSpec, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		t, ok := r.Get(name)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		params := slices.Clone(t.Parameters())
		if emptyJSON(params) {
			params = []byte(emptyParameters)
		}
		specs = append(specs, model.ToolSpec{Name: name, Description: t.Description(), Parameters: params})
	}
	return specs
}
