package main

import (
	"log/slog"

	"runsdesk/app"
	"runsdesk/runtime/auditchain"
)

// appConfig is the application on conn as command c builds it: c's environment, log, the
// built-in tools (the demo's with demoTools), this build's fault points, and the worker pool's
// size and leasing (zero for commands that run no workers: the runtime's defaults apply).
func appConfig(c *cli, conn *conn, log *slog.Logger, demoTools bool, workers int, l leasing) app.Config {
	return app.Config{
		DB:                conn.pool,
		Batches:           conn.batches,
		Keys:              conn.keys,
		Logger:            log,
		Getenv:            c.getenv,
		Tools:             builtinTools(demoTools),
		Hooks:             faultHooks(c.getenv, log),
		Workers:           workers,
		Lease:             l.Lease,
		ReapInterval:      l.ReapInterval,
		PollInterval:      l.PollInterval,
		ExpireInterval:    l.ExpireInterval,
		ElicitationHolds:  l.holds(),
		RetentionInterval: l.RetentionInterval,
		Chain:             auditchain.Config{Lag: l.AuditLag, CheckpointInterval: l.CheckpointInterval, CheckpointFile: l.CheckpointFile},
	}
}
