package apply_test

import (
	"context"
	"errors"
	"sync"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// fakeCatalog keeps tools and configurations in memory; its upserts write only when the
// stored JSON encoding differs, as the real store's do.
type fakeCatalog struct {
	mu      sync.Mutex
	tools   []tool.Definition
	configs []runtime.Configuration
	writes  int
	fail    error
}

func (f *fakeCatalog) Configurations(context.Context) ([]runtime.Configuration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	return append([]runtime.Configuration(nil), f.configs...), nil
}

func (f *fakeCatalog) ToolDefinitions(context.Context) ([]tool.Definition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	return append([]tool.Definition(nil), f.tools...), nil
}

// UpsertCatalog writes every item or, when fail is set or an identifier is empty, none.
func (f *fakeCatalog) UpsertCatalog(_ context.Context, tools []tool.Definition, configs []runtime.Configuration) ([]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	for _, c := range configs {
		if c.Identifier == "" {
			return nil, errors.New("empty identifier")
		}
	}
	var wrote []bool
	for _, d := range tools {
		wrote = append(wrote, f.upsertTool(d))
	}
	for _, c := range configs {
		wrote = append(wrote, f.upsertConfiguration(c))
	}
	return wrote, nil
}

func (f *fakeCatalog) upsertTool(d tool.Definition) bool {
	for i, have := range f.tools {
		if have.Name == d.Name {
			if encode(have) == encode(d) {
				return false
			}
			f.tools[i] = d
			f.writes++
			return true
		}
	}
	f.tools = append(f.tools, d)
	f.writes++
	return true
}

func (f *fakeCatalog) upsertConfiguration(c runtime.Configuration) bool {
	for i, have := range f.configs {
		if have.Identifier == c.Identifier {
			c.UID = have.UID
			if encode(have) == encode(c) {
				return false
			}
			f.configs[i] = c
			f.writes++
			return true
		}
	}
	c.UID = int64(len(f.configs) + 1)
	f.configs = append(f.configs, c)
	f.writes++
	return true
}
