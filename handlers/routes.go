package handlers

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/metrics"
	"runsdesk/runtime"
	"runsdesk/views"
)

// Routes. This file is the only place routes are registered; deny by default: a path not listed
// is 404, a listed path with another method 405, TRACE and CONNECT always 405.
//
//	method  path                    access            handler            file
//	GET     /healthz                public, bare      metrics.Healthz    metrics/health.go
//	GET     /readyz                 public, bare      Config.Ready       metrics/health.go
//	GET     /metrics                loopback peer     Metrics.Handler    metrics/handler.go
//	GET     /static/:file           public, bare      staticFile         static.go
//	GET     /favicon.ico            public, bare      favicon            static.go
//	GET     /login                  public            loginForm          login.go
//	POST    /login                  public            loginSubmit        login.go
//	GET     /login/oidc             public            oidcStart          login_oidc.go (404 without SignOn)
//	GET     /login/oidc/callback    public            oidcCallback       login_oidc.go (404 without SignOn)
//	GET     /login/code             public            loginCodeForm      login_mfa.go (no code owed: 303 /login)
//	POST    /login/code             public            loginCodeSubmit    login_mfa.go (no code owed: 303 /login)
//	GET     /                       signed in         home               home.go
//	POST    /logout                 account           logout             logout.go
//	GET     /account/password       account           passwordForm       password.go
//	POST    /account/password       account           passwordSubmit     password.go
//	GET     /account/security       enrol             security           account_security.go (404 without MFA)
//	POST    /account/security/totp  enrol             securityBegin      account_security.go (422 without keys)
//	GET     /account/security/qr.png enrol            securityQR         account_security.go (404 unless a secret waits)
//	POST    /account/security/totp/confirm enrol      securityConfirm    account_security.go
//	POST    /account/security/recovery-codes enrol    securityRecoveryCodes account_security.go
//	GET     /account                signed in         account            account.go
//	POST    /account/time-zone      signed in         accountTimeZone    account.go
//	GET     /account/sessions       signed in         accountSessions    account_sessions.go
//	POST    /account/sessions/end   signed in         accountSessionEnd  account_sessions.go (not an open session of theirs: 404)
//	POST    /account/sessions/end-others signed in    accountSessionsEndOthers account_sessions.go
//	GET     /runs                   signed in         runsList           runs_list.go
//	GET     /runs/recent            signed in         runsRecent         runs_recent.go
//	GET     /events                 signed in         events             events.go (Server-Sent Events; long-lived)
//	GET     /typo3/runs             signed in         typo3RunsList      typo3_runs.go (read only; only with TYPO3Runs)
//	GET     /typo3/runs/:uuid       signed in         typo3RunShow       typo3_runs.go (read only; only with TYPO3Runs)
//	GET     /queue                  deciders          queueHealth        queue.go (per person: admins; 404 without Queue)
//	GET     /runs/bulk              deciders          runsBulkConfirm    runs_bulk.go
//	POST    /runs/bulk              deciders          runsBulkDecide     runs_bulk.go
//	GET     /runs/new               deciders          runsNew            runs_new.go
//	POST    /runs                   deciders          runsCreate         runs_new.go
//	GET     /runs/:uuid             signed in         runShow            run_show.go (runtime.Get → 404)
//	GET     /runs/:uuid/transcript  signed in         runTranscript      run_transcript.go
//	POST    /runs/:uuid/presence    signed in         runPresence        run_assign.go
//	POST    /runs/:uuid/comments    signed in         runComment         run_comment.go (support too; 422 keeps the text)
//	POST    /runs/:uuid/approval    deciders          runApprove         run_approve.go
//	POST    /runs/:uuid/assignment  deciders          runAssign          run_assign.go
//	GET     /runs/:uuid/edit        deciders          runEditForm        run_edit.go (?call=ID)
//	POST    /runs/:uuid/edit        deciders          runEditReview      run_edit.go (?call=ID)
//	POST    /runs/:uuid/input       deciders          runInputSubmit     run_input_submit.go
//	POST    /runs/:uuid/draft       deciders          runDraftSave       run_draft.go
//	GET     /runs/:uuid/cancel      deciders          runCancelConfirm   run_cancel.go (reviewer: own runs)
//	POST    /runs/:uuid/cancel      deciders          runCancel          run_cancel.go (reviewer: own runs)
//	GET     /audit                  admins            auditTrail         audit_trail.go (audited: audit_view)
//	GET     /audit/export           admins            auditExport        audit_trail.go (?format=csv|jsonl; audited)
//	GET     /admin/configuration    admins            adminConfiguration admin_configuration.go (read-only; 404 without Applied)
//	GET     /admin/configuration.yaml admins          adminConfigurationYAML admin_configuration.go (an apply file; audited)
//	GET     /admin/people           admins            adminPeople        admin_people.go (audited: user_list)
//	POST    /admin/people           admins            peopleAdd          admin_people.go (password shown once)
//	POST    /admin/people/disable   admins            personDisable      admin_people.go (last enabled admin: 422)
//	POST    /admin/people/enable    admins            personEnable       admin_people.go
//	POST    /admin/people/role      admins            personRole         admin_people.go (last enabled admin: 422)
//	POST    /admin/people/password  admins            personResetPassword admin_people.go (password shown once)
//	POST    /admin/people/sessions  admins            personEndSessions  admin_people.go
//	POST    /admin/people/mfa-reset admins            personResetFactor  admin_people.go
//	GET     /admin/tokens           admins            adminTokens        admin_tokens.go (audited: token_list)
//	POST    /admin/tokens           admins            tokenCreate        admin_tokens.go (token shown once)
//	POST    /admin/tokens/revoke    admins            tokenRevoke        admin_tokens.go
//	POST    /admin/tokens/rotate    admins            tokenRotate        admin_tokens.go (token shown once)
//	GET     /api/v1/openapi.json    public            openAPI            api/openapi.go (the API's description)
//	*       /api/v1/...             bearer token      package api        api/api.go (its own table)
//	POST    /mcp                    bearer token      package mcpserver  mcpserver/server.go (scope request; GET, DELETE: 405)
//
// A new route goes in the group whose access it needs, in this table, and in routeMatrix in
// routes_test.go (which fails on any route it does not know).
//
// Every route first passes the global middleware of New: request id, Retry-After on 503,
// metrics, access log, security headers, recover, TRACE refusal, body limit, cross-origin
// check. Then its group's chain:
//
//	bare       nothing more (no session, no database access)
//	signIn     slot (Config.Gate; else 503) → session → load user (and, every 15 minutes of a
//	           single-sign-on session, its provider's word: login_oidc.go) → sign-in form's CSRF on
//	           POST (login_csrf.go: no session is stored for a visitor)
//	account    slot → session → load user → a signed-in person (else 303 /login) → CSRF on POST
//	enrol      account's chain, and a person whose password was reset is sent to
//	           /account/password (303) until they have chosen a new one
//	signedIn   enrol's chain, and a person who must enrol a second factor (--require-mfa) is
//	           sent to /account/security (303) until they have (login_mfa.go)
//	deciders   signedIn + role admin or reviewer (else 403, audited)
//	admins     signedIn + role admin (else 403, audited)
//
// The API takes a slot of the same gate, authenticates itself (no cookies, hence no CSRF; its
// OpenAPI document alone is served without a token) and answers errors as JSON. A request of a
// route registered long-lived (Config.Waiters, package waiters: GET /api/v1/runs/:uuid?wait=…,
// GET /api/v1/requests/:id?wait=…, GET /events, GET /api/v1/events, a POST /mcp calling a
// holding tool) takes no slot and has no request deadline. /mcp authenticates as the API does
// (api.API.Guard).
//
// Loading the user also checks the session's row in the session index (sessions.go): a session
// signed out from another one, or without a row, continues anonymously like an expired one.
//
// Every chain with a session checks posted form text right after loading the user (formText:
// 400 for invalid UTF-8 or a NUL character; the input form reports it on the field instead).
func (h *Handlers) routes(e *echo.Echo) {
	g := h.groups(e)
	g.bare.GET("/healthz", metrics.Healthz)
	if h.ready != nil {
		g.bare.GET("/readyz", h.ready)
	}
	if h.metrics != nil {
		g.bare.with(metrics.LoopbackOnly()).GET("/metrics", h.metrics.Handler())
	}
	g.bare.GET("/static/:file", h.staticFile)
	g.bare.GET("/favicon.ico", h.favicon)
	g.signIn.GET("/login", h.loginForm)
	g.signIn.POST("/login", h.loginSubmit)
	g.signIn.GET("/login/oidc", h.oidcStart)
	g.signIn.GET(oidcCallbackPath, h.oidcCallback)
	g.signIn.GET(loginCodePath, h.loginCodeForm)
	g.signIn.POST(loginCodePath, h.loginCodeSubmit)
	g.signedIn.GET("/", h.home)
	g.account.POST("/logout", h.logout)
	g.account.GET("/account/password", h.passwordForm)
	g.account.POST("/account/password", h.passwordSubmit)
	g.enrol.GET(views.SecurityPath, h.security)
	g.enrol.POST(views.SecurityBeginPath, h.securityBegin)
	g.enrol.GET(views.SecurityQRPath, h.securityQR)
	g.enrol.POST(views.SecurityConfirmPath, h.securityConfirm)
	g.enrol.POST(views.SecurityRecoveryCodesPath, h.securityRecoveryCodes)
	g.signedIn.GET(views.AccountPath, h.account)
	g.signedIn.POST(views.AccountTimeZonePath, h.accountTimeZone)
	g.signedIn.GET(views.SessionsPath, h.accountSessions)
	g.signedIn.POST(views.SessionsEndPath, h.accountSessionEnd)
	g.signedIn.POST(views.SessionsEndOthersPath, h.accountSessionsEndOthers)
	g.signedIn.GET("/runs", h.runsList)
	g.signedIn.GET("/runs/recent", h.runsRecent)
	g.signedIn.GET(views.EventsPath, h.events)
	h.waiters.LongLived(http.MethodGet, views.EventsPath, nil)
	if h.typo3 != nil {
		g.signedIn.GET(views.TYPO3RunsPath, h.typo3RunsList)
		g.signedIn.GET(views.TYPO3RunsPath+"/:uuid", h.typo3RunShow)
	}
	g.deciders.GET(views.QueuePath, h.queueHealth)
	g.deciders.GET(views.BulkPath, h.runsBulkConfirm)
	g.deciders.POST(views.BulkPath, h.runsBulkDecide)
	g.deciders.GET("/runs/new", h.runsNew)
	g.deciders.POST("/runs", h.runsCreate)
	g.signedIn.GET("/runs/:uuid", h.runShow)
	g.signedIn.GET("/runs/:uuid/transcript", h.runTranscript)
	g.signedIn.POST("/runs/:uuid/presence", h.runPresence)
	g.signedIn.POST("/runs/:uuid/comments", h.runComment)
	g.deciders.POST("/runs/:uuid/approval", h.runApprove)
	g.deciders.POST("/runs/:uuid/assignment", h.runAssign)
	g.deciders.GET("/runs/:uuid/edit", h.runEditForm)
	g.deciders.POST("/runs/:uuid/edit", h.runEditReview)
	g.deciders.POST(routeRunInput, h.runInputSubmit)
	g.deciders.POST(routeRunDraft, h.runDraftSave)
	g.deciders.GET("/runs/:uuid/cancel", h.runCancelConfirm)
	g.deciders.POST("/runs/:uuid/cancel", h.runCancel)
	g.admins.GET(views.AuditPath, h.auditTrail)
	g.admins.GET(views.AuditExportPath, h.auditExport)
	g.admins.GET(views.ConfigurationPath, h.adminConfiguration)
	g.admins.GET(views.ConfigurationYAMLPath, h.adminConfigurationYAML)
	g.admins.GET(views.AdminPeoplePath, h.adminPeople)
	g.admins.POST(views.AdminPeoplePath, h.peopleAdd)
	g.admins.POST(views.PersonActionPath("disable"), h.personDisable)
	g.admins.POST(views.PersonActionPath("enable"), h.personEnable)
	g.admins.POST(views.PersonActionPath("role"), h.personRole)
	g.admins.POST(views.PersonActionPath("password"), h.personResetPassword)
	g.admins.POST(views.PersonActionPath("sessions"), h.personEndSessions)
	g.admins.POST(views.PersonActionPath("mfa-reset"), h.personResetFactor)
	g.admins.GET(views.AdminTokensPath, h.adminTokens)
	g.admins.POST(views.AdminTokensPath, h.tokenCreate)
	g.admins.POST(views.TokenActionPath("revoke"), h.tokenRevoke)
	g.admins.POST(views.TokenActionPath("rotate"), h.tokenRotate)
	if h.api != nil {
		h.api.Register(e.Group("/api/v1"))
	}
	if h.mcp != nil {
		h.mcp.Register(e)
	}
}

// routeGroups are the access levels of the route table.
type routeGroups struct {
	bare, signIn, account, enrol, signedIn, deciders, admins group
}

func (h *Handlers) groups(e *echo.Echo) routeGroups {
	bare := group{e: e}
	session := bare.with(h.waiters.Unless(h.gate.Middleware(busy)), h.withSession, h.loadActor, h.recheckSignOn, formText)
	person := session.with(h.requireUser)
	chosen := person.with(h.requireChosenPassword)
	enrolled := chosen.with(h.requireFactor)
	return routeGroups{
		bare:     bare,
		signIn:   session.with(h.verifyLoginCSRF),
		account:  person.with(h.verifyCSRF),
		enrol:    chosen.with(h.verifyCSRF),
		signedIn: enrolled.with(h.verifyCSRF),
		deciders: enrolled.with(h.requireRole(runtime.RoleAdmin, runtime.RoleReviewer), h.verifyCSRF),
		admins:   enrolled.with(h.requireRole(runtime.RoleAdmin), h.verifyCSRF),
	}
}

// group registers routes with a fixed middleware chain. runsdesk does not use echo.Group:
// its Use adds catch-all routes that would send unknown paths through the group's middleware.
type group struct {
	e  *echo.Echo
	mw []echo.MiddlewareFunc
}

// with returns a group whose chain is g's followed by mw.
func (g group) with(mw ...echo.MiddlewareFunc) group {
	return group{e: g.e, mw: append(slices.Clip(g.mw), mw...)}
}

// GET registers a GET route.
func (g group) GET(path string, handler echo.HandlerFunc) { g.e.GET(path, handler, g.mw...) }

// POST registers a POST route.
func (g group) POST(path string, handler echo.HandlerFunc) { g.e.POST(path, handler, g.mw...) }
