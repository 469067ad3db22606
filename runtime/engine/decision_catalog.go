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

// decisionCatalog reads the configuration uid a decision checks against and, in the same
// statement, the version of the tool definitions; the definitions are read only when their
// version is not the one the last decision's registry was built from. A change to either
// applies to the next decision, as when both were read in full.
func (r *Runtime) decisionCatalog(ctx context.Context, uid int64) (runtime.Configuration, runtime.ToolsRead, error) {
	last, _ := r.decided.Get(struct{}{})
	return r.catalog.ConfigurationForDecision(ctx, uid, last.version)
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
