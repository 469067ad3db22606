//go:build runsdesk_faults

package main

import (
	"log/slog"
	"testing"

	"runsdesk/runtime"
)

func TestFaultHooksArmOnePoint(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	if h := faultHooks(environ{}.get, log); h != nil {
		t.Errorf("no RUNSDESK_FAULT_POINT, yet hooks %#v", h)
	}
	h := faultHooks(environ{"RUNSDESK_FAULT_POINT": runtime.HookBeforeSettle}.get, log)
	if h == nil {
		t.Fatal("RUNSDESK_FAULT_POINT set, no hooks")
	}
	for _, p := range []string{runtime.HookAfterValidation, runtime.HookAfterClaim, runtime.HookMidTool} {
		if err := h.At(p, 1); err != nil {
			t.Errorf("At(%s) = %v on a process armed for %s", p, err, runtime.HookBeforeSettle)
		}
	}
}
