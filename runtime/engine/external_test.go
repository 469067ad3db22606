package engine_test

import (
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestStartRefusesAnExternalConfiguration: a configuration of kind: external runs no model,
// so Start refuses a prompt for it (invalid_request, naming it) and queues nothing.
func TestStartRefusesAnExternalConfiguration(t *testing.T) {
	e := newEnv(t, nil)
	e.cfg.Provider = model.Settings{}
	e.cfg.External = &runtime.ExternalPolicy{Callers: []string{"ci"}}
	e.saveConfig()
	_, err := e.rt.Start(e.ctx, admin, e.cfg.Identifier, "help me")
	var re *runtime.Error
	if !errors.As(err, &re) || re.Code != runtime.CodeInvalidRequest || !strings.Contains(re.Message, `configuration "test" is kind: external`) {
		t.Fatalf("Start = %v, want invalid_request naming the external configuration", err)
	}
	if ran, err := e.rt.RunOnce(e.ctx); ran || err != nil {
		t.Errorf("RunOnce after the refusal: ran=%v, %v; want nothing queued", ran, err)
	}
}
