//go:build !runsdesk_faults

package main

import (
	"log/slog"

	"runsdesk/runtime/engine"
)

// faultHooks returns nil: fault points exist only in builds with -tags runsdesk_faults
// (faults_on.go).
func faultHooks(func(string) string, *slog.Logger) engine.Hooks { return nil }
