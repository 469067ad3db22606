package apply

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// Catalog is the store apply reads and writes; *db.Store implements it. UpsertCatalog writes
// tools (keyed by name), then configurations (keyed by identifier), in one transaction, each
// only when something differs, and reports for each item, tools first, whether it wrote; when
// it fails nothing is written.
type Catalog interface {
	Configurations(ctx context.Context) ([]runtime.Configuration, error)
	ToolDefinitions(ctx context.Context) ([]tool.Definition, error)
	UpsertCatalog(ctx context.Context, tools []tool.Definition, configs []runtime.Configuration) ([]bool, error)
}

// Config wires an Applier. Catalog is required.
type Config struct {
	Catalog Catalog
	// Builtin are the in-process tools the program registers: a configuration may list them,
	// a file may not define a tool of the same name.
	Builtin []tool.Tool
	// Getenv reads the environment variables a file references (os.Getenv when nil).
	Getenv func(string) string
	// Rules stores the file's standing approvals (nil: a file may not hold any); Author is
	// the be_users.uid they are stored as applied by (0: unknown).
	Rules  RuleStore
	Author int64
	// HTTPClient reaches the MCP servers a file names (a fresh client when nil).
	HTTPClient *http.Client
}

// Applier validates apply files and writes them. It is safe for concurrent use.
type Applier struct {
	catalog      Catalog
	builtin      map[string]bool
	builtinTools []tool.Tool
	getenv       func(string) string
	rules        RuleStore
	author       int64
	client       *http.Client
}

// New returns an Applier for cfg.
func New(cfg Config) *Applier {
	a := &Applier{catalog: cfg.Catalog, builtin: map[string]bool{}, getenv: cfg.Getenv, rules: cfg.Rules, author: cfg.Author, client: cfg.HTTPClient}
	for _, t := range cfg.Builtin {
		if t != nil {
			a.builtin[t.Name()] = true
			a.builtinTools = append(a.builtinTools, t)
		}
	}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	return a
}

// Action is what applying a file does to one tool or configuration.
type Action string

// The actions, in plan form.
const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
)

// Kinds of item a Change is about.
const (
	KindTool          = "tool"
	KindConfiguration = "configuration"
)

// Change is what applying does (or did) to one item: Kind is KindTool, KindConfiguration or
// KindStandingApproval, Name the tool name, configuration identifier or rule name. Fields
// names, for an Update, the fields the file changes (as the file names them); Note, when
// set, says why the action is what it is (a rule re-created after the CLI revoked it).
type Change struct {
	Kind   string
	Name   string
	Action Action
	Fields []string
	Note   string
}

// Plan is a file that passed validation, with what applying it would change: tools first,
// then configurations, each in file order, then standing approvals (file order, then the
// revoked ones); the remote tools whose server now describes them differently from what was
// applied (Drift); the tier of every input schema (Tiers); and warnings about what the file
// needs where it is sent from (Warnings: apply may run elsewhere, so they fail nothing).
type Plan struct {
	Changes        []Change
	Drift          []Drift
	Tiers          []SchemaTier
	Warnings       []string
	tools          []tool.Definition
	configurations []runtime.Configuration
	rules          *[]runtime.StandingApproval
}

// Plan reads the stored tools and configurations, decodes and validates data against them,
// and returns what applying it would change, without writing anything. When data has
// problems the error is Problems, holding every one of them; a store failure is returned
// wrapped.
func (a *Applier) Plan(ctx context.Context, data []byte) (*Plan, error) {
	f, c := load(data)
	storedTools, err := a.catalog.ToolDefinitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply: read stored tools: %w", err)
	}
	storedConfigs, err := a.catalog.Configurations(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply: read stored configurations: %w", err)
	}
	v := &validator{c: c, builtin: a.builtin, stored: map[string]bool{}, getenv: a.getenv, defined: map[string]int{}, folded: map[string]string{},
		declared: map[string]bool{}}
	toolsByName := map[string]tool.Definition{}
	for _, d := range storedTools {
		v.stored[d.Name] = true
		v.declared[d.Name] = d.Declared()
		toolsByName[d.Name] = d
	}
	v.mcpServers(f.MCPServers)
	p := &Plan{tools: v.tools(f.Tools)}
	p.configurations = v.configurations(f.Configurations)
	v.storedOffers(f, storedConfigs)
	var storedRules []runtime.StandingApproval
	if f.StandingApprovals != nil {
		if a.rules == nil {
			c.add("standing_approvals", "standing approvals cannot be stored here")
		} else if storedRules, err = a.rules.StandingApprovals(ctx); err != nil {
			return nil, fmt.Errorf("apply: read stored standing approvals: %w", err)
		}
		rules := v.standingApprovals(*f.StandingApprovals, a.toolEffects(p.tools, storedTools), configurationTools(p.configurations, storedConfigs))
		p.rules = &rules
	}
	if c.failed() {
		return nil, c.result()
	}
	if a.listRemote(ctx, v, p, toolsByName); c.failed() {
		return nil, c.result()
	}
	p.Tiers = tiers(p)
	p.Warnings = a.unsetNotifyEnv(p.configurations)
	for _, d := range p.tools {
		have, ok := toolsByName[d.Name]
		p.Changes = append(p.Changes, changeOf(KindTool, d.Name, ok, func() []string { return toolDiff(have, d) }))
	}
	configsByID := map[string]runtime.Configuration{}
	for _, cfg := range storedConfigs {
		configsByID[cfg.Identifier] = cfg
	}
	for _, cfg := range p.configurations {
		have, ok := configsByID[cfg.Identifier]
		p.Changes = append(p.Changes, changeOf(KindConfiguration, cfg.Identifier, ok, func() []string { return configurationDiff(have, cfg) }))
	}
	if p.rules != nil {
		p.Changes = append(p.Changes, ruleChanges(*p.rules, storedRules)...)
	}
	return p, nil
}

// changeOf is the change to item name of kind: Create when it is not stored (exists false),
// else Update of the fields diff names, or Unchanged when it names none.
func changeOf(kind, name string, exists bool, diff func() []string) Change {
	ch := Change{Kind: kind, Name: name, Action: Create}
	if !exists {
		return ch
	}
	if ch.Fields = diff(); len(ch.Fields) == 0 {
		ch.Action = Unchanged
	} else {
		ch.Action = Update
	}
	return ch
}

// Apply writes p in one transaction, tools first, then configurations, then standing
// approvals, and returns what was done to each item (Unchanged when its upsert found nothing
// to change). On a store failure nothing of p is written and the error names the item that
// failed.
func (a *Applier) Apply(ctx context.Context, p *Plan) ([]Change, error) {
	wrote, err := a.upsert(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("apply: %w; nothing was applied", err)
	}
	catalogItems := len(p.tools) + len(p.configurations)
	if len(wrote) != catalogItems {
		return nil, fmt.Errorf("apply: the catalog reported %d writes for %d items", len(wrote), catalogItems)
	}
	done := slices.Clone(p.Changes)
	for i := range wrote {
		done[i] = applied(p.Changes[i], wrote[i])
	}
	return done, nil
}

// applied is the change as done: planned Create or Update when the upsert wrote, else
// Unchanged; a write the plan did not expect (the store changed meanwhile) is an Update.
func applied(planned Change, wrote bool) Change {
	switch {
	case !wrote:
		planned.Action = Unchanged
	case planned.Action == Unchanged:
		planned.Action = Update
	}
	return planned
}
