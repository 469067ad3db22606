//go:build runsdesk_faults

package main

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"

	"runsdesk/runtime/engine"
)

// faultPointEnv names the fault point at which a build with -tags runsdesk_faults kills
// itself: after_validation, after_claim, mid_tool or before_settle (runtime/fault_hooks.go).
const faultPointEnv = "RUNSDESK_FAULT_POINT"

// faultHooks returns hooks that SIGKILL this process the first time the runtime reaches the
// point RUNSDESK_FAULT_POINT names, as a crash there would; nil when it is unset. Reliability
// tests build the binary with this tag; release builds compile it out (faults_off.go).
func faultHooks(getenv func(string) string, log *slog.Logger) engine.Hooks {
	point := getenv(faultPointEnv)
	if point == "" {
		return nil
	}
	log.Warn("fault point armed: this process kills itself when it reaches it", "point", point)
	return killAt{point: point}
}

// killAt kills the process at one fault point.
type killAt struct{ point string }

// At SIGKILLs the process when point is the armed one. It returns only for other points or
// if the signal could not be sent.
func (k killAt) At(point string, runUID int64) error {
	if point != k.point {
		return nil
	}
	fmt.Fprintf(os.Stderr, "runsdesk: fault point %s reached (run uid %d): killing process %d\n", point, runUID, os.Getpid())
	if err := syscall.Kill(os.Getpid(), syscall.SIGKILL); err != nil {
		return fmt.Errorf("fault point %s: kill: %w", point, err)
	}
	select {}
}
