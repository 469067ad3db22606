package handlers

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// access is who may use a route.
type access string

const (
	accessPublic   access = "public"    // anyone
	accessLoopback access = "loopback"  // a loopback peer (the tests are one, so: anyone)
	accessSignedIn access = "signed in" // any signed-in person
	accessDeciders access = "deciders"  // admin, reviewer
	accessAdmins   access = "admins"    // admin
	accessAPI      access = "api"       // a bearer token; a session cookie never counts
)

// routeMatrix is every route the router has, as "METHOD path" ("* path" for every method),
// with who may use it. TestRouteMatrix fails on a route missing here: add new routes with
// the access they need.
var routeMatrix = map[string]access{
	"GET /healthz":                          accessPublic,
	"GET /readyz":                           accessPublic,
	"GET /metrics":                          accessLoopback,
	"GET /static/:file":                     accessPublic,
	"GET /favicon.ico":                      accessPublic,
	"GET /login":                            accessPublic,
	"POST /login":                           accessPublic,
	"GET /login/oidc":                       accessPublic,
	"GET /login/oidc/callback":              accessPublic,
	"GET /login/code":                       accessPublic,
	"POST /login/code":                      accessPublic,
	"GET /account/security":                 accessSignedIn,
	"POST /account/security/totp":           accessSignedIn,
	"GET /account/security/qr.png":          accessSignedIn,
	"POST /account/security/totp/confirm":   accessSignedIn,
	"POST /account/security/recovery-codes": accessSignedIn,
	"GET /":                                 accessSignedIn,
	"POST /logout":                          accessSignedIn,
	"GET /account/password":                 accessSignedIn,
	"POST /account/password":                accessSignedIn,
	"GET /account":                          accessSignedIn,
	"POST /account/time-zone":               accessSignedIn,
	"GET /account/sessions":                 accessSignedIn,
	"POST /account/sessions/end":            accessSignedIn,
	"POST /account/sessions/end-others":     accessSignedIn,
	"GET /runs":                             accessSignedIn,
	"GET /runs/recent":                      accessSignedIn,
	"GET /events":                           accessSignedIn,
	"GET /typo3/runs":                       accessSignedIn,
	"GET /typo3/runs/:uuid":                 accessSignedIn,
	"GET /runs/bulk":                        accessDeciders,
	"POST /runs/bulk":                       accessDeciders,
	"POST /runs/:uuid/draft":                accessDeciders,
	"GET /runs/new":                         accessDeciders,
	"GET /queue":                            accessDeciders,
	"POST /runs":                            accessDeciders,
	"GET /runs/:uuid":                       accessSignedIn,
	"GET /runs/:uuid/transcript":            accessSignedIn,
	"POST /runs/:uuid/presence":             accessSignedIn,
	"POST /runs/:uuid/comments":             accessSignedIn,
	"POST /runs/:uuid/approval":             accessDeciders,
	"POST /runs/:uuid/assignment":           accessDeciders,
	"GET /runs/:uuid/edit":                  accessDeciders,
	"POST /runs/:uuid/edit":                 accessDeciders,
	"POST /runs/:uuid/input":                accessDeciders,
	"GET /runs/:uuid/cancel":                accessDeciders,
	"POST /runs/:uuid/cancel":               accessDeciders,
	"GET /audit":                            accessAdmins,
	"GET /audit/export":                     accessAdmins,
	"GET /admin/configuration":              accessAdmins,
	"GET /admin/configuration.yaml":         accessAdmins,
	"GET /admin/people":                     accessAdmins,
	"POST /admin/people":                    accessAdmins,
	"POST /admin/people/disable":            accessAdmins,
	"POST /admin/people/enable":             accessAdmins,
	"POST /admin/people/role":               accessAdmins,
	"POST /admin/people/password":           accessAdmins,
	"POST /admin/people/sessions":           accessAdmins,
	"POST /admin/people/mfa-reset":          accessAdmins,
	"GET /admin/tokens":                     accessAdmins,
	"POST /admin/tokens":                    accessAdmins,
	"POST /admin/tokens/revoke":             accessAdmins,
	"POST /admin/tokens/rotate":             accessAdmins,
	"* /api/v1/runs":                        accessAPI,
	"* /api/v1/runs/:uuid":                  accessAPI,
	"* /api/v1/runs/:uuid/events":           accessAPI,
	"* /api/v1/runs/:uuid/calls":            accessAPI,
	"* /api/v1/runs/:uuid/transcript":       accessAPI,
	"* /api/v1/runs/:uuid/approval":         accessAPI,
	"* /api/v1/runs/:uuid/cancel":           accessAPI,
	"* /api/v1/runs/:uuid/assignment":       accessAPI,
	"* /api/v1/queue":                       accessAPI,
	"* /api/v1/events":                      accessAPI,
	"* /api/v1/requests":                    accessAPI,
	"* /api/v1/requests/:id":                accessAPI,
	"* /mcp":                                accessAPI,
	"* /api/v1/openapi.json":                accessPublic,
}

// streams are the routes that answer a signed-in person with an event stream that stays
// open: the matrix reads their status and headers and hangs up.
var streams = map[string]bool{"GET /events": true}

// signsOut are the routes whose success is a redirect to /login: sign-out, and the code step
// of a sign-in when no code is owed.
var signsOut = map[string]bool{"POST /logout": true, "GET /login/code": true, "POST /login/code": true}

// mayUse reports whether role ("" = anonymous) may use a route of access a.
func mayUse(a access, role runtime.Role) bool {
	switch a {
	case accessPublic, accessLoopback:
		return true
	case accessSignedIn:
		return role != ""
	case accessDeciders:
		return role == runtime.RoleAdmin || role == runtime.RoleReviewer
	case accessAdmins:
		return role == runtime.RoleAdmin
	}
	return false
}

func TestRouteMatrix(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{typo3Runs: true})
	used := map[string]bool{}
	var routes []*echo.Route
	for _, r := range app.e.Routes() {
		if r.Method == echo.RouteNotFound || r.Method == http.MethodConnect {
			continue
		}
		key := r.Method + " " + r.Path
		if _, ok := routeMatrix[key]; !ok {
			key = "* " + r.Path
		}
		if _, ok := routeMatrix[key]; !ok {
			t.Errorf("route %s %s is not in routeMatrix: add it with the access it needs", r.Method, r.Path)
			continue
		}
		used[key] = true
		routes = append(routes, r)
	}
	for key := range routeMatrix {
		if !used[key] {
			t.Errorf("routeMatrix lists %q, which the router does not have", key)
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].Method+routes[i].Path < routes[j].Method+routes[j].Path })

	signedIn := map[runtime.Role]*client{}
	for _, role := range []runtime.Role{"", runtime.RoleSupport, runtime.RoleReviewer, runtime.RoleAdmin} {
		for _, r := range routes {
			a := routeMatrix[r.Method+" "+r.Path]
			if a == "" {
				a = routeMatrix["* "+r.Path]
			}
			c := signedIn[role]
			fresh := !isSafe(r.Method) && a != accessAPI
			if c == nil || fresh {
				c = clientFor(app, role)
				if !fresh {
					signedIn[role] = c
				}
			}
			var res response
			if streams[r.Method+" "+r.Path] {
				s, refused := c.openStream(r.Path, nil)
				res = refused
				if s != nil {
					s.close()
				}
			} else {
				res = c.call(r.Method, concretePath(r.Path))
			}
			checkAccess(t, r, a, role, res)
		}
	}
}

func clientFor(app *testApp, role runtime.Role) *client {
	if role == "" {
		return app.newClient()
	}
	return app.login(role)
}

// call sends method to path, with a valid CSRF token for unsafe methods outside the API (so
// only access decides the answer).
func (c *client) call(method, path string) response {
	c.t.Helper()
	if isSafe(method) || strings.HasPrefix(path, "/api/") {
		return c.request(method, path, nil, nil)
	}
	tokenPage := "/login"
	if c.get("/").status == http.StatusOK {
		tokenPage = "/account/password"
	}
	form := url.Values{"_csrf": {c.csrfFrom(tokenPage)}}
	return c.request(method, path, strings.NewReader(form.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

func checkAccess(t *testing.T, r *echo.Route, a access, role runtime.Role, res response) {
	t.Helper()
	who := string(role)
	if who == "" {
		who = "anonymous"
	}
	what := r.Method + " " + r.Path + " as " + who
	toLogin := res.status == http.StatusSeeOther && strings.HasPrefix(res.header.Get("Location"), "/login")
	switch {
	case r.Method == http.MethodTrace:
		if res.status != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", what, res.status)
		}
	case a == accessAPI:
		if res.status != http.StatusUnauthorized || (r.Method != http.MethodHead && !strings.Contains(res.body, `"error"`)) {
			t.Errorf("%s: %d %.80s, want 401 JSON (a session never authenticates the API)", what, res.status, res.body)
		}
	case mayUse(a, role):
		if (toLogin && !signsOut[r.Method+" "+r.Path]) || res.status == http.StatusUnauthorized || res.status == http.StatusForbidden || res.status >= 500 {
			t.Errorf("%s: %d (Location %q), want access (%s route)", what, res.status, res.header.Get("Location"), a)
		}
	case role == "":
		if !toLogin {
			t.Errorf("%s: %d (Location %q), want 303 to /login", what, res.status, res.header.Get("Location"))
		}
	default:
		if res.status != http.StatusForbidden && res.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 403 or 404 (%s route)", what, res.status, a)
		}
	}
}

func isSafe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions ||
		method == http.MethodTrace
}

// concretePath fills a route pattern's parameters.
func concretePath(pattern string) string {
	p := strings.ReplaceAll(pattern, ":uuid", "0a6e2b58-1234-4abc-9def-000000000000")
	p = strings.ReplaceAll(p, ":file", "app.css")
	return strings.ReplaceAll(p, "*", "x")
}

// TestRoutesAreRegisteredOnlyInRoutesGo keeps routes.go the single place to look. Add and Match
// count as registrations when a path literal follows (time.Time.Add and mfa.Match are not).
func TestRoutesAreRegisteredOnlyInRoutesGo(t *testing.T) {
	t.Parallel()
	register := regexp.MustCompile(`\.(GET|POST|PUT|PATCH|DELETE|Any|Group|RouteNotFound|Static|StaticFS|File)\(|\.(Add|Match)\([^)]*"/`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f == "routes.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := register.FindIndex(src); loc != nil {
			t.Errorf("%s registers a route (%q): register routes in routes.go only", f, src[loc[0]:loc[1]])
		}
	}
}
