package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime/schema"
)

// DefaultElicitationTimeout is how long a remote tool's elicitation may wait for a person
// when its server sets no elicitation_timeout.
const DefaultElicitationTimeout = 10 * time.Minute

// MaxHeldElicitation bounds how long a request for input sent during a call is held open:
// the call's session stays open that long at most, whatever elicitation_timeout says.
const MaxHeldElicitation = time.Hour

// heldGrace is how much longer than the hold a held call's own deadline runs, so the desk
// ends an expired hold itself before the call's deadline does.
const heldGrace = time.Minute

// MCPConfig makes a Definition a remote tool: tool Tool of the MCP server Server, reached over
// streamable HTTP at the definition's HTTP URL with its headers and timeout. Description,
// parameters (the server's input schema), Annotations and Digest are what the server listed
// when the file was applied; RequiresApproval of the definition is the server's operator
// declaration.
type MCPConfig struct {
	Server             string
	Tool               string
	Annotations        json.RawMessage
	Digest             string
	ElicitationTimeout time.Duration // 0 = DefaultElicitationTimeout
}

// Bounds of what a remote server may send during one call: the most a request for input's
// message may hold, and how many requests for input one call may make (across the pauses of
// the multi-round-trip form) before the desk declines the rest. A call's result is bounded by
// the definition's HTTP.MaxResponseBytes (0 = DefaultMaxResponseBytes), as an HTTP tool's.
const (
	MaxElicitationMessageBytes = 4 << 10
	MaxElicitationsPerCall     = 5
)

// RemoteTool is implemented by a tool executed by a remote (MCP) server. Its operator
// declaration alone decides whether its calls need approval (see NeedsApproval).
type RemoteTool interface{ RemoteApproval() bool }

// MCPServer is how to reach an MCP server. Header values may reference environment variables
// as ${NAME}; they are expanded when connecting, never stored or logged expanded.
type MCPServer struct {
	URL     string
	Headers map[string]string
	Timeout time.Duration // 0 = DefaultTimeout
}

// ListedTool is one tool as an MCP server lists it: its description, input schema and
// annotations as JSON, and their ToolDigest.
type ListedTool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	Annotations json.RawMessage
	Digest      string
}

// EffectOfAnnotations maps a remote tool's annotations to an effect: readOnlyHint is
// read_only; otherwise idempotentHint is an idempotent write; anything else (destructive, or
// no hints at all, as MCP's defaults read) is a non-idempotent write.
func EffectOfAnnotations(raw json.RawMessage) Effect {
	var a mcp.ToolAnnotations
	if len(raw) == 0 || json.Unmarshal(raw, &a) != nil {
		return EffectNonIdempotentWrite
	}
	switch {
	case a.ReadOnlyHint:
		return EffectReadOnly
	case a.IdempotentHint:
		return EffectIdempotentWrite
	}
	return EffectNonIdempotentWrite
}

// ListMCP connects to srv and returns every tool it lists, by name. Connection failures,
// protocol errors and an unset header variable (named, never its value) are errors.
func ListMCP(ctx context.Context, srv MCPServer, client *http.Client, getenv func(string) string) (map[string]ListedTool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeoutOr(srv.Timeout))
	defer cancel()
	cs, err := connectMCP(ctx, srv, client, getenv, false, declineInSession, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return listTools(ctx, cs)
}

// connectMCP opens a session with srv, its headers expanded now; elicit answers the
// requests for input the server sends during a call (elicitation/create). With listen the
// session also opens the standalone stream, where a server may send such a request that it
// does not tie to the call (as the TypeScript SDK's elicitInput does). A non-nil limit bounds
// every response body the session reads while it is set (see bodyLimit).
func connectMCP(ctx context.Context, srv MCPServer, client *http.Client, getenv func(string) string, listen bool,
	elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), limit *bodyLimit) (*mcp.ClientSession, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	headers := http.Header{}
	for _, name := range sortedKeys(srv.Headers) {
		value, missing, err := expandRefs(srv.Headers[name], getenv)
		switch {
		case err != nil:
			return nil, fmt.Errorf("header %s: %w", name, err)
		case missing != "":
			return nil, fmt.Errorf("environment variable %s is not set", missing)
		case hasControl(value):
			return nil, fmt.Errorf("header %s: an environment variable it references holds a control character", name)
		}
		headers.Set(name, value)
	}
	hc := redirectSafeClient(client, slices.Collect(maps.Keys(srv.Headers)))
	hc.Timeout = 0
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = headerTransport{base: base, headers: headers, limit: limit}
	c := mcp.NewClient(&mcp.Implementation{Name: "runsdesk", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: elicit,
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: !listen}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %s", describeMCPError(ctx, err))
	}
	return cs, nil
}

// declineInSession answers an elicitation/create sent where no person can be asked (while
// apply lists the tools): decline.
func declineInSession(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: ElicitDecline}, nil
}

// headerTransport sets the server's headers on every request of a session and, with a
// limit, bounds the bodies of its responses.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	limit   *bodyLimit
}

// RoundTrip sends req with the headers set.
func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for name, values := range t.headers {
		req.Header[name] = values
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && t.limit != nil {
		resp.Body = &limitedBody{ReadCloser: resp.Body, limit: t.limit}
	}
	return resp, err
}

// bodyLimit bounds each response body of a session, once set: a body is read no further than
// its bound, and a body that goes past it fails the read and marks the limit exceeded.
type bodyLimit struct {
	max      atomic.Int64 // 0 = unbounded
	exceeded atomic.Bool
}

// limitedBody is a response body read under a bodyLimit.
type limitedBody struct {
	io.ReadCloser
	limit *bodyLimit
	read  int64
}

// errBodyTooLarge is the read error of a body past its bound.
var errBodyTooLarge = errors.New("the server's response is larger than the tool's max_response_bytes")

// Read reads at most up to the bound, then fails.
func (b *limitedBody) Read(p []byte) (int, error) {
	max := b.limit.max.Load()
	if max <= 0 {
		return b.ReadCloser.Read(p)
	}
	if b.read >= max {
		var probe [1]byte
		if n, err := b.ReadCloser.Read(probe[:]); n == 0 {
			return 0, err
		}
		b.limit.exceeded.Store(true)
		return 0, errBodyTooLarge
	}
	if left := max - b.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	return n, err
}

// listTools reads every page of tools/list.
func listTools(ctx context.Context, cs *mcp.ClientSession) (map[string]ListedTool, error) {
	out := map[string]ListedTool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %s", describeMCPError(ctx, err))
		}
		lt := ListedTool{Name: t.Name, Description: t.Description}
		var err error
		if lt.InputSchema, err = json.Marshal(t.InputSchema); err != nil {
			return nil, fmt.Errorf("tools/list: tool %q: input schema: %w", t.Name, err)
		}
		if t.Annotations != nil {
			if lt.Annotations, err = json.Marshal(t.Annotations); err != nil {
				return nil, fmt.Errorf("tools/list: tool %q: annotations: %w", t.Name, err)
			}
		}
		lt.Digest = schema.ToolDigest(lt.Description, lt.InputSchema, lt.Annotations)
		out[t.Name] = lt
	}
	return out, nil
}

// describeMCPError words a failed exchange without the URL or any header.
func describeMCPError(ctx context.Context, err error) string {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "the server did not answer in time"
	}
	return truncate(err.Error(), 200)
}

func timeoutOr(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultTimeout
	}
	return d
}

// mcpTool is a remote tool executed by its MCP server; limit bounds a call's result.
type mcpTool struct {
	defined
	client *http.Client
	getenv func(string) string
	limit  int64
}

// framingBytes is how much more than the result's bound a response carrying it may hold: its
// JSON-RPC envelope and escaping, and the stream's other messages.
const framingBytes = 64 << 10

// inputMCPTool is an mcpTool that declares an input schema of the desk's own.
type inputMCPTool struct{ *mcpTool }

// InputSchema returns the definition's input schema.
func (t inputMCPTool) InputSchema() json.RawMessage { return slices.Clone(t.def.InputSchema) }

// NewMCP builds the remote tool def describes (def.MCP set), refusing a definition Check
// refuses. Execute connects to the server, reads tools/list and refuses the call, as a tool
// error, when the server no longer lists the tool or describes it with another digest than
// the one applied; otherwise it calls the tool. A transport or protocol error, a timeout and
// an isError result are tool errors the model sees; the returned error is always nil.
func NewMCP(def Definition, client *http.Client, getenv func(string) string) (Tool, error) {
	if def.MCP == nil {
		return nil, &Problem{Tool: def.Name, Field: "mcp", Rule: ErrInvalidURL, Detail: "not a remote tool"}
	}
	if errs := Check(def); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	def.Parameters = slices.Clone(def.Parameters)
	def.InputSchema = slices.Clone(def.InputSchema)
	def.HTTP.Headers = maps.Clone(def.HTTP.Headers)
	m := *def.MCP
	def.MCP = &m
	t := &mcpTool{defined: defined{def}, client: client, getenv: getenv, limit: def.HTTP.MaxResponseBytes}
	if t.limit == 0 {
		t.limit = DefaultMaxResponseBytes
	}
	if !emptyJSON(def.InputSchema) {
		return inputMCPTool{t}, nil
	}
	return t, nil
}

// RemoteApproval returns the server's operator declaration, which alone decides approval.
func (t *mcpTool) RemoteApproval() bool { return t.def.RequiresApproval }

// Effect returns the effect the applied annotations map to.
func (t *mcpTool) Effect() Effect { return t.def.Effect }

// server is how to reach the tool's server.
func (t *mcpTool) server() MCPServer {
	return MCPServer{URL: t.def.HTTP.URL, Headers: t.def.HTTP.Headers, Timeout: t.def.HTTP.Timeout}
}

// Execute calls the tool on its server; see NewMCP.
func (t *mcpTool) Execute(ctx context.Context, call Call) (Result, error) {
	args := call.Arguments
	if emptyJSON(args) {
		args = json.RawMessage("{}")
	}
	if !isJSONObject(args) {
		return t.fail("arguments are not a JSON object"), nil
	}
	return t.onServer(ctx, call.Hold, 0, func(ctx context.Context, cs *mcp.ClientSession, in *inSession) Result {
		return t.round(ctx, cs, in, &mcp.CallToolParams{Name: t.def.MCP.Tool, Arguments: args}, nil)
	}), nil
}

// onServer runs f on a session with the tool's server, under the tool's timeout, once the
// server still lists the tool as it was applied; a failed connection or a changed listing is
// the result instead. A request for input the server sends during the call goes to hold
// (see inSession); the desk's notes about such requests come before the result's text. asked
// is how many requests for input the call made before (in earlier pauses). While f runs,
// every response is read no further than the result's bound plus framingBytes; a response or
// a result past it is a tool error saying so.
func (t *mcpTool) onServer(ctx context.Context, hold Holder, asked int, f func(context.Context, *mcp.ClientSession, *inSession) Result) Result {
	ctx, clock := newCallClock(ctx, timeoutOr(t.def.HTTP.Timeout))
	defer clock.stop()
	in := &inSession{hold: hold, clock: clock, timeout: HeldTimeout(t.def.MCP.ElicitationTimeout), asked: asked}
	limit := &bodyLimit{}
	cs, err := connectMCP(ctx, t.server(), t.client, t.getenv, hold != nil, in.elicit, limit)
	if err != nil {
		return t.fail(err.Error())
	}
	defer cs.Close()
	if res, refused := t.checkListed(ctx, cs); refused {
		return res
	}
	limit.max.Store(t.limit + framingBytes)
	res := f(ctx, cs, in)
	if limit.exceeded.Load() {
		return t.fail(t.tooLarge())
	}
	if notes := in.taken(); len(notes) > 0 && res.Elicitation == nil {
		res.Content = joinNotes(notes, res.Content)
	}
	return res
}

// Answer finishes a call that asked for input, with the person's answer: it connects again,
// checks the listing as Execute does, and retries the call with the answer and the request
// state echoed as received. The returned error is always nil.
func (t *mcpTool) Answer(ctx context.Context, call Call, answer ElicitationAnswer) (Result, error) {
	args := call.Arguments
	if emptyJSON(args) {
		args = json.RawMessage("{}")
	}
	return t.onServer(ctx, call.Hold, answer.Asked, func(ctx context.Context, cs *mcp.ClientSession, in *inSession) Result {
		res := t.round(ctx, cs, in, retryParams(t.def.MCP.Tool, args, answer), []string{answer.Note})
		if answer.Failed && !res.IsError && res.Elicitation == nil {
			res = t.fail(res.Content)
		}
		return res
	}), nil
}

// maxDeclinedRounds bounds how many input requests in a row a call declines by itself.
const maxDeclinedRounds = 5

// round sends params and reads the result: content, a tool error, or an input request. A
// request this desk cannot put to a person (URL mode, several at once, not an elicitation, a
// schema outside the elicitation subset, a request without fields that an empty answer does
// not satisfy, one past the call's MaxElicitationsPerCall) is declined at once with the
// reason noted for the model, and the call retried; the count of requests travels in the
// Elicitation returned. A result whose text is larger than the tool's bound is a tool error.
// notes are told to the model before the server's content.
func (t *mcpTool) round(ctx context.Context, cs *mcp.ClientSession, in *inSession, params *mcp.CallToolParams, notes []string) Result {
	for range maxDeclinedRounds {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			return t.fail(joinNotes(notes, "the server answered with an error: "+describeMCPError(ctx, err)))
		}
		if !res.NeedsInput() {
			content := resultText(res)
			if int64(len(content)) > t.limit {
				return t.fail(joinNotes(notes, t.tooLarge()))
			}
			if res.IsError {
				return t.fail(joinNotes(notes, "the server reported an error: "+content))
			}
			return Result{Content: joinNotes(notes, content)}
		}
		el, reason := formElicitation(res)
		if over := in.ask(); over != "" && reason == "" {
			reason = over
		}
		el.Asked = in.count()
		if reason == "" {
			el.Timeout = t.def.MCP.ElicitationTimeout
			if el.Timeout <= 0 {
				el.Timeout = DefaultElicitationTimeout
			}
			return Result{Elicitation: el}
		}
		notes = append(notes, reason)
		params = retryParams(t.def.MCP.Tool, params.Arguments, ElicitationAnswer{Elicitation: *el, Action: ElicitDecline})
	}
	return t.fail(joinNotes(notes, fmt.Sprintf("the server asked for input %d times in a row that could not be put to a person; the call was given up", maxDeclinedRounds)))
}

// formElicitation reads the one input request of res as an elicitation to put to a person,
// or says why it is declined instead (el then still names the request to decline).
func formElicitation(res *mcp.CallToolResult) (*Elicitation, string) {
	el := &Elicitation{State: res.RequestState}
	if len(res.InputRequests) != 1 {
		return el, fmt.Sprintf("the server asked for %d inputs at once; this desk answers one at a time, so it declined", len(res.InputRequests))
	}
	for id, req := range res.InputRequests {
		el.RequestID = id
		p, ok := req.(*mcp.ElicitParams)
		if !ok {
			return el, fmt.Sprintf("the server asked for input of a kind (%T) this desk does not answer; it declined", req)
		}
		if reason := askable(el, p); reason != "" {
			return el, reason
		}
	}
	return el, ""
}

// askable fills el with p's message and schema, or says why p cannot be put to a person
// (URL mode, a schema missing, unusable or outside the MCP elicitation subset, a confirmation
// an empty answer does not satisfy).
func askable(el *Elicitation, p *mcp.ElicitParams) string {
	if len(p.Message) > MaxElicitationMessageBytes {
		return fmt.Sprintf("the server asked for input with a message longer than %d bytes; the desk declined", MaxElicitationMessageBytes)
	}
	el.Message = p.Message
	if p.Mode == "url" || p.URL != "" {
		return "the server asked the person to open a URL (URL-mode elicitation), which this desk does not support; it declined"
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil || p.RequestedSchema == nil || !schema.Usable(raw) {
		return "the server asked for input with a schema that is missing or not usable; the desk declined"
	}
	sch, err := schema.Compile(raw)
	if err != nil {
		return "the server asked for input with a schema that does not compile; the desk declined"
	}
	if !sch.HasForm() && len(sch.Validate(map[string]any{})) > 0 {
		return "the server asked to confirm (a request without fields) with a schema that an empty answer does not satisfy; the desk declined"
	}
	if r := schema.Classify(raw); r.Tier != schema.TierPortable {
		return fmt.Sprintf("the server asked for input with a schema outside the MCP elicitation subset (%s at %s); the desk declined", r.Construct, r.At)
	}
	el.Schema = raw
	return ""
}

// retryParams is the call again with the answer to its input request and the request state
// echoed byte for byte.
func retryParams(name string, args any, a ElicitationAnswer) *mcp.CallToolParams {
	resp := &mcp.ElicitResult{Action: a.Action}
	if a.Action == ElicitAccept {
		resp.Content = a.Content
	}
	return &mcp.CallToolParams{Name: name, Arguments: args,
		InputResponses: mcp.InputResponseMap{a.RequestID: resp}, RequestState: a.State}
}

// joinNotes puts the desk's notes before the server's text.
func joinNotes(notes []string, text string) string {
	var parts []string
	for _, n := range notes {
		if n != "" {
			parts = append(parts, "("+n+")")
		}
	}
	return strings.Join(append(parts, text), "\n")
}

// checkListed refuses the call when the server no longer lists the tool as it was applied.
func (t *mcpTool) checkListed(ctx context.Context, cs *mcp.ClientSession) (Result, bool) {
	listed, err := listTools(ctx, cs)
	if err != nil {
		return t.fail(err.Error()), true
	}
	lt, ok := listed[t.def.MCP.Tool]
	switch {
	case !ok:
		return t.fail(fmt.Sprintf("server %s no longer lists tool %s; the call was not made (apply the file again)", t.def.MCP.Server, t.def.MCP.Tool)), true
	case lt.Digest != t.def.MCP.Digest:
		return t.fail(fmt.Sprintf("server %s now describes tool %s differently from what was applied and reviewed; the call was not made (apply the file again)", t.def.MCP.Server, t.def.MCP.Tool)), true
	}
	return Result{}, false
}

// resultText is the text of a tool result: its text contents joined by new lines, other
// contents named by kind, or the structured content as JSON when there is nothing else.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		default:
			parts = append(parts, fmt.Sprintf("[%T content not shown]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.ToValidUTF8(strings.Join(parts, "\n"), "\uFFFD")
}

// tooLarge says that the server's result was past the tool's bound.
func (t *mcpTool) tooLarge() string {
	return fmt.Sprintf("the server's result is larger than %d bytes (max_response_bytes); it was not read further", t.limit)
}

// fail is the tool error the model sees.
func (t *mcpTool) fail(msg string) Result {
	return Result{IsError: true, Content: fmt.Sprintf("tool %s: %s", t.def.Name, msg)}
}
