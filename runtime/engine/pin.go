package engine

import (
	"encoding/json"
	"hash/maphash"
	"reflect"
	"strings"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// definitionPin is the pin of the tools names as reg has them and of cfg's decision policy:
// what a pause stores at suspend and what a decision compares it with. The tools are read as
// they are now; only their schemas' digests come from digests, by text.
func definitionPin(names []string, reg *tool.Registry, policy runtime.PolicyPin, digests *schemaDigests) runtime.DefinitionPin {
	p := runtime.DefinitionPin{Tools: make(map[string]runtime.ToolPin, len(names)), Policy: policy}
	for _, name := range names {
		t, ok := reg.Get(name)
		p.Tools[name] = toolPin(t, ok, digests)
	}
	return p
}

// schemaDigests remembers runtime.SchemaDigest by schema text (found by a 64-bit hash,
// compared whole), so the pins every suspend and decision compute afresh canonicalize each
// tool's schemas once per text rather than once per pin. Safe for concurrent use.
type schemaDigests struct {
	seed  maphash.Seed
	texts *cache.Cache[uint64, textDigest]
}

// textDigest is a schema text and its SchemaDigest.
type textDigest struct{ text, digest string }

// schemaDigestsRemembered bounds how many schema texts schemaDigests holds.
const schemaDigestsRemembered = 1024

func newSchemaDigests() *schemaDigests {
	return &schemaDigests{seed: maphash.MakeSeed(), texts: cache.New[uint64, textDigest](cache.Options{Max: schemaDigestsRemembered})}
}

// of is runtime.SchemaDigest(raw), computed once per text.
func (d *schemaDigests) of(raw json.RawMessage) string {
	got, _ := d.texts.GetOrLoad(maphash.Bytes(d.seed, raw), func() (textDigest, error) {
		return textDigest{text: string(raw), digest: runtime.SchemaDigest(raw)}, nil
	})
	if got.text != string(raw) {
		return runtime.SchemaDigest(raw)
	}
	return got.digest
}

// policyOf is cfg's decision policy as a pause pins it.
func policyOf(cfg runtime.Configuration) runtime.PolicyPin {
	return runtime.PolicyPin{FourEyes: cfg.RequireSecondApprover, ApprovalsRequired: cfg.Quorum.Required, AutomaticVote: cfg.Quorum.AutomaticVote}
}

// toolPin is what a pause pins of t (registered: known); an unregistered tool pins as the
// cautious write the gates treat it as.
func toolPin(t tool.Tool, known bool, digests *schemaDigests) runtime.ToolPin {
	if !known {
		return runtime.ToolPin{Effect: string(tool.EffectNonIdempotentWrite), Approval: true}
	}
	p := runtime.ToolPin{
		Registered: true, Parameters: digests.of(t.Parameters()), Effect: string(tool.EffectOf(t)),
		AdminOnly: tool.IsAdminOnly(t), Approval: tool.NeedsApproval(t), Editable: tool.IsEditable(t),
	}
	q := tool.QuorumOf(t)
	p.ApprovalsRequired, p.AutomaticVote = q.Required, q.AutomaticVote
	if raw, ok := tool.InputSchemaOf(t); ok {
		p.InputSchema = digests.of(raw)
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
// Equal pins have equal digests, so a pause's own pin equal to the current one holds
// without computing either.
func pinHolds(uuid, presented string, pinned *runtime.DefinitionPin, current runtime.DefinitionPin) *runtime.Error {
	if presented == "" && pinned != nil && reflect.DeepEqual(*pinned, current) {
		return nil
	}
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
	digests *schemaDigests
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

func newPinMemo(digests *schemaDigests) *pinMemo {
	return &pinMemo{entries: cache.New[pinKey, currentPin](cache.Options{Max: pinsRemembered}), digests: digests}
}

// current is definitionPin of names under reg and policy, with its digest, computed once.
func (m *pinMemo) current(names []string, reg *tool.Registry, policy runtime.PolicyPin) currentPin {
	key := pinKey{reg: reg, names: strings.Join(names, "\x00"), policy: policy}
	c, _ := m.entries.GetOrLoad(key, func() (currentPin, error) {
		p := definitionPin(names, reg, policy, m.digests)
		return currentPin{pin: p, digest: p.Digest()}, nil
	})
	return c
}
