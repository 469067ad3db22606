package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/subject"
	"runsdesk/runtime/tool"

	"github.com/google/uuid"
)

// CreateRequest creates a request of a service account in an external configuration
// (CreateRequest in docs/state-machine.md): a run born with its one call, which pauses at
// once as any run's pause does (subject, deadlines, pins, assignment, notifications), in
// waiting_for_approval or, for a tool that asks for input, waiting_for_input. A configuration
// that is not external or does not name the caller is not found to it; a tool it does not
// offer is CodeUnknownTool; a kind that does not fit the tool, or arguments that are not one
// JSON object within the tool's bound, are CodeInvalidRequest.
func (r *Runtime) CreateRequest(ctx context.Context, actor runtime.Actor, req runtime.NewRequest) (runtime.Run, error) {
	cfg, err := r.catalog.ConfigurationByIdentifier(ctx, req.Configuration)
	switch {
	case errors.Is(err, runtime.ErrNotFound) || (err == nil && !cfg.AcceptsCaller(actor.ServiceName())):
		return runtime.Run{}, newError(runtime.CodeConfigurationNotFound, "", "no external configuration named %q takes your requests", req.Configuration)
	case err != nil:
		return runtime.Run{}, storeError("", err)
	}
	reg, err := r.toolset(ctx)
	if err != nil {
		return runtime.Run{}, storeError("", err)
	}
	t, ok := reg.Get(req.Tool)
	if !ok || !slices.Contains(cfg.Tools, req.Tool) {
		return runtime.Run{}, newError(runtime.CodeUnknownTool, "", "configuration %q declares no tool %q", cfg.Identifier, req.Tool)
	}
	if _, asks := tool.InputSchemaOf(t); (req.Kind == runtime.RequestInput) != asks || (req.Kind != runtime.RequestInput && req.Kind != runtime.RequestApproval) {
		return runtime.Run{}, newError(runtime.CodeInvalidRequest, "", "tool %q takes requests of kind %s", req.Tool, requestKindOf(asks))
	}
	args, err := requestArguments(req.Arguments, tool.MaxArgumentsBytes(t))
	if err != nil {
		return runtime.Run{}, newError(runtime.CodeInvalidRequest, "", "arguments: %v", err)
	}
	if len(req.Title) > runtime.MaxRequestTitleBytes || !utf8.ValidString(req.Title) || len(req.Message) > runtime.MaxPromptBytes || !utf8.ValidString(req.Message) {
		return runtime.Run{}, newError(runtime.CodeInvalidRequest, "", "the title must be UTF-8 text of at most %d bytes and the message of at most %d", runtime.MaxRequestTitleBytes, runtime.MaxPromptBytes)
	}
	id := uuid.NewString()
	call := runtime.PendingCall{ID: "request-" + id, Type: "function", Function: runtime.PendingFunction{Name: req.Tool, Arguments: args}}
	enc, err := continuation{Kind: contRequest, Steps: []planStep{{Call: call}}, Title: req.Title, Message: req.Message}.encode()
	if err != nil {
		return runtime.Run{}, storeError("", err)
	}
	lease := r.newLease("request")
	run, err := r.store.CreateRun(ctx, runtime.NewRun{
		UUID: id, ConfigurationUID: cfg.UID, ConfigurationIdentifier: cfg.Identifier,
		StartedByService: actor.ServiceName(), QueuedRequest: enc, Lease: lease, Now: r.unix(),
	})
	if err != nil {
		return runtime.Run{}, storeError(id, err)
	}
	payload := map[string]any{"configuration": cfg.Identifier, "kind": req.Kind, "tool": req.Tool, "requestedByService": actor.ServiceName()}
	if _, err := r.store.AppendEvent(ctx, runtime.NewEvent{Run: run.UID, Kind: runtime.EventRequest, Payload: mustJSON(payload), Now: r.unix()}); err != nil {
		r.log.Warn("request event not recorded", "run", id, "err", err)
	}
	r.execute(ctx, run.UID, lease, nil)
	if run, err = r.store.FindByUUID(ctx, id); err != nil {
		return runtime.Run{}, storeError(id, err)
	}
	return stripped(run), nil
}

// requestKindOf names the request kind a tool takes: input when it asks for input.
func requestKindOf(asksInput bool) string {
	if asksInput {
		return runtime.RequestInput
	}
	return runtime.RequestApproval
}

// requestArguments is raw compacted ({} when empty): one JSON object of at most limit bytes.
func requestArguments(raw json.RawMessage, limit int) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil || b.Len() == 0 || b.Bytes()[0] != '{' {
		return nil, errors.New("must be one JSON object")
	}
	if b.Len() > limit {
		return nil, errors.New("larger than the tool's bound")
	}
	return b.Bytes(), nil
}

// ask pauses an external request for the one call c carries: for input when its tool asks
// for input, else for approval. The caller's message stands where a model's words beside its
// calls would, and the title, when set, is the pause's subject.
func (s *segment) ask(ctx context.Context, c continuation) outcome {
	if len(c.Steps) != 1 {
		return s.fail(ctx, "CorruptQueuedRequest")
	}
	s.msgs = []model.Message{{Role: "assistant", Content: c.Message}}
	s.title = c.Title
	calls := []runtime.PendingCall{c.Steps[0].Call}
	t, ok := s.offeredTool(calls[0].Function.Name)
	if !ok {
		return s.fail(ctx, "ConfigurationGone")
	}
	if raw, asks := tool.InputSchemaOf(t); asks {
		return s.suspend(ctx, runtime.StatusWaitingInput, calls, &pauseInput{tool: calls[0].Function.Name, schema: raw}, nil)
	}
	return s.suspend(ctx, runtime.StatusWaitingApproval, calls, nil, nil)
}

// decided ends an external request whose decision was made: the run completes, decided; the
// decision, stored with its run, is what the caller is answered.
func (s *segment) decided(ctx context.Context) outcome {
	return s.settle(ctx, s.totals(runtime.StatusCompleted, runtime.ReasonDecided, "", false))
}

// subjectOf is the subject of the segment's pause about calls: an external request's title
// when it has one, else as the configuration's template renders it (runtime.SubjectOf).
func (s *segment) subjectOf(calls []runtime.PendingCall) runtime.PauseSubject {
	p := runtime.SubjectOf(s.cfg.Subject, calls)
	if title := subject.Line(s.title); title != "" {
		p.Text, p.Quoted = title, false
	}
	return p
}
