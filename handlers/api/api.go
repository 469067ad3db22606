// Package api is runsdesk's token-authenticated JSON API for machine clients (service
// accounts), mounted under /api/v1:
//
//	POST /runs                    scope run      start a run               201 + Location
//	GET  /runs                    scope read     a page of runs            200
//	GET  /runs/:uuid              scope read     the run, with its pause   200 (?wait=30s: long-poll)
//	GET  /runs/:uuid/events       scope read     events after ?after=N     200
//	GET  /runs/:uuid/calls        scope read     the calls it executed     200
//	GET  /runs/:uuid/transcript   scope read     what it said, step by step 200
//	POST /runs/:uuid/approval     scope approve  decide a paused turn      202 + Location
//	POST /runs/:uuid/cancel       scope cancel   cancel the run            200
//	POST /runs/:uuid/assignment   scope approve  assign or release it      200
//	GET  /queue                   scope read     the queue's health        200 (404 without Config.Queue)
//	GET  /events                  scope read     the live desk (SSE)       200 text/event-stream (events.go)
//	POST /requests                scope request  create an external request 201 + Location
//	GET  /requests/:id            scope request  its answer (own requests)  200 (?wait=50s: long-poll, at most 60s)
//	DELETE /requests/:id          scope request  withdraw it while it waits 200
//	GET  /openapi.json            public         this table as OpenAPI 3.1 200 (openapi.go, openapi.json)
//
// There is deliberately no input route: service accounts never submit input, a person must.
// Every error is {"error":{"code","message"}}; a runtime error has its code's status and message
// in the refusal table (package refusal, listed in docs/state-machine.md); no error or log line
// repeats a submitted value or a token.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"runsdesk/handlers/admission"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// Runtime is the part of *engine.Runtime the API drives.
type Runtime interface {
	Start(ctx context.Context, actor runtime.Actor, configuration, prompt string) (runtime.Run, error)
	// CreateRequest creates a request of actor in an external configuration.
	CreateRequest(ctx context.Context, actor runtime.Actor, req runtime.NewRequest) (runtime.Run, error)
	Get(ctx context.Context, actor runtime.Actor, uuid string) (runtime.RunView, error)
	// Answer is what actor is shown of the output of run, read by Get.
	Answer(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Answer, error)
	List(ctx context.Context, actor runtime.Actor, q runtime.RunsQuery) ([]runtime.RunView, error)
	DisplayConfigurations(ctx context.Context) ([]runtime.Configuration, error)
	Events(ctx context.Context, actor runtime.Actor, uuid string, after int) ([]runtime.Event, error)
	Calls(ctx context.Context, actor runtime.Actor, uuid string) ([]runtime.ExecutedCall, error)
	// Transcript is what actor is shown of what run, read by Get, said.
	Transcript(ctx context.Context, actor runtime.Actor, run runtime.Run) (runtime.Transcript, error)
	Approve(ctx context.Context, actor runtime.Actor, uuid string, d runtime.ApprovalDecision) (runtime.Outcome, error)
	RequestChanges(ctx context.Context, actor runtime.Actor, uuid string, c runtime.ChangeRequest) (runtime.Outcome, error)
	Cancel(ctx context.Context, actor runtime.Actor, uuid string) (runtime.Run, error)
	// RequestAnswer is the answer of actor's external request id; WithdrawRequest withdraws
	// it while it waits.
	RequestAnswer(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error)
	WithdrawRequest(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error)
	Assign(ctx context.Context, actor runtime.Actor, uuid string, a runtime.Assignment) (runtime.Run, error)
}

// Tokens resolves a bearer token to its service account (*db.ServiceAccounts implements it).
// An unknown, malformed or disabled token is an error wrapping runtime.ErrNotFound, an expired
// one runtime.ErrTokenExpired; any other error is a store failure.
type Tokens interface {
	ActorForToken(ctx context.Context, token string) (runtime.Actor, error)
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 64 << 10
	DefaultRate         = rate.Limit(10)
	DefaultBurst        = 20
	// DefaultAuthFailureRate and DefaultAuthFailureBurst: 20 failed authentications per
	// address at once, then one more every 6 s.
	DefaultAuthFailureRate  = rate.Limit(1.0 / 6)
	DefaultAuthFailureBurst = 20
)

// Config wires an API. Runtime and Tokens are required.
type Config struct {
	Runtime Runtime
	Tokens  Tokens
	// Audit, when set, records starts, decisions, cancels and refusals (see the Audit*
	// actions).
	Audit  Auditor
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies (default 64 KiB); a larger body is 413.
	MaxBodyBytes int64
	// Rate and Burst are the per-token request budget (default 10/s, burst 20).
	Rate  rate.Limit
	Burst int
	// AuthFailureRate and AuthFailureBurst are the budget of failed authentications per
	// client address (default one per 6 s, burst 20). An address that used it up gets 429
	// with Retry-After for every request, valid token or not, until it refills.
	AuthFailureRate  rate.Limit
	AuthFailureBurst int
	// Now is the clock of the rate limiters and of the queue's figures (default time.Now).
	Now func() time.Time
	// Gate, when set, bounds the API requests that build their responses at once, before
	// authentication (share it with the web pages'); a request whose deadline passes while it
	// waits is 503 "unavailable".
	Gate *admission.Gate
	// Waiters holds the long-lived requests (GET /runs/:uuid?wait=…, GET /events): they skip
	// the gate and the request deadline and are capped apart (nil: both are refused as busy).
	Waiters *waiters.Hall
	// Queue, when set, serves GET /queue (the queue's health without the per-person figures).
	Queue QueueHealth
}

// API serves the JSON API. It is safe for concurrent use.
type API struct {
	rt       Runtime
	tokens   Tokens
	auditor  Auditor
	log      *slog.Logger
	maxBody  int64
	limiter  *limiter
	failures *limiter
	runPath  string
	// requestPath is the route of one request, with its :id.
	requestPath string
	gate        *admission.Gate
	waiters     *waiters.Hall
	queue       QueueHealth
	clock       func() time.Time
	// docETag is the ETag of the OpenAPI document.
	docETag string
}

// New builds an API from cfg, applying defaults.
func New(cfg Config) *API {
	a := &API{rt: cfg.Runtime, tokens: cfg.Tokens, auditor: cfg.Audit, log: cfg.Logger, maxBody: cfg.MaxBodyBytes, gate: cfg.Gate, waiters: cfg.Waiters, queue: cfg.Queue, docETag: openAPIETag()}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.maxBody <= 0 {
		a.maxBody = DefaultMaxBodyBytes
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.AuthFailureRate <= 0 {
		cfg.AuthFailureRate = DefaultAuthFailureRate
	}
	if cfg.AuthFailureBurst <= 0 {
		cfg.AuthFailureBurst = DefaultAuthFailureBurst
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a.clock = cfg.Now
	a.limiter = newLimiter(cfg.Rate, cfg.Burst, cfg.Now)
	a.failures = newLimiter(cfg.AuthFailureRate, cfg.AuthFailureBurst, cfg.Now)
	return a
}

// Register mounts the API on g (the /api/v1 group). Every route, and every unknown path or
// method under g, answers in the API's error shape and takes the gate's slot; the OpenAPI
// document is public, and authentication (with the per-address budget of failures) and the
// per-token rate limit apply to every other route and path, the route's scope to each route.
func (a *API) Register(g *echo.Group) {
	g.Use(a.respond, a.waiters.Unless(a.gate.Middleware(busy)))
	route(g, openAPIPath, endpoint{method: http.MethodGet, h: a.openAPI})
	g.Use(a.authenticate, a.limit)
	route(g, "/runs", endpoint{http.MethodPost, a.createRun, runtime.ScopeRun}, endpoint{http.MethodGet, a.listRuns, runtime.ScopeRead})
	a.runPath = route(g, "/runs/:uuid", endpoint{http.MethodGet, a.getRun, runtime.ScopeRead})
	a.waiters.LongLived(http.MethodGet, a.runPath, asksToWait)
	route(g, "/runs/:uuid/events", endpoint{http.MethodGet, a.runEvents, runtime.ScopeRead})
	route(g, "/runs/:uuid/calls", endpoint{http.MethodGet, a.runCalls, runtime.ScopeRead})
	route(g, "/runs/:uuid/transcript", endpoint{http.MethodGet, a.runTranscript, runtime.ScopeRead})
	route(g, "/runs/:uuid/approval", endpoint{http.MethodPost, a.approveRun, runtime.ScopeApprove})
	route(g, "/runs/:uuid/cancel", endpoint{http.MethodPost, a.cancelRun, runtime.ScopeCancel})
	route(g, "/runs/:uuid/assignment", endpoint{http.MethodPost, a.assignRun, runtime.ScopeApprove})
	route(g, "/queue", endpoint{http.MethodGet, a.queueHealth, runtime.ScopeRead})
	a.waiters.LongLived(http.MethodGet, route(g, "/events", endpoint{http.MethodGet, a.events, runtime.ScopeRead}), nil)
	route(g, "/requests", endpoint{http.MethodPost, a.createRequest, runtime.ScopeRequest})
	a.requestPath = route(g, "/requests/:id", endpoint{http.MethodGet, a.getRequest, runtime.ScopeRequest},
		endpoint{http.MethodDelete, a.withdrawRequest, runtime.ScopeRequest})
	a.waiters.LongLived(http.MethodGet, a.requestPath, asksToWait)
}

// busy is the error of a request whose deadline passed while it waited for a slot.
func busy(err error) error {
	return &problem{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the server is busy; try again", Err: err}
}

// endpoint is one method of a path: its handler and the scope it requires ("" for a public
// route, registered before authentication).
type endpoint struct {
	method string
	h      echo.HandlerFunc
	scope  string
}

// route registers each endpoint on path behind its scope check, and a 405 for every other
// method on path (so that too is answered in the API's error shape); it returns the path.
func route(g *echo.Group, path string, endpoints ...endpoint) string {
	allow := make([]string, len(endpoints))
	for i, ep := range endpoints {
		allow[i] = ep.method
	}
	g.Any(path, methodNotAllowed(strings.Join(allow, ", ")))
	var r *echo.Route
	for _, ep := range endpoints {
		var mw []echo.MiddlewareFunc
		if ep.scope != "" {
			mw = append(mw, requireScope(ep.scope))
		}
		r = g.Add(ep.method, path, ep.h, mw...)
	}
	return r.Path
}

func methodNotAllowed(allow string) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return apiError(http.StatusMethodNotAllowed, "method_not_allowed", "this method is not allowed here")
	}
}

// location is the API path of run uuid.
func (a *API) location(uuid string) string {
	return strings.Replace(a.runPath, ":uuid", uuid, 1)
}
