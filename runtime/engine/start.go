package engine

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"runsdesk/runtime"

	"github.com/google/uuid"
)

// Start enqueues a new run of the configuration identified by configuration (CreateRun) with
// actor as its owner and wakes the worker pool. The run is executed by a worker. An external
// configuration runs no model and is refused (CodeInvalidRequest).
func (r *Runtime) Start(ctx context.Context, actor runtime.Actor, configuration, prompt string) (runtime.Run, error) {
	if !runtime.MayAct(actor, runtime.ActionStart, runtime.Run{}) {
		return runtime.Run{}, newError(runtime.CodeRunAccessDenied, "", "you may not start runs")
	}
	prompt = strings.TrimSpace(prompt)
	if prompt == "" || len(prompt) > runtime.MaxPromptBytes || !utf8.ValidString(prompt) {
		return runtime.Run{}, newError(runtime.CodeInvalidRequest, "", "the prompt must be non-empty UTF-8 text of at most %d bytes", runtime.MaxPromptBytes)
	}
	cfg, err := r.catalog.ConfigurationByIdentifier(ctx, configuration)
	if errors.Is(err, runtime.ErrNotFound) {
		return runtime.Run{}, newError(runtime.CodeConfigurationNotFound, "", "no configuration named %q", configuration)
	}
	if err != nil {
		return runtime.Run{}, storeError("", err)
	}
	if cfg.IsExternal() {
		return runtime.Run{}, newError(runtime.CodeInvalidRequest, "", "configuration %q is kind: external: it runs no model, so it takes no prompt", configuration)
	}
	req, err := continuation{Kind: contStart, Prompt: prompt, RequestedBy: actor.UserUID}.encode()
	if err != nil {
		return runtime.Run{}, storeError("", err)
	}
	id := uuid.NewString()
	run, err := r.store.CreateRun(ctx, runtime.NewRun{
		UUID: id, ConfigurationUID: cfg.UID, ConfigurationIdentifier: cfg.Identifier,
		BeUser: actor.UserUID, StartedByService: actor.ServiceName(), QueuedRequest: req, Now: r.unix(),
	})
	if err != nil {
		return runtime.Run{}, storeError(id, err)
	}
	payload := map[string]any{"configuration": cfg.Identifier, "promptLength": len(prompt), "requestedBy": actor.UserUID}
	if svc := actor.ServiceName(); svc != "" {
		payload["requestedByService"] = svc
	}
	if _, err := r.store.AppendEvent(ctx, runtime.NewEvent{Run: run.UID, Kind: runtime.EventRequest, Payload: mustJSON(payload), Now: r.unix(),
		Content: runtime.Keep(cfg.Privacy, runtime.EventContent{System: cfg.SystemPrompt, Prompt: prompt})}); err != nil {
		r.log.Warn("request event not recorded", "run", id, "err", err)
	}
	r.Wake()
	return stripped(run), nil
}

func stripped(run runtime.Run) runtime.Run {
	run.SuspendedState, run.QueuedRequest = "", ""
	return run
}
