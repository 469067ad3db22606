// Package mcptest runs a real MCP server, built with the official go-sdk, on loopback for
// tests: tools whose listing and handlers a test may change while it runs, and a record of
// the request headers the server received.
package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/runtime/tool"
)

// Tool is one tool the server lists (Tool) and how it answers a call (Handler).
type Tool struct {
	Tool    mcp.Tool
	Handler mcp.ToolHandler
}

// Server is a streamable-HTTP MCP server on 127.0.0.1. Every new session sees the tools as
// they are when it starts. It is safe for concurrent use.
type Server struct {
	// URL is the server's endpoint.
	URL string

	opts    *mcp.ServerOptions
	mu      sync.Mutex
	tools   map[string]Tool
	order   []string
	headers []http.Header
}

// New starts a server listing tools, stopped when tb ends.
func New(tb testing.TB, tools ...Tool) *Server { return start(tb, nil, tools) }

// InSessionProtocol is the protocol an in-session server speaks: the last before the
// multi-round-trip form, on which a server asks for input by sending elicitation/create
// during the call.
const InSessionProtocol = "2025-11-25"

// NewInSession starts a server like New that keeps sessions and speaks InSessionProtocol, so
// its handlers may ask for input during a call (see AskingInSession).
func NewInSession(tb testing.TB, tools ...Tool) *Server {
	return start(tb, &mcp.ServerOptions{SupportedProtocolVersions: []string{InSessionProtocol}}, tools)
}

// start starts a server with opts (nil: stateless, every protocol).
func start(tb testing.TB, opts *mcp.ServerOptions, tools []Tool) *Server {
	s := &Server{tools: map[string]Tool{}, opts: opts}
	for _, t := range tools {
		s.Set(t)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.build() }, &mcp.StreamableHTTPOptions{Stateless: opts == nil})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	s.URL = srv.URL + "/mcp"
	return s
}

// Set adds t, or replaces the tool of its name.
func (s *Server) Set(t Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tools[t.Tool.Name]; !ok {
		s.order = append(s.order, t.Tool.Name)
	}
	s.tools[t.Tool.Name] = t
}

// Headers returns the headers of every request received so far, in order.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// build is a server with the current tools.
func (s *Server) build() *mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, s.opts)
	for _, name := range s.order {
		t := s.tools[name]
		def := t.Tool
		srv.AddTool(&def, t.Handler)
	}
	return srv
}

// Text is a handler answering every call with text.
func Text(text string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}

// ObjectSchema is an input schema of the given properties (a JSON Schema object; nil: none).
func ObjectSchema(properties map[string]any) map[string]any {
	if properties == nil {
		return map[string]any{"type": "object"}
	}
	return map[string]any{"type": "object", "properties": properties}
}

// Definition lists s and returns the definition apply would store for its tool remote as the
// desk's tool name, of server "crm" with the given operator declaration.
func (s *Server) Definition(tb testing.TB, name, remote string, requiresApproval bool) tool.Definition {
	tb.Helper()
	return Definition(tb, s.URL, name, remote, requiresApproval)
}

// Definition lists the MCP server at url and returns the definition apply would store for
// its tool remote as the desk's tool name, of server "crm" with the given operator
// declaration.
func Definition(tb testing.TB, url, name, remote string, requiresApproval bool) tool.Definition {
	tb.Helper()
	listed, err := tool.ListMCP(context.Background(), tool.MCPServer{URL: url}, nil, nil)
	if err != nil {
		tb.Fatalf("ListMCP: %v", err)
	}
	lt, ok := listed[remote]
	if !ok {
		tb.Fatalf("tool %s not listed", remote)
	}
	return tool.Definition{
		Name: name, Description: lt.Description, Parameters: lt.InputSchema,
		Effect: tool.EffectOfAnnotations(lt.Annotations), RequiresApproval: requiresApproval,
		HTTP: tool.HTTPConfig{URL: url},
		MCP:  &tool.MCPConfig{Server: "crm", Tool: remote, Annotations: lt.Annotations, Digest: lt.Digest},
	}
}

// Answer is what a tool made by Asking received when its call was retried: the person's
// action and content, and whether the request state came back byte for byte.
type Answer struct {
	Action      string
	Content     map[string]any
	StateEchoed bool
}

// String renders the answer as "ACTION CONTENT state-ok=BOOL" with the content's "amount".
func (a Answer) String() string {
	return fmt.Sprintf("%s %v state-ok=%v", a.Action, a.Content["amount"], a.StateEchoed)
}

// Asking is a handler that, on a call without answers, asks for input (one form-mode
// elicitation with id "amount", message and requested schema, with request state state) and,
// on the retry carrying the answer, reports it to answered and returns "refund " + the answer.
func Asking(message string, requested any, state string, answered func(Answer)) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, ok := req.Params.InputResponses["amount"]
		if !ok {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"amount": &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: requested}},
				RequestState:  state,
			}, nil
		}
		er, _ := resp.(*mcp.ElicitResult)
		if er == nil {
			return nil, fmt.Errorf("answer of type %T", resp)
		}
		a := Answer{Action: er.Action, Content: er.Content, StateEchoed: req.Params.RequestState == state}
		answered(a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refund " + a.String()}}}, nil
	}
}

// AskingInSession is a handler that asks for input during the call (elicitation/create with
// message and requested schema, on a server made by NewInSession), reports the answer to
// answered and returns "refund " + the answer. The request is given up when tb ends, so a
// call whose client went away does not keep the server from closing.
func AskingInSession(tb testing.TB, message string, requested any, answered func(Answer)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(tb.Context(), cancel)()
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: requested})
		if err != nil {
			return nil, err
		}
		a := Answer{Action: res.Action, Content: res.Content, StateEchoed: true}
		answered(a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refund " + a.String()}}}, nil
	}
}

// AskingAgain is a handler that asks for input (one form-mode elicitation with id "amount",
// message and requested schema) on every call without a decline, counting its requests in the
// request state; a retry carrying a decline returns "declined at request N".
func AskingAgain(message string, requested any) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := len(req.Params.RequestState)
		if r, ok := req.Params.InputResponses["amount"].(*mcp.ElicitResult); ok && r.Action == "decline" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("declined at request %d", n)}}}, nil
		}
		return &mcp.CallToolResult{RequestState: strings.Repeat("s", n+1),
			InputRequests: mcp.InputRequestMap{"amount": &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: requested}}}, nil
	}
}
