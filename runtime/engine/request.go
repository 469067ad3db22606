package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
// JSON object within the tool's bound, are CodeInvalidRequest; a CallbackURL the
// configuration does not take is CodeCallbacksNotEnabled or CodeCallbackNotAllowed
// (callbackRefusal). A request that repeats the
// ExternalID or IdempotencyKey of one already created returns that run when it is the same
// request (same caller, configuration, kind, tool, arguments, title, message and callback URL), and is
// CodeExternalIDConflict or CodeIdempotencyKeyConflict when it is not; of concurrent
// creations with one key exactly one creates the run.
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
	t, sch, err := r.requestTool(cfg, reg, req)
	if err != nil {
		return runtime.Run{}, err
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
	if len(req.ExternalID) > runtime.MaxExternalIDBytes || !utf8.ValidString(req.ExternalID) || len(req.IdempotencyKey) > runtime.MaxIdempotencyKey {
		return runtime.Run{}, newError(runtime.CodeInvalidRequest, "", "the external_id must be UTF-8 text of at most %d bytes and the idempotency key of at most %d", runtime.MaxExternalIDBytes, runtime.MaxIdempotencyKey)
	}
	if e := callbackRefusal(cfg, req.CallbackURL); e != nil {
		return runtime.Run{}, e
	}
	behalf, err := r.onBehalfOf(ctx, req.OnBehalfOf)
	if err != nil {
		return runtime.Run{}, err
	}
	keys := runtime.RequestKeys{ExternalID: req.ExternalID, IdempotencyKey: req.IdempotencyKey, Digest: requestDigest(actor, cfg, req, args, sch)}
	if run, found, err := r.createdRequest(ctx, actor, cfg, keys); found || err != nil {
		return run, err
	}
	id := uuid.NewString()
	call := runtime.PendingCall{ID: "request-" + id, Type: "function", Function: runtime.PendingFunction{Name: req.Tool, Arguments: args}}
	enc, err := continuation{Kind: contRequest, Steps: []planStep{{Call: call}}, Title: req.Title, Message: req.Message, Schema: sch}.encode()
	if err != nil {
		return runtime.Run{}, storeError("", err)
	}
	lease := r.newLease("request")
	run, err := r.store.CreateRun(ctx, runtime.NewRun{
		UUID: id, ConfigurationUID: cfg.UID, ConfigurationIdentifier: cfg.Identifier,
		StartedByService: actor.ServiceName(), QueuedRequest: enc, Lease: lease, Now: r.unix(), Request: keys, OnBehalfOf: behalf,
		CallbackURL: req.CallbackURL,
	})
	if errors.Is(err, runtime.ErrDuplicate) {
		run, _, err := r.createdRequest(ctx, actor, cfg, keys)
		return run, err
	}
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

// createdRequest is the run already created under keys (found), when one is: that run when it
// was created by the same request, else the conflict of the key it reused.
func (r *Runtime) createdRequest(ctx context.Context, actor runtime.Actor, cfg runtime.Configuration, keys runtime.RequestKeys) (runtime.Run, bool, error) {
	for _, k := range []runtime.RequestKeys{{ExternalID: keys.ExternalID}, {IdempotencyKey: keys.IdempotencyKey}} {
		if k == (runtime.RequestKeys{}) {
			continue
		}
		run, held, err := r.store.FindRequest(ctx, cfg.UID, actor.ServiceName(), k)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			continue
		case err != nil:
			return runtime.Run{}, true, storeError("", err)
		case held.Digest != keys.Digest && k.ExternalID != "":
			return runtime.Run{}, true, newError(runtime.CodeExternalIDConflict, "", "external_id %q names a different request of configuration %q", k.ExternalID, cfg.Identifier)
		case held.Digest != keys.Digest:
			return runtime.Run{}, true, newError(runtime.CodeIdempotencyKeyConflict, "", "the Idempotency-Key was used for a different request")
		}
		return stripped(run), true, nil
	}
	return runtime.Run{}, false, nil
}

// onBehalfOf is the person named username (uid and username as given), or none for "";
// a name of no person is CodeInvalidRequest.
func (r *Runtime) onBehalfOf(ctx context.Context, username string) (runtime.Actor, error) {
	if username == "" {
		return runtime.Actor{}, nil
	}
	p, err := r.store.PersonByUsername(ctx, username)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		return runtime.Actor{}, newError(runtime.CodeInvalidRequest, "", "on_behalf_of names no person")
	case err != nil:
		return runtime.Actor{}, storeError("", err)
	}
	return runtime.Actor{UserUID: p.UserUID, Name: username}, nil
}

// requestTool is the tool req asks about in cfg: one cfg declares (then req carries no
// schema), else, where cfg sets ad_hoc: true, an ad hoc action or question of a name the desk
// has no tool of (adHocRequest), with its compacted schema. Any other is CodeUnknownTool.
func (r *Runtime) requestTool(cfg runtime.Configuration, reg *tool.Registry, req runtime.NewRequest) (tool.Tool, json.RawMessage, error) {
	t, known := reg.Get(req.Tool)
	switch {
	case known && slices.Contains(cfg.Tools, req.Tool) && len(bytes.TrimSpace(req.Schema)) > 0:
		return nil, nil, newError(runtime.CodeInvalidRequest, "", "tool %q declares its own input; a schema is given only with an ad hoc question", req.Tool)
	case known && slices.Contains(cfg.Tools, req.Tool):
		return t, nil, nil
	case known || !cfg.External.AdHoc:
		return nil, nil, newError(runtime.CodeUnknownTool, "", "configuration %q declares no tool %q", cfg.Identifier, req.Tool)
	}
	return adHocRequest(req)
}

// callbackRefusal is nil when cfg takes callbackURL as a request's callback ("" takes none),
// else CallbacksNotEnabled (cfg takes no callbacks) or CallbackNotAllowed with the reason.
func callbackRefusal(cfg runtime.Configuration, callbackURL string) *runtime.Error {
	switch {
	case callbackURL == "":
		return nil
	case !cfg.AcceptsCallbacks():
		return newError(runtime.CodeCallbacksNotEnabled, "", "configuration %q takes no callback_url (it sets no callback_secret_env)", cfg.Identifier)
	}
	if why := cfg.CallbackRefusal(callbackURL); why != "" {
		return newError(runtime.CodeCallbackNotAllowed, "", "configuration %q: %s", cfg.Identifier, why)
	}
	return nil
}

// requestDigest is the SHA-256 (hex) of what a request asks (an ad hoc question's schema
// included), by whom, and where its decision is called back: equal for a replay.
func requestDigest(actor runtime.Actor, cfg runtime.Configuration, req runtime.NewRequest, args, sch json.RawMessage) string {
	fields := []string{actor.ServiceName(), cfg.Identifier, req.Kind, req.Tool, string(args), req.Title, req.Message, req.ExternalID, req.OnBehalfOf, string(sch)}
	if req.CallbackURL != "" {
		fields = append(fields, req.CallbackURL)
	}
	b, _ := json.Marshal(fields)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
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
// for input (an ad hoc question: against c.Schema), else for approval. The caller's message stands where a model's words beside its
// calls would, and the title, when set, is the pause's subject.
func (s *segment) ask(ctx context.Context, c continuation) outcome {
	if len(c.Steps) != 1 {
		return s.fail(ctx, "CorruptQueuedRequest")
	}
	s.msgs = []model.Message{{Role: "assistant", Content: c.Message}}
	s.title = c.Title
	calls := []runtime.PendingCall{c.Steps[0].Call}
	asked := runtime.PauseState{PendingCalls: calls}
	if len(c.Schema) > 0 {
		asked.InputToolName, asked.InputSchema = &calls[0].Function.Name, c.Schema
	}
	cfg, reg, err := withAdHoc(s.cfg, s.reg, asked)
	if err != nil {
		s.r.log.Error("ad hoc request unusable", "run", s.run.UUID, "err", err)
		return s.fail(ctx, "CorruptQueuedRequest")
	}
	s.cfg, s.reg, s.offered = cfg, reg, offeredSet(cfg, reg)
	t, ok := s.offeredTool(calls[0].Function.Name)
	if !ok {
		return s.fail(ctx, "ConfigurationGone")
	}
	if raw, asks := tool.InputSchemaOf(t); asks {
		return s.suspend(ctx, runtime.StatusWaitingInput, calls, &pauseInput{tool: calls[0].Function.Name, schema: raw}, nil)
	}
	return s.suspend(ctx, runtime.StatusWaitingApproval, calls, nil, nil)
}

// decided ends an external request whose decision c was made: the run completes, decided,
// keeping the values of an answered question as its output; the decision, stored with its
// run, is what the caller is answered (Runtime.RequestAnswer).
func (s *segment) decided(ctx context.Context, c continuation) outcome {
	st := s.totals(runtime.StatusCompleted, runtime.ReasonDecided, "", false)
	st.Output = requestOutput(c)
	return s.settle(ctx, st)
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
