package main

import (
	"log/slog"

	"runsdesk/db"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/tool"
)

// runtimeOptions are the parts of a runtime that differ between commands.
type runtimeOptions struct {
	getenv  func(string) string
	log     *slog.Logger
	tools   []tool.Tool
	workers int
	// leasing is zero for commands that run no workers; the runtime's defaults apply.
	leasing leasing
}

// newRuntime builds a runtime on conn's store. Nothing runs until the caller starts its worker
// pool with Run; the caller closes it.
func newRuntime(conn *conn, o runtimeOptions) *engine.Runtime {
	store := db.New(conn.pool)
	return engine.New(engine.Config{
		Store:        store,
		Catalog:      store,
		Tools:        o.tools,
		Getenv:       o.getenv,
		Logger:       o.log.With("component", "runtime"),
		Workers:      o.workers,
		Lease:        o.leasing.Lease,
		ReapInterval: o.leasing.ReapInterval,
		PollInterval: o.leasing.PollInterval,
		Hooks:        faultHooks(o.getenv, o.log),
	})
}
