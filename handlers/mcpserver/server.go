// Package mcpserver is runsdesk's MCP server at POST /mcp: agents running anywhere ask the
// desk's people for an approval or an answer through MCP tools (tools.go), authenticated with
// the JSON API's tokens (scope request) and served by the official Go SDK's streamable HTTP
// handler in stateless mode, so any process behind a load balancer answers any call. A call
// that holds until a person decides is a long-lived request (package waiters): it skips the
// admission gate and the request deadline, and the hall caps it.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// Path is the MCP endpoint.
const Path = "/mcp"

// Defaults of Config.
const (
	// DefaultHold is how long request_approval, request_input and await_decision hold a call:
	// under the 60 s timeout common in clients.
	DefaultHold = 50 * time.Second
	// DefaultToolUseHold is how long approve_tool_use holds a call in a configuration without
	// `wait: expires_after`.
	DefaultToolUseHold = 10 * time.Minute
)

// maxBodyBytes bounds a request to /mcp (the web server's own body limit).
const maxBodyBytes = 1 << 20

// writeSlack is how far past its hold a held call's connection may still write its answer.
const writeSlack = 10 * time.Second

// Runtime is the part of *engine.Runtime the tools drive.
type Runtime interface {
	CreateRequest(ctx context.Context, actor runtime.Actor, req runtime.NewRequest) (runtime.Run, error)
	RequestAnswer(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error)
	WithdrawRequest(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error)
	DisplayConfigurations(ctx context.Context) ([]runtime.Configuration, error)
}

// Guard authenticates callers exactly as the JSON API does (*api.API implements it).
type Guard interface {
	// Guard is the chain of a route reached with the API's tokens and scope.
	Guard(scope string) []echo.MiddlewareFunc
	// Caller is the service account Guard authenticated for c.
	Caller(c echo.Context) runtime.Actor
	// StillAllowed checks c's token again, for a request held open.
	StillAllowed(c echo.Context, scope string) error
	// Audit records action on a run for c's service account, its outcome err's.
	Audit(c echo.Context, action, runUUID string, err error)
}

// Config wires a Server. Runtime and Guard are required.
type Config struct {
	Runtime Runtime
	Guard   Guard
	// Waiters holds the held calls (nil: a call cannot be held, and answers pending at once).
	Waiters *waiters.Hall
	Logger  *slog.Logger
	// Hold is how long request_approval, request_input and await_decision hold a call
	// (default DefaultHold); ToolUseHold how long approve_tool_use holds one in a
	// configuration without `wait: expires_after` (default DefaultToolUseHold).
	Hold        time.Duration
	ToolUseHold time.Duration
}

// Server is the MCP server. Build it with New, mount it with Register.
type Server struct {
	rt          Runtime
	guard       Guard
	waiters     *waiters.Hall
	log         *slog.Logger
	hold        time.Duration
	toolUseHold time.Duration
	http        http.Handler
}

// New builds a Server from cfg, applying defaults.
func New(cfg Config) *Server {
	s := &Server{rt: cfg.Runtime, guard: cfg.Guard, waiters: cfg.Waiters, log: cfg.Logger, hold: cfg.Hold, toolUseHold: cfg.ToolUseHold}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.hold <= 0 {
		s.hold = DefaultHold
	}
	if s.toolUseHold <= 0 {
		s.toolUseHold = DefaultToolUseHold
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "runsdesk", Title: "runsdesk", Version: "1"}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.log,
		Capabilities: &mcp.ServerCapabilities{},
	})
	for _, t := range s.tools() {
		srv.AddTool(t.tool, bound(t.handle))
	}
	// The SDK's DNS-rebinding check refuses a non-loopback Host on a loopback peer, which is
	// every request behind a reverse proxy on the same host; a bearer token, never sent by a
	// browser on its own, is what protects /mcp.
	s.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       s.log,
		DisableLocalhostProtection:   true,
		MaxRequestBodyBytes:          maxBodyBytes,
		PropagateRequestCancellation: true,
	})
	return s
}

// Register mounts POST /mcp on e behind the API's authentication (scope request); GET and
// DELETE answer 405, as the SDK's stateless mode does. A call of a holding tool is
// long-lived.
func (s *Server) Register(e *echo.Echo) {
	e.Any(Path, s.serve, s.guard.Guard(runtime.ScopeRequest)...)
	s.waiters.LongLived(http.MethodPost, Path, holds)
}

// serve hands the request to the SDK with its caller in the context, and returns once the
// tool calls it carried have ended; a proxy is asked not to buffer the answer (progress
// notifications come before the result).
func (s *Server) serve(c echo.Context) error {
	r := c.Request()
	k := &caller{actor: s.guard.Caller(c), guard: s.guard, conn: r.Context(), c: c}
	defer k.close()
	c.Response().Header().Set("X-Accel-Buffering", "no")
	s.http.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), callerKey{}, k)))
	return nil
}

// caller is the authenticated service account of one request to /mcp, and its connection.
type caller struct {
	actor runtime.Actor
	guard Guard
	// conn is the HTTP request's context: it ends when the client goes away.
	conn context.Context

	mu     sync.Mutex
	c      echo.Context
	closed bool
	calls  sync.WaitGroup
}

// errGone is a tool call's error when its HTTP request is over: no one reads the answer.
var errGone = errors.New("mcpserver: the request carrying the call is over")

// bound runs h as one tool call of its caller's request: it is refused once the request is
// over, and its context ends when the client goes away (in stateless mode nothing else can
// read the answer, whatever the protocol version), so a held call leaves the hall at once.
func bound(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		k := callerOf(ctx)
		if k == nil || !k.begin() {
			return nil, errGone
		}
		defer k.calls.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(k.conn, cancel)()
		return h(ctx, req)
	}
}

// begin counts a tool call of the caller's request; false once the request is over.
func (k *caller) begin() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return false
	}
	k.calls.Add(1)
	return true
}

// close refuses further tool calls and waits for those running: the echo context they use
// is recycled once serve returns.
func (k *caller) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.calls.Wait()
}

type callerKey struct{}

// callerOf is the caller serve put in ctx (nil outside a request to /mcp).
func callerOf(ctx context.Context) *caller {
	k, _ := ctx.Value(callerKey{}).(*caller)
	return k
}

// stillAllowed checks the caller's token again.
func (k *caller) stillAllowed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.guard.StillAllowed(k.c, runtime.ScopeRequest)
}

// audit records action on run with err's outcome for the caller.
func (k *caller) audit(action, run string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.guard.Audit(k.c, action, run, err)
}

// holdFor gives the caller's connection the time a hold of limit needs to answer.
func (k *caller) holdFor(limit time.Duration) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return waiters.SetDeadlines(k.c.Response(), limit+writeSlack)
}

const heldKey = "runsdesk.mcp.held"

// holds reports whether the request calls a holding tool (read once from its body, which is
// put back for the SDK).
func holds(c echo.Context) bool {
	if held, ok := c.Get(heldKey).(bool); ok {
		return held
	}
	held := callsHoldingTool(c.Request())
	c.Set(heldKey, held)
	return held
}

// rpcMessage is what holds reads of a JSON-RPC message.
type rpcMessage struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// callsHoldingTool reports whether r's body is a tools/call (alone or in a batch) of a tool
// that holds; the body read is put back in front of what is left.
func callsHoldingTool(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil {
		return false
	}
	var batch []rpcMessage
	if json.Unmarshal(body, &batch) != nil {
		var one rpcMessage
		if json.Unmarshal(body, &one) != nil {
			return false
		}
		batch = []rpcMessage{one}
	}
	for _, m := range batch {
		if m.Method == "tools/call" && holdingTools[m.Params.Name] {
			return true
		}
	}
	return false
}
