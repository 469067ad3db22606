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

func (f *fakeCatalog) UpsertTool(_ context.Context, d tool.Definition) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, have := range f.tools {
		if have.Name == d.Name {
			if encode(have) == encode(d) {
				return false, nil
			}
			f.tools[i] = d
			f.writes++
			return true, nil
		}
	}
	f.tools = append(f.tools, d)
	f.writes++
	return true, nil
}

func (f *fakeCatalog) UpsertConfiguration(_ context.Context, c runtime.Configuration) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.Identifier == "" {
		return false, errors.New("empty identifier")
	}
	for i, have := range f.configs {
		if have.Identifier == c.Identifier {
			c.UID = have.UID
			if encode(have) == encode(c) {
				return false, nil
			}
			f.configs[i] = c
			f.writes++
			return true, nil
		}
	}
	c.UID = int64(len(f.configs) + 1)
	f.configs = append(f.configs, c)
	f.writes++
	return true, nil
}
