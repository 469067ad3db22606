package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// StandingApprovalSpec is one entry of `standing_approvals:` (docs/decisions.md, "Standing
// approvals"): calls of Tool, offered by Configuration (absent: any configuration offering
// it), whose arguments validate against the JSON Schema When, are approved automatically,
// until Until (RFC 3339) and at most MaxUses times. AllowWrites is required for a tool that
// declares a non-idempotent write.
type StandingApprovalSpec struct {
	Name          string `yaml:"name,omitempty"`
	Tool          string `yaml:"tool,omitempty"`
	Configuration string `yaml:"configuration,omitempty"`
	When          JSON   `yaml:"when,omitempty"`
	Until         string `yaml:"until,omitempty"`
	MaxUses       *int64 `yaml:"max_uses,omitempty"`
	AllowWrites   bool   `yaml:"allow_writes,omitempty"`
}

// RuleStore stores standing approvals; *db.Store implements it. UpsertDesk is
// Catalog.UpsertCatalog that also writes rules in the same transaction.
type RuleStore interface {
	StandingApprovals(ctx context.Context) ([]runtime.StandingApproval, error)
	UpsertDesk(ctx context.Context, tools []tool.Definition, configs []runtime.Configuration, rules runtime.RuleChanges) ([]bool, error)
}

// KindStandingApproval is the Kind of a Change to a standing approval.
const KindStandingApproval = "standing approval"

// Revoke is the action on a stored standing approval the file no longer holds; Recreate the
// action on one the file holds that the CLI revoked (`rules revoke`): the file is the whole
// set, so it is put back in force.
const (
	Revoke   Action = "revoke"
	Recreate Action = "re-create"
)

// ruleName is the rule a standing approval's name follows.
var ruleName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// standingApprovals checks every entry of specs against the file's tools and configurations
// (defs, configs) and the stored ones, and returns them as stored: a name of lower-case
// letters, digits, '-' and '_' (at most 64), given once; a known tool; a configuration, when
// set, that exists and offers the tool; when, a JSON Schema that compiles; until in RFC 3339;
// max_uses at least 1; allow_writes true for a tool that declares a non-idempotent write.
func (v *validator) standingApprovals(specs []StandingApprovalSpec, effects map[string]tool.Effect, offers map[string][]string) []runtime.StandingApproval {
	out := make([]runtime.StandingApproval, 0, len(specs))
	seen := map[string]int{}
	for i, s := range specs {
		path := joinIndex("standing_approvals", i)
		r := runtime.StandingApproval{Name: s.Name, Tool: s.Tool, Configuration: s.Configuration, When: json.RawMessage(s.When), AllowWrites: s.AllowWrites}
		switch first, dup := seen[s.Name]; {
		case s.Name == "":
			v.c.add(path+".name", "is required")
		case !ruleName.MatchString(s.Name):
			v.c.add(path+".name", "must be 1-64 lower-case letters, digits, '-' or '_', starting with a letter or digit")
		case dup:
			v.c.add(path+".name", "repeats standing_approvals[%d].name %q", first, s.Name)
		default:
			seen[s.Name] = i
		}
		effect, known := effects[s.Tool]
		switch {
		case s.Tool == "":
			v.c.add(path+".tool", "is required")
		case !known:
			v.c.add(path+".tool", "names no tool: %q is neither defined in this file, stored, nor built in", s.Tool)
		case effect == tool.EffectNonIdempotentWrite && !s.AllowWrites:
			v.c.add(path+".allow_writes", "must be true: tool %q declares a non-idempotent write", s.Tool)
		}
		if s.Configuration != "" {
			tools, ok := offers[s.Configuration]
			switch {
			case !ok:
				v.c.add(path+".configuration", "names no configuration: %q is neither in this file nor stored", s.Configuration)
			case known && !slices.Contains(tools, s.Tool):
				v.c.add(path+".configuration", "configuration %q does not offer tool %q", s.Configuration, s.Tool)
			}
		}
		if len(r.When) == 0 {
			v.c.add(path+".when", "is required: a JSON Schema over the call's arguments")
		} else {
			v.schema(path+".when", r.When)
		}
		if s.Until != "" {
			t, err := time.Parse(time.RFC3339, s.Until)
			if err != nil {
				v.c.add(path+".until", "must be a time in RFC 3339 (2027-01-31T00:00:00Z)")
			}
			r.Until = t.Unix()
		}
		if s.MaxUses != nil {
			if *s.MaxUses < 1 {
				v.c.add(path+".max_uses", "must be at least 1")
			}
			r.MaxUses = *s.MaxUses
		}
		out = append(out, r)
	}
	return out
}

// toolEffects are the effects of every tool a rule may name: defined in the file, stored or
// built in.
func (a *Applier) toolEffects(defs, stored []tool.Definition) map[string]tool.Effect {
	out := map[string]tool.Effect{}
	for _, t := range a.builtinTools {
		out[t.Name()] = tool.EffectOf(t)
	}
	for _, list := range [][]tool.Definition{stored, defs} {
		for _, d := range list {
			out[d.Name] = d.Effect
			if !d.Effect.Valid() {
				out[d.Name] = tool.EffectNonIdempotentWrite
			}
		}
	}
	return out
}

// configurationTools are the tools each configuration offers: stored, then as the file
// sets them.
func configurationTools(defs, stored []runtime.Configuration) map[string][]string {
	out := map[string][]string{}
	for _, list := range [][]runtime.Configuration{stored, defs} {
		for _, c := range list {
			out[c.Identifier] = c.Tools
		}
	}
	return out
}

// ruleChanges are what applying rules does to the stored standing approvals: each rule is
// created (absent or revoked by an apply), re-created (revoked by the CLI, noted with when),
// updated or unchanged; each stored rule in force that rules lacks is revoked.
func ruleChanges(rules, stored []runtime.StandingApproval) []Change {
	have := map[string]runtime.StandingApproval{}
	for _, r := range stored {
		have[r.Name] = r
	}
	var out []Change
	inFile := map[string]bool{}
	for _, r := range rules {
		inFile[r.Name] = true
		h, ok := have[r.Name]
		ch := changeOf(KindStandingApproval, r.Name, ok && h.Revoked == 0, func() []string { return ruleDiff(h, r) })
		if ok && h.Revoked != 0 && h.RevokedBy == runtime.RevokedByCLI {
			ch.Action = Recreate
			ch.Note = "revoked by the CLI at " + time.Unix(h.Revoked, 0).UTC().Format(time.RFC3339)
		}
		out = append(out, ch)
	}
	for _, r := range stored {
		if !inFile[r.Name] && r.Revoked == 0 {
			out = append(out, Change{Kind: KindStandingApproval, Name: r.Name, Action: Revoke})
		}
	}
	return out
}

// ruleDiff names the fields in which stored differs from what r sets (uses, author and
// revocation aside).
func ruleDiff(stored, r runtime.StandingApproval) []string {
	return differing(
		field{"tool", stored.Tool == r.Tool},
		field{"configuration", stored.Configuration == r.Configuration},
		field{"when", compact(stored.When) == compact(r.When)},
		field{"until", stored.Until == r.Until},
		field{"max_uses", stored.MaxUses == r.MaxUses},
		field{"allow_writes", stored.AllowWrites == r.AllowWrites},
	)
}

// upsert writes p: through the catalog, or when p holds standing approvals through the
// rule store with the rules created, updated or revoked (author as their author), all in one
// transaction.
func (a *Applier) upsert(ctx context.Context, p *Plan) ([]bool, error) {
	if p.rules == nil {
		return a.catalog.UpsertCatalog(ctx, p.tools, p.configurations)
	}
	if a.rules == nil {
		return nil, fmt.Errorf("standing approvals cannot be stored here")
	}
	byName := map[string]runtime.StandingApproval{}
	for _, r := range *p.rules {
		byName[r.Name] = r
	}
	changes := runtime.RuleChanges{Author: a.author}
	for _, ch := range p.Changes {
		switch {
		case ch.Kind != KindStandingApproval:
		case ch.Action == Revoke:
			changes.Revoke = append(changes.Revoke, ch.Name)
		case ch.Action != Unchanged:
			changes.Write = append(changes.Write, byName[ch.Name])
		}
	}
	return a.rules.UpsertDesk(ctx, p.tools, p.configurations, changes)
}
