package engine

import (
	"context"
	"time"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// DisplayConfigurations returns the catalog's configurations for pages to show, as this
// runtime read them at most 2 s ago (displayFresh): one read serves every caller until then,
// and a configuration applied meanwhile is shown once the read is renewed. A store failure is
// the catalog's error and is never remembered. The slice is shared between callers, who must
// not modify it. Starting or deciding a run never uses it: those read the catalog themselves.
func (r *Runtime) DisplayConfigurations(ctx context.Context) ([]runtime.Configuration, error) {
	return r.shown.configurations.GetOrLoad(struct{}{}, func() ([]runtime.Configuration, error) {
		return r.catalog.Configurations(ctx)
	})
}

// displayToolset is toolset as pages show it (a pause's tools): remembered like
// DisplayConfigurations, while decisions and segments call toolset itself.
func (r *Runtime) displayToolset(ctx context.Context) (*tool.Registry, error) {
	return r.shown.tools.GetOrLoad(struct{}{}, func() (*tool.Registry, error) {
		return r.toolset(ctx)
	})
}

// shownCatalog is the catalog as pages show it: the configurations and the tool registry,
// each the last read, remembered for displayFresh from when the read began. Callers asking
// during a read share it.
type shownCatalog struct {
	configurations *cache.Cache[struct{}, []runtime.Configuration]
	tools          *cache.Cache[struct{}, *tool.Registry]
}

func newShownCatalog(now func() time.Time) shownCatalog {
	o := cache.Options{Max: 1, TTL: displayFresh, Now: now}
	return shownCatalog{configurations: cache.New[struct{}, []runtime.Configuration](o), tools: cache.New[struct{}, *tool.Registry](o)}
}
