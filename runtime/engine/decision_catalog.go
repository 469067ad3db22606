package engine

import (
	"context"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// versionedRegistry is the registry a decision last built, with the version of the tool
// definitions it was built from.
type versionedRegistry struct {
	version string
	reg     *tool.Registry
}

func newVersionedRegistry() *cache.Cache[struct{}, versionedRegistry] {
	return cache.New[struct{}, versionedRegistry](cache.Options{Max: 1})
}

// loadForDecision reads the run a decision is about and, in the same statement, the
// configuration it checks against and the version of the tool definitions; the definitions
// are read only when their version is not the one the last decision's registry was built
// from. A change to any of them applies to the next decision, as when all were read apart.
func (r *Runtime) loadForDecision(ctx context.Context, uuid string) (runtime.Run, runtime.DecisionRead, *runtime.Error) {
	last, _ := r.decided.Get(struct{}{})
	run, read, err := r.store.FindForDecision(ctx, uuid, last.version)
	if e := loadedRun(uuid, run, err); e != nil {
		return runtime.Run{}, runtime.DecisionRead{}, e
	}
	return run, read, nil
}

// decisionToolset is the registry of the tools read (or found unchanged) by decisionCatalog.
func (r *Runtime) decisionToolset(ctx context.Context, read runtime.ToolsRead) (*tool.Registry, error) {
	if !read.Read {
		if last, ok := r.decided.Get(struct{}{}); ok && last.version == read.Version {
			return last.reg, nil
		}
		return r.toolset(ctx)
	}
	reg, err := r.registryOf(read.Definitions)
	if err != nil {
		return nil, err
	}
	r.decided.Put(struct{}{}, versionedRegistry{version: read.Version, reg: reg})
	return reg, nil
}
