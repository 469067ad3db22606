package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"runsdesk/handlers/api"
)

// route is one API route with a request that succeeds given its scope.
type route struct {
	name   string
	scope  string
	ok     int
	create bool
	req    func(w *world, uuid string) request
}

var routes = []route{
	{name: "create", scope: "run", ok: http.StatusCreated, create: true, req: func(w *world, _ string) request {
		return request{method: http.MethodPost, path: "/api/v1/runs", body: `{"configuration":"plain","prompt":"hi"}`}
	}},
	{name: "get", scope: "read", ok: http.StatusOK, req: func(w *world, uuid string) request {
		return request{method: http.MethodGet, path: "/api/v1/runs/" + uuid}
	}},
	{name: "events", scope: "read", ok: http.StatusOK, req: func(w *world, uuid string) request {
		return request{method: http.MethodGet, path: "/api/v1/runs/" + uuid + "/events?after=-1"}
	}},
	{name: "calls", scope: "read", ok: http.StatusOK, req: func(w *world, uuid string) request {
		return request{method: http.MethodGet, path: "/api/v1/runs/" + uuid + "/calls"}
	}},
	{name: "approval", scope: "approve", ok: http.StatusAccepted, req: func(w *world, uuid string) request {
		return request{method: http.MethodPost, path: "/api/v1/runs/" + uuid + "/approval", body: approval(true, w.digest(uuid))}
	}},
	{name: "cancel", scope: "cancel", ok: http.StatusOK, req: func(w *world, uuid string) request {
		return request{method: http.MethodPost, path: "/api/v1/runs/" + uuid + "/cancel"}
	}},
}

// TestScopeMatrix: every route × every token (one scope each, none, and read plus the
// route's scope): a token without the route's scope is 403 insufficient_scope and changes
// nothing; a token with it succeeds, even without read (an approve-only or cancel-only token
// may act on a run it cannot read).
func TestScopeMatrix(t *testing.T) {
	w := newWorld(t)
	w.tokens["read+approve"] = w.createToken("ci-read-approve", "read", "approve")
	w.tokens["read+cancel"] = w.createToken("ci-read-cancel", "read", "cancel")
	for _, rt := range routes {
		for _, scope := range []string{"run", "read", "approve", "cancel", "none", "read+approve", "read+cancel"} {
			t.Run(rt.name+"/"+scope, func(t *testing.T) {
				w.t = t
				uuid := w.runIn("approve")
				req := rt.req(w, uuid)
				req.token = w.tokens[scope]
				before := w.snapshot(uuid)
				res := w.do(req)
				switch {
				case scope == rt.scope || scope == "read+"+rt.scope || (rt.scope == "read" && strings.HasPrefix(scope, "read")):
					if res.code != rt.ok {
						t.Fatalf("status %d, want %d: %s", res.code, rt.ok, res.body)
					}
				default:
					wantError(t, res, http.StatusForbidden, "insufficient_scope")
					if !strings.Contains(res.header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
						t.Errorf("WWW-Authenticate %q", res.header.Get("WWW-Authenticate"))
					}
					w.unchanged(before, uuid)
				}
			})
		}
	}
}

// TestBadCredentials: no token, a wrong one, a disabled one, an expired one (token_expired),
// another scheme, two headers or a
// token in the query string: 401 with WWW-Authenticate: Bearer on every route, nothing
// changes, and the presented token appears in no response and no log line.
func TestBadCredentials(t *testing.T) {
	w := newWorld(t)
	wrong := "rdsk_thisIsNotAValidTokenButLooksLikeOne0000000"
	cases := []struct {
		name      string
		mutate    func(r *request)
		code      string
		challenge string
	}{
		{"missing", func(r *request) {}, "unauthorized", `Bearer realm="runsdesk"`},
		{"wrong", func(r *request) { r.token = wrong }, "invalid_token", `error="invalid_token"`},
		{"disabled", func(r *request) { r.token = w.tokens["disabled"] }, "invalid_token", `error="invalid_token"`},
		{"expired", func(r *request) { r.token = w.tokens["expired"] }, "token_expired", `error_description="the token expired"`},
		{"basic scheme", func(r *request) { r.extra = append(r.extra, "Authorization", "Basic "+w.tokens["all"]) }, "invalid_token", `error="invalid_token"`},
		{"two headers", func(r *request) {
			r.extra = append(r.extra, "Authorization", "Bearer "+w.tokens["all"], "Authorization", "Bearer "+w.tokens["all"])
		}, "invalid_token", `error="invalid_token"`},
		{"query string", func(r *request) { r.path += "?access_token=" + w.tokens["all"] }, "unauthorized", `Bearer realm="runsdesk"`},
	}
	for _, rt := range routes {
		for _, c := range cases {
			t.Run(rt.name+"/"+c.name, func(t *testing.T) {
				w.t = t
				uuid := w.runIn("approve")
				req := rt.req(w, uuid)
				c.mutate(&req)
				before := w.snapshot(uuid)
				res := w.do(req)
				wantError(t, res, http.StatusUnauthorized, c.code)
				if got := res.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer ") || !strings.Contains(got, c.challenge) {
					t.Errorf("WWW-Authenticate %q, want it to contain %q", got, c.challenge)
				}
				if strings.Contains(string(res.body), wrong) || strings.Contains(string(res.body), w.tokens["disabled"]) {
					t.Errorf("token echoed: %s", res.body)
				}
				w.unchanged(before, uuid)
			})
		}
	}
	for name, tok := range w.tokens {
		if strings.Contains(w.logs.String(), tok) {
			t.Errorf("token %s appears in the logs", name)
		}
	}
	if strings.Contains(w.logs.String(), wrong) {
		t.Error("the wrong token appears in the logs")
	}
}

// TestFailedAuthenticationIsRateLimited: an address that keeps presenting bad credentials gets
// 429 with Retry-After, then even for a valid token (so guessing learns nothing), until its
// budget refills; valid requests do not use the budget.
func TestFailedAuthenticationIsRateLimited(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	w := newWorld(t, func(c *api.Config) {
		c.AuthFailureRate, c.AuthFailureBurst, c.Now = rate.Every(time.Minute), 3, clock.Now
	})
	id := w.runIn("approve")
	good := request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}
	bad := request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: "rdsk_guess"}
	for i := range 5 {
		if res := w.do(good); res.code != http.StatusOK {
			t.Fatalf("valid request %d: %d %s", i, res.code, res.body)
		}
	}
	for range 3 {
		wantError(t, w.do(bad), http.StatusUnauthorized, "invalid_token")
	}
	res := w.do(bad)
	wantError(t, res, http.StatusTooManyRequests, "rate_limited")
	if ra := res.header.Get("Retry-After"); ra != "60" {
		t.Errorf("Retry-After %q, want 60", ra)
	}
	wantError(t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id}), http.StatusTooManyRequests, "rate_limited")
	wantError(t, w.do(good), http.StatusTooManyRequests, "rate_limited")
	clock.now = clock.now.Add(time.Minute)
	if res := w.do(good); res.code != http.StatusOK {
		t.Fatalf("after a minute: %d %s, want the valid token accepted", res.code, res.body)
	}
	wantError(t, w.do(bad), http.StatusUnauthorized, "invalid_token")
	wantError(t, w.do(bad), http.StatusTooManyRequests, "rate_limited")
}
