package runtime

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxPromptBytes bounds a run's prompt.
const MaxPromptBytes = 32 << 10

// Start enqueues a new run of the configuration identified by configuration (CreateRun) with
// actor as its owner and wakes the worker pool. The run is executed by a worker.
func (r *Runtime) Start(ctx context.Context, actor Actor, configuration, prompt string) (Run, error) {
	if !MayAct(actor, ActionStart, Run{}) {
		return Run{}, newError(CodeRunAccessDenied, "", "you may not start runs")
	}
	prompt = strings.TrimSpace(prompt)
	if prompt == "" || len(prompt) > MaxPromptBytes || !utf8.ValidString(prompt) {
		return Run{}, newError(CodeInvalidRequest, "", "the prompt must be non-empty UTF-8 text of at most %d bytes", MaxPromptBytes)
	}
	cfg, err := r.catalog.ConfigurationByIdentifier(ctx, configuration)
	if errors.Is(err, ErrNotFound) {
		return Run{}, newError(CodeConfigurationNotFound, "", "no configuration named %q", configuration)
	}
	if err != nil {
		return Run{}, storeError("", err)
	}
	req, err := continuation{Kind: contStart, Prompt: prompt, RequestedBy: actor.UserUID}.encode()
	if err != nil {
		return Run{}, storeError("", err)
	}
	id := uuid.NewString()
	run, err := r.store.CreateRun(ctx, NewRun{
		UUID: id, ConfigurationUID: cfg.UID, ConfigurationIdentifier: cfg.Identifier,
		BeUser: actor.UserUID, QueuedRequest: req, Now: r.unix(),
	})
	if err != nil {
		return Run{}, storeError(id, err)
	}
	payload := map[string]any{"configuration": cfg.Identifier, "promptLength": len(prompt), "requestedBy": actor.UserUID}
	if svc := actor.ServiceName(); svc != "" {
		payload["requestedByService"] = svc
	}
	if _, err := r.store.AppendEvent(ctx, NewEvent{Run: run.UID, Kind: EventRequest, Payload: mustJSON(payload), Now: r.unix()}); err != nil {
		r.log.Warn("request event not recorded", "run", id, "err", err)
	}
	r.Wake()
	return stripped(run), nil
}

func stripped(run Run) Run {
	run.SuspendedState, run.QueuedRequest = "", ""
	return run
}
