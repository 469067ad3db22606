package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/db"
)

// TestTrustedProxies signs in through a load balancer: from a trusted peer (the test server's
// 127.0.0.1) the client is X-Forwarded-For's rightmost untrusted address, for the throttle,
// the audit trail and the access log; from an untrusted peer the header is ignored.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	limits := db.LoginLimits{AccountFailures: 100, IPFailures: 3}
	fail := func(c *client, token, xff string) response {
		t.Helper()
		return c.postForm("/login", url.Values{"username": {"nobody"}, "password": {"not the right password"}, "_csrf": {token}},
			"X-Forwarded-For", xff)
	}

	t.Run("trusted peer", func(t *testing.T) {
		app := newTestApp(t, appOptions{limits: limits, trustedProxies: "10.0.0.0/8, 127.0.0.1"})
		c := app.newClient()
		token := c.csrfFrom("/login")
		for i := range 3 {
			if res := fail(c, token, "203.0.113.5"); res.status != http.StatusUnprocessableEntity {
				t.Fatalf("failure %d of 203.0.113.5: %d, want 422", i+1, res.status)
			}
		}
		if res := fail(c, token, "203.0.113.5"); res.status != http.StatusTooManyRequests {
			t.Errorf("4th attempt of 203.0.113.5: %d, want 429", res.status)
		}
		if res := fail(c, token, "198.51.100.1, 203.0.113.5"); res.status != http.StatusTooManyRequests {
			t.Errorf("203.0.113.5 prepending a forged address: %d, want 429 (the rightmost untrusted address counts)", res.status)
		}
		if res := fail(c, token, "203.0.113.5, 10.1.2.3"); res.status != http.StatusTooManyRequests {
			t.Errorf("203.0.113.5 through a second trusted proxy: %d, want 429", res.status)
		}
		if res := fail(c, token, "203.0.113.6"); res.status != http.StatusUnprocessableEntity {
			t.Errorf("another client behind the same proxy: %d, want 422 (its own allowance)", res.status)
		}
		wantAuditIPs(t, app, "203.0.113.5", "203.0.113.6")
		if logs := app.logs.String(); !strings.Contains(logs, `"ip":"203.0.113.6"`) {
			t.Error("the access log does not name the forwarded client address")
		}
	})

	t.Run("untrusted peer", func(t *testing.T) {
		app := newTestApp(t, appOptions{limits: limits, trustedProxies: "10.0.0.0/8"})
		c := app.newClient()
		token := c.csrfFrom("/login")
		for i := range 3 {
			if res := fail(c, token, "203.0.113."+string(rune('1'+i))); res.status != http.StatusUnprocessableEntity {
				t.Fatalf("failure %d: %d, want 422", i+1, res.status)
			}
		}
		if res := fail(c, token, "203.0.113.9"); res.status != http.StatusTooManyRequests {
			t.Errorf("a made-up X-Forwarded-For from an untrusted peer: %d, want 429 (the peer's allowance is used up)", res.status)
		}
		wantAuditIPs(t, app, "127.0.0.1")
	})
}

// wantAuditIPs checks that the audit trail names exactly the client addresses want.
func wantAuditIPs(t *testing.T, app *testApp, want ...string) {
	t.Helper()
	rows, err := app.audit.RecentAudit(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.IP] = true
	}
	for _, ip := range want {
		if !seen[ip] {
			t.Errorf("audit addresses %v: want %s among them", seen, ip)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("audit addresses %v, want exactly %v", seen, want)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := ParseTrustedProxies(" 10.0.0.0/8,192.0.2.7 , 2001:db8::/32,::1,")
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, n := range got {
		s = append(s, n.String())
	}
	if want := "10.0.0.0/8 192.0.2.7/32 2001:db8::/32 ::1/128"; strings.Join(s, " ") != want {
		t.Errorf("parsed %v, want %s", s, want)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.0/8;x"} {
		if _, err := ParseTrustedProxies(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseTrustedProxies(%q) = %v, want an error naming it", bad, err)
		}
	}
}

// TestAPIAuthFailuresAreLimitedPerClient: behind a trusted proxy, the API's budget of failed
// authentications is per forwarded client address, not one for everyone behind the proxy.
func TestAPIAuthFailuresAreLimitedPerClient(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{trustedProxies: "127.0.0.1", apiAuthFailures: 2})
	c := app.newClient()
	guess := func(client string) response {
		t.Helper()
		return c.request(http.MethodGet, "/api/v1/runs/x", nil, http.Header{"Authorization": {"Bearer rdsk_guess"}, "X-Forwarded-For": {client}})
	}
	for range 2 {
		if res := guess("203.0.113.5"); res.status != http.StatusUnauthorized {
			t.Fatalf("guess of 203.0.113.5: %d, want 401", res.status)
		}
	}
	if res := guess("203.0.113.5"); res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") == "" {
		t.Errorf("3rd guess of 203.0.113.5: %d Retry-After %q, want 429 with Retry-After", res.status, res.header.Get("Retry-After"))
	}
	if res := guess("203.0.113.6"); res.status != http.StatusUnauthorized {
		t.Errorf("another client behind the proxy: %d, want 401 (its own budget)", res.status)
	}
}
