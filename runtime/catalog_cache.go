package runtime

import (
	"context"
	"sync"
	"time"

	"runsdesk/runtime/tool"
)

// DisplayConfigurations returns the catalog's configurations for pages to show, as this
// runtime read them at most 2 s ago (displayFresh): one read serves every caller until then,
// and a configuration applied meanwhile is shown once the read is renewed. A store failure is
// the catalog's error and is never remembered. The slice is shared between callers, who must
// not modify it. Starting or deciding a run never uses it: those read the catalog themselves.
func (r *Runtime) DisplayConfigurations(ctx context.Context) ([]Configuration, error) {
	return r.shown.configurations.get(r.now, func() ([]Configuration, error) {
		return r.catalog.Configurations(ctx)
	})
}

// displayToolset is toolset as pages show it (a pause's tools): remembered like
// DisplayConfigurations, while decisions and segments call toolset itself.
func (r *Runtime) displayToolset(ctx context.Context) (*tool.Registry, error) {
	return r.shown.tools.get(r.now, func() (*tool.Registry, error) {
		return r.toolset(ctx)
	})
}

// shownCatalog is the catalog as pages show it: the configurations and the tool registry,
// each remembered on its own.
type shownCatalog struct {
	configurations remembered[[]Configuration]
	tools          remembered[*tool.Registry]
}

// remembered is the last value read, with when its read began.
type remembered[T any] struct {
	mu  sync.Mutex
	val T
	at  time.Time
	ok  bool
}

// get returns the remembered value while it is fresh at now(), else the value read reads,
// remembering it unless reading failed. Callers wait for one another, so one read serves
// everyone who asks during it.
func (m *remembered[T]) get(now func() time.Time, read func() (T, error)) (T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := now()
	if m.ok && fresh(m.at, at) {
		return m.val, nil
	}
	v, err := read()
	if err != nil {
		var zero T
		return zero, err
	}
	m.val, m.at, m.ok = v, at, true
	return v, nil
}
