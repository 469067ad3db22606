//go:build !runsdesk_faults

package main

import "testing"

func TestFaultHooksCompiledOut(t *testing.T) {
	t.Parallel()
	env := environ{"RUNSDESK_FAULT_POINT": "after_claim"}
	if h := faultHooks(env.get, nil); h != nil {
		t.Errorf("a build without -tags runsdesk_faults armed a fault point: %#v", h)
	}
}
