package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// withGatedRoutes adds test routes to the role-gated groups, which phase 1 does not use yet.
func withGatedRoutes(h *Handlers, e *echo.Echo) {
	g := h.groups(e)
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok "+string(h.actor(c).Role)) }
	g.deciders.GET("/test/deciders/:uuid", ok)
	g.deciders.POST("/test/deciders/:uuid", ok)
	g.admins.GET("/test/admins", ok)
}

func TestRoleGates(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{extra: withGatedRoutes})
	const run = "0a6e2b58-1234-4abc-9def-000000000000"
	clients := map[runtime.Role]*client{}
	for role := range testUsers {
		clients[role] = app.login(role)
	}
	for _, tc := range []struct {
		role   runtime.Role
		method string
		path   string
		status int
	}{
		{runtime.RoleAdmin, "GET", "/test/deciders/" + run, 200},
		{runtime.RoleReviewer, "GET", "/test/deciders/" + run, 200},
		{runtime.RoleSupport, "GET", "/test/deciders/" + run, 403},
		{runtime.RoleAdmin, "POST", "/test/deciders/" + run, 200},
		{runtime.RoleReviewer, "POST", "/test/deciders/" + run, 200},
		{runtime.RoleSupport, "POST", "/test/deciders/" + run, 403},
		{runtime.RoleAdmin, "GET", "/test/admins", 200},
		{runtime.RoleReviewer, "GET", "/test/admins", 403},
		{runtime.RoleSupport, "GET", "/test/admins", 403},
	} {
		c := clients[tc.role]
		var res response
		if tc.method == "POST" {
			res = c.postForm(tc.path, url.Values{"_csrf": {c.token()}})
		} else {
			res = c.get(tc.path)
		}
		if res.status != tc.status {
			t.Errorf("%s %s as %s: %d, want %d", tc.method, tc.path, tc.role, res.status, tc.status)
		}
		if tc.status == http.StatusOK && res.body != "ok "+string(tc.role) {
			t.Errorf("%s %s as %s: handler saw %q", tc.method, tc.path, tc.role, res.body)
		}
	}
	wantRedirectToLogin(t, "anonymous on a gated route", app.newClient().get("/test/admins"))

	rows, err := app.audit.RecentAudit(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	denials := 0
	for _, r := range rows {
		if r.Action == actionAccessDenied {
			denials++
			if r.ActorUID == 0 || r.IP == "" || !strings.Contains(r.Reason, "may not") {
				t.Errorf("denial row %+v: want actor, address and reason", r)
			}
			if strings.Contains(r.Reason, "/test/deciders") && r.RunUUID != run {
				t.Errorf("denial row %+v: want the run uuid", r)
			}
		}
	}
	if denials != 4 {
		t.Errorf("audit has %d access denials, want 4", denials)
	}
}
