package engine

import (
	"strings"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// definitionPin is the pin of the tools names as reg has them and of cfg's decision policy:
// what a pause stores at suspend and what a decision compares it with.
func definitionPin(names []string, reg *tool.Registry, policy runtime.PolicyPin) runtime.DefinitionPin {
	p := runtime.DefinitionPin{Tools: make(map[string]runtime.ToolPin, len(names)), Policy: policy}
	for _, name := range names {
		t, ok := reg.Get(name)
		p.Tools[name] = toolPin(t, ok)
	}
	return p
}

// policyOf is cfg's decision policy as a pause pins it.
func policyOf(cfg runtime.Configuration) runtime.PolicyPin {
	return runtime.PolicyPin{FourEyes: cfg.RequireSecondApprover}
}

// toolPin is what a pause pins of t (registered: known); an unregistered tool pins as the
// cautious write the gates treat it as.
func toolPin(t tool.Tool, known bool) runtime.ToolPin {
	if !known {
		return runtime.ToolPin{Effect: string(tool.EffectNonIdempotentWrite), Approval: true}
	}
	p := runtime.ToolPin{
		Registered: true, Parameters: runtime.SchemaDigest(t.Parameters()), Effect: string(tool.EffectOf(t)),
		AdminOnly: tool.IsAdminOnly(t), Approval: tool.NeedsApproval(t), Editable: tool.IsEditable(t),
	}
	if raw, ok := tool.InputSchemaOf(t); ok {
		p.InputSchema = runtime.SchemaDigest(raw)
	}
	if w, ok := t.(tool.Waiter); ok {
		p.Wait, _ = w.WaitPolicy().Encode()
	}
	return p
}

// pinHolds is the decision pipeline's definitions check: the definitions as they are now
// (current) must be those the decision is bound to, presented (the PinDigest of a view) or,
// when "", those pinned with the pause. A pause stored without a pin binds nothing, so only
// a presented digest of the current definitions passes it. Refused: ToolChanged with what
// changed since the pause.
func pinHolds(uuid, presented string, pinned *runtime.DefinitionPin, current runtime.DefinitionPin) *runtime.Error {
	want := presented
	if want == "" && pinned != nil {
		want = pinned.Digest()
	}
	if schema.DigestEqual(want, current.Digest()) {
		return nil
	}
	e := newError(runtime.CodeToolChanged, uuid, "the tool definitions or the decision policy changed since the run paused; review it again")
	e.Changes = runtime.Changes(pinned, current)
	return e
}

// pinsRemembered bounds how many current pins the pages' memo holds.
const pinsRemembered = 1024

// pinMemo remembers, for the pages, the pin of a pause's tools as they are now under one
// registry and decision policy, with its digest. A registry is built once per set of tool
// definitions and never changes afterwards, so an entry never goes stale; suspends and
// decisions compute their pins afresh (definitionPin).
type pinMemo struct {
	entries *cache.Cache[pinKey, currentPin]
}

type pinKey struct {
	reg    *tool.Registry
	names  string
	policy runtime.PolicyPin
}

// currentPin is a pin and its digest; callers must not modify it.
type currentPin struct {
	pin    runtime.DefinitionPin
	digest string
}

func newPinMemo() *pinMemo {
	return &pinMemo{entries: cache.New[pinKey, currentPin](cache.Options{Max: pinsRemembered})}
}

// current is definitionPin of names under reg and policy, with its digest, computed once.
func (m *pinMemo) current(names []string, reg *tool.Registry, policy runtime.PolicyPin) currentPin {
	key := pinKey{reg: reg, names: strings.Join(names, "\x00"), policy: policy}
	c, _ := m.entries.GetOrLoad(key, func() (currentPin, error) {
		p := definitionPin(names, reg, policy)
		return currentPin{pin: p, digest: p.Digest()}, nil
	})
	return c
}
