package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/handlers/api"
	"runsdesk/handlers/await"
	"runsdesk/handlers/refusal"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
	"runsdesk/runtime/strictjson"
)

// The tools' names.
const (
	ToolRequestApproval = "request_approval"
	ToolRequestInput    = "request_input"
	ToolAwaitDecision   = "await_decision"
	ToolCancelRequest   = "cancel_request"
	ToolApproveToolUse  = "approve_tool_use"
)

// holdingTools are the tools whose calls hold until a person decides.
var holdingTools = map[string]bool{ToolRequestApproval: true, ToolRequestInput: true, ToolAwaitDecision: true, ToolApproveToolUse: true}

// pollAfterMS is what a pending answer tells the caller to wait before await_decision.
const pollAfterMS = 5000

const instructions = `runsdesk is a desk where people approve an agent's actions and answer its questions. ` +
	`Ask before an action that needs a person's approval (request_approval) or when you need a person's answer (request_input); ` +
	`a call holds until a person decides or answers pending with a request_id, which await_decision picks up again later, even after a restart.`

// tool is one tool and its handler.
type tool struct {
	tool   *mcp.Tool
	handle mcp.ToolHandler
}

// The schema of a configuration argument, shared by the tools that create requests.
const configurationProperty = `"configuration": {"type": "string", "description": "The identifier of the external configuration to ask in; default: the first (lowest id) whose callers list your token's service account."}`

// tools are the server's tools, in the order tools/list lists them.
func (s *Server) tools() []tool {
	return []tool{
		{tool: &mcp.Tool{
			Name:  ToolRequestApproval,
			Title: "Ask a person to approve an action",
			Description: fmt.Sprintf("Ask the desk's people to approve one action before you take it. The call holds for up to %s while a person decides "+
				"(progress notifications when you send a progressToken). Decided in time, the result is the decision: {id, external_id, status: approved|denied|expired|cancelled, "+
				"decision: {approved, reason, edited_arguments, decided_by_name, ...}}; take the action only when status is approved, with decision.edited_arguments in place of "+
				"your arguments when present. Otherwise {\"status\": \"pending\", \"request_id\", \"poll_after_ms\"}: call await_decision with the request_id.", spoken(s.hold)),
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "required": ["action", "arguments"], "properties": {
				` + configurationProperty + `,
				"action": {"type": "string", "description": "The action to approve: the name of a tool the configuration declares, or any name where it sets ad_hoc."},
				"arguments": {"type": "object", "description": "The action's arguments; the reviewer may edit them."},
				"title": {"type": "string", "description": "The request's heading in the reviewers' inbox."},
				"message": {"type": "string", "description": "Your words to the reviewer: why, and what happens when approved."}}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Ask a person to approve an action", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
		}, handle: s.requestApproval},
		{tool: &mcp.Tool{
			Name:  ToolRequestInput,
			Title: "Ask a person a question",
			Description: fmt.Sprintf("Ask the desk's people a question: one the configuration declares (tool: its input schema is the form), or, where the configuration "+
				"sets ad_hoc, your own (schema: a JSON Schema of the answer, the form the person fills in). The call holds for up to %s "+
				"(progress notifications when you send a progressToken). Answered in time, the result is {id, external_id, status: answered|expired|cancelled, "+
				"decision: {values, reason, decided_by_name, ...}}, the answer in decision.values. Otherwise {\"status\": \"pending\", \"request_id\", \"poll_after_ms\"}: "+
				"call await_decision with the request_id.", spoken(s.hold)),
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "required": ["title", "message"], "properties": {
				` + configurationProperty + `,
				"title": {"type": "string", "description": "The question's heading in the reviewers' inbox."},
				"message": {"type": "string", "description": "Your words to the person: what you need to know and why."},
				"tool": {"type": "string", "description": "The name of a question the configuration declares (its input_schema is the form), or the name of your own question with schema (default: question)."},
				"schema": {"type": "object", "description": "A JSON Schema of the answer (at most 64 KiB and 200 fields), for a question the configuration does not declare; only where it sets ad_hoc."}}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Ask a person a question", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
		}, handle: s.requestInput},
		{tool: &mcp.Tool{
			Name:  ToolAwaitDecision,
			Title: "Wait for the decision on a request",
			Description: fmt.Sprintf("Wait for the decision on a request you created (the request_id of a pending answer): the call holds for up to %s and answers as "+
				"request_approval and request_input do, the decision or pending again. The request lives on the desk, so this works after a restart too.", spoken(s.hold)),
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "required": ["request_id"], "properties": {
				"request_id": {"type": "string", "description": "The request_id of the request."}}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Wait for the decision on a request", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(true)},
		}, handle: s.awaitDecision},
		{tool: &mcp.Tool{
			Name:  ToolCancelRequest,
			Title: "Withdraw a request",
			Description: "Withdraw a request you created that still waits for a person (it ends cancelled and leaves the inbox); the result is its answer, " +
				"status cancelled. A request decided already cannot be withdrawn (run_not_cancellable).",
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "required": ["request_id"], "properties": {
				"request_id": {"type": "string", "description": "The request_id of the request."}}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Withdraw a request", DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
		}, handle: s.cancelRequest},
		{tool: &mcp.Tool{
			Name:  ToolApproveToolUse,
			Title: "Ask a person whether a tool may run (Claude Code permission prompt)",
			Description: fmt.Sprintf("Claude Code's permission-prompt tool (--permission-prompt-tool mcp__runsdesk__approve_tool_use): asks the desk's people whether "+
				"tool_name may run with input, holding until a person decides (a progress notification every 15 s) for at most the configuration's wait: expires_after "+
				"(%s without one). Answers {\"behavior\": \"allow\", \"updatedInput\": {...}} with the input as the reviewer edited it, or {\"behavior\": \"deny\", "+
				"\"message\": \"...\"} saying who denied and why; undecided in time it denies, never allows.", spoken(s.toolUseHold)),
			InputSchema: schema(`{"type": "object", "additionalProperties": false, "required": ["tool_name", "input"], "properties": {
				"tool_name": {"type": "string", "description": "The tool that wants to run; the configuration must declare it."},
				"input": {"type": "object", "description": "The tool's input."},
				"tool_use_id": {"type": "string", "description": "The tool use's id: the request's external_id, so a repeated prompt finds the same request."},
				` + configurationProperty + `}}`),
			Annotations: &mcp.ToolAnnotations{Title: "Ask a person whether a tool may run", DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
		}, handle: s.approveToolUse},
	}
}

type approvalArgs struct {
	Configuration string          `json:"configuration"`
	Action        string          `json:"action"`
	Arguments     json.RawMessage `json:"arguments"`
	Title         string          `json:"title"`
	Message       string          `json:"message"`
}

// requestApproval creates an approval request and holds the call for its decision.
func (s *Server) requestApproval(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in approvalArgs
	if err := decode(req, &in); err != nil {
		return s.failure(err), nil
	}
	if in.Action == "" {
		return s.failure(invalid("action is required")), nil
	}
	return s.create(ctx, req, runtime.NewRequest{Configuration: in.Configuration, Kind: runtime.RequestApproval, Tool: in.Action,
		Arguments: in.Arguments, Title: in.Title, Message: in.Message})
}

type inputArgs struct {
	Configuration string          `json:"configuration"`
	Title         string          `json:"title"`
	Message       string          `json:"message"`
	Tool          string          `json:"tool"`
	Schema        json.RawMessage `json:"schema"`
}

// adHocQuestion is the name of an ad hoc question whose caller names none.
const adHocQuestion = "question"

// requestInput creates a question, declared (tool) or ad hoc (schema), and holds the call
// for its answer.
func (s *Server) requestInput(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in inputArgs
	if err := decode(req, &in); err != nil {
		return s.failure(err), nil
	}
	switch {
	case in.Title == "" || in.Message == "":
		return s.failure(invalid("title and message are required")), nil
	case in.Tool == "" && len(in.Schema) == 0:
		return s.failure(invalid("name a question the configuration declares (tool) or give your own (schema)")), nil
	case in.Tool == "":
		in.Tool = adHocQuestion
	}
	return s.create(ctx, req, runtime.NewRequest{Configuration: in.Configuration, Kind: runtime.RequestInput, Tool: in.Tool,
		Title: in.Title, Message: in.Message, Schema: in.Schema})
}

// create creates nr as the caller's request (in its default configuration when nr names
// none) and holds the call for the decision.
func (s *Server) create(ctx context.Context, req *mcp.CallToolRequest, nr runtime.NewRequest) (*mcp.CallToolResult, error) {
	k := callerOf(ctx)
	_, run, err := s.createIn(ctx, k, nr)
	if err != nil {
		return s.failure(err), nil
	}
	s.log.Info("mcp request created", "service_account", k.actor.Name, "run", run.UUID, "kind", nr.Kind)
	return s.held(ctx, req, k, run.UUID)
}

// createIn creates nr as the caller's request in the configuration it names, else in the
// caller's default one, and audits the creation (or its refusal) as the API does.
func (s *Server) createIn(ctx context.Context, k *caller, nr runtime.NewRequest) (runtime.Configuration, runtime.Run, error) {
	cfg, err := s.configuration(ctx, k.actor, nr.Configuration)
	var run runtime.Run
	if err == nil {
		nr.Configuration = cfg.Identifier
		run, err = s.rt.CreateRequest(ctx, k.actor, nr)
	}
	k.audit(api.AuditRequestCreate, run.UUID, err)
	return cfg, run, err
}

type requestIDArgs struct {
	RequestID string `json:"request_id"`
}

// awaitDecision holds the call for the decision on a request the caller created.
func (s *Server) awaitDecision(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in requestIDArgs
	if err := decode(req, &in); err != nil {
		return s.failure(err), nil
	}
	return s.held(ctx, req, callerOf(ctx), in.RequestID)
}

// cancelRequest withdraws a request the caller created that still waits.
func (s *Server) cancelRequest(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in requestIDArgs
	if err := decode(req, &in); err != nil {
		return s.failure(err), nil
	}
	k := callerOf(ctx)
	ans, err := s.rt.WithdrawRequest(ctx, k.actor, in.RequestID)
	k.audit(api.AuditRequestWithdraw, in.RequestID, err)
	if err != nil {
		return s.failure(err), nil
	}
	s.log.Info("mcp request withdrawn", "service_account", k.actor.Name, "run", in.RequestID)
	return jsonResult(ans), nil
}

// held holds the call on request id for Config.Hold and answers its decision, or pending
// when there is none by then (or the hall is full: the request waits all the same).
func (s *Server) held(ctx context.Context, req *mcp.CallToolRequest, k *caller, id string) (*mcp.CallToolResult, error) {
	ans, err := s.await(ctx, req, k, id, s.hold)
	switch {
	case errors.Is(err, waiters.ErrFull) || (err == nil && ans.Status == runtime.RequestPending):
		return jsonResult(pending{Status: runtime.RequestPending, RequestID: id, PollAfterMS: pollAfterMS}), nil
	case err != nil:
		return s.failure(err), nil
	}
	return jsonResult(ans), nil
}

// pending is the answer of a call whose request is still undecided when its hold ends.
type pending struct {
	Status      string `json:"status"`
	RequestID   string `json:"request_id"`
	PollAfterMS int    `json:"poll_after_ms"`
}

// await holds the call on request id until it is decided or limit passes (await.Request),
// checking the caller's token again and sending a progress notification, when the client
// asked for them, at every wake and at least every await.Tick.
func (s *Server) await(ctx context.Context, req *mcp.CallToolRequest, k *caller, id string, limit time.Duration) (runtime.RequestAnswer, error) {
	if err := k.holdFor(limit); err != nil {
		return runtime.RequestAnswer{}, err
	}
	notify := progress(req, limit)
	return await.Request(ctx, s.waiters, s.rt, k.actor, id, limit, func(ctx context.Context) error {
		if err := k.stillAllowed(); err != nil {
			return refused{err}
		}
		notify(ctx)
		return nil
	})
}

// progress sends the call's progress notifications (none when the client sent no
// progressToken): the seconds held so far of limit.
func progress(req *mcp.CallToolRequest, limit time.Duration) func(ctx context.Context) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return func(context.Context) {}
	}
	start := time.Now()
	return func(ctx context.Context) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
			Progress: time.Since(start).Seconds(), Total: limit.Seconds(), Message: "waiting for a person to decide"})
	}
}

// configuration is the external configuration named (the first, lowest uid, taking the
// actor's requests when name is ""), among those the actor may ask in.
func (s *Server) configuration(ctx context.Context, actor runtime.Actor, name string) (runtime.Configuration, error) {
	all, err := s.rt.DisplayConfigurations(ctx)
	if err != nil {
		return runtime.Configuration{}, err
	}
	for _, c := range all {
		if c.AcceptsCaller(actor.ServiceName()) && (name == "" || c.Identifier == name) {
			return c, nil
		}
	}
	return runtime.Configuration{}, &runtime.Error{Code: runtime.CodeConfigurationNotFound, Message: "no external configuration takes the caller's requests"}
}

// decode reads the call's arguments into v strictly (no unknown or repeated key).
func decode(req *mcp.CallToolRequest, v any) error {
	raw := req.Params.Arguments
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := strictjson.Decode(raw, v); err != nil {
		var strict *strictjson.Error
		if errors.As(err, &strict) {
			return invalid(strict.Error())
		}
		return invalid("the arguments must be one JSON object of the tool's input schema")
	}
	return nil
}

// toolError is a refusal of the server's own, answered as code: message.
type toolError struct{ code, message string }

func (e *toolError) Error() string { return e.code + ": " + e.message }

func invalid(message string) error {
	return &toolError{code: string(runtime.CodeInvalidRequest), message: message}
}

// refused is a refusal of the caller's token during a hold; its text is the API's.
type refused struct{ err error }

func (e refused) Error() string { return e.err.Error() }

// describe is err as a tool answers it, "code: message", never naming a submitted value: the
// refusal table's message, but for an unusable ad hoc schema the runtime's, which names the
// rule it broke (as the API answers it).
func (s *Server) describe(err error) string {
	var te *toolError
	var re refused
	var rt *runtime.Error
	switch {
	case errors.As(err, &te):
		return te.Error()
	case errors.As(err, &re):
		return re.Error()
	case errors.Is(err, runtime.ErrUnusableSchema) && errors.As(err, &rt):
		return string(rt.Code) + ": " + rt.Message
	case errors.Is(err, waiters.ErrFull):
		return "unavailable: too many requests are waiting; try again"
	case runtime.Unavailable(err):
		return "unavailable: the store is temporarily unavailable; try again"
	}
	if e, row := refusal.OfError(err); e != nil {
		return string(e.Code) + ": " + row.Message
	}
	s.log.Error("mcp tool failed", "err", err)
	return "internal_error: internal error"
}

// failure is the error result of a call that err refused.
func (s *Server) failure(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s.describe(err)}}}
}

// jsonResult is v as the call's structured content and, for clients that read text, as text.
func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// schema is a tool's input schema.
func schema(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		panic("mcpserver: invalid schema " + s)
	}
	return json.RawMessage(s)
}

func ptr[T any](v T) *T { return &v }

// spoken is d in words: "50 seconds", "10 minutes", "1 minute 30 seconds"; under a second
// in milliseconds.
func spoken(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d milliseconds", d.Round(time.Millisecond).Milliseconds())
	}
	d = d.Round(time.Second)
	m, sec := int(d/time.Minute), int(d%time.Minute/time.Second)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case m == 0:
		return unit(sec, "second")
	case sec == 0:
		return unit(m, "minute")
	}
	return unit(m, "minute") + " " + unit(sec, "second")
}
