package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"runsdesk/handlers/api"
)

// TestBodyRefusals: malformed JSON, unknown fields, wrong types, trailing data and non-objects
// are 400; a body over the limit is 413; a non-JSON content type is 415. Nothing changes and
// no submitted value is echoed or logged.
func TestBodyRefusals(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	approvalPath := "/api/v1/runs/" + id + "/approval"
	secret := "s3cr3t-value-\u2603"
	cases := []struct {
		name, path, body, contentType string
		status                        int
		code                          string
	}{
		{"malformed", approvalPath, `{"approved":tru`, "", 400, "invalid_request"},
		{"not json", approvalPath, secret, "", 400, "invalid_request"},
		{"unknown field", approvalPath, `{"approved":true,"turn_digest":"x","decided_by":"` + secret + `"}`, "", 400, "invalid_request"},
		{"mass assignment", "/api/v1/runs", `{"configuration":"plain","prompt":"hi","status":"completed"}`, "", 400, "invalid_request"},
		{"wrong type", approvalPath, `{"approved":"` + secret + `","turn_digest":"x"}`, "", 400, "invalid_request"},
		{"missing approved", approvalPath, `{"turn_digest":"x"}`, "", 400, "invalid_request"},
		{"trailing data", approvalPath, `{"approved":true,"turn_digest":"x"} {"approved":false}`, "", 400, "invalid_request"},
		{"array", approvalPath, `[{"approved":true}]`, "", 400, "invalid_request"},
		{"null", approvalPath, `null`, "", 400, "invalid_request"},
		{"empty", approvalPath, "", "application/json", 400, "invalid_request"},
		{"too large", "/api/v1/runs", `{"configuration":"plain","prompt":"` + strings.Repeat("a", 70<<10) + `"}`, "", 413, "body_too_large"},
		{"text/plain", approvalPath, `{"approved":true,"turn_digest":"x"}`, "text/plain", 415, "unsupported_media_type"},
		{"form", approvalPath, `approved=true`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"no content type", approvalPath, `{"approved":true,"turn_digest":"x"}`, "-", 415, "unsupported_media_type"},
		{"cancel with text", "/api/v1/runs/" + id + "/cancel", "please", "text/plain", 415, "unsupported_media_type"},
		{"cancel with fields", "/api/v1/runs/" + id + "/cancel", `{"reason":"` + secret + `"}`, "", 400, "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w.t = t
			before := w.snapshot(id)
			res := w.do(request{method: http.MethodPost, path: c.path, token: w.tokens["all"], body: c.body, contentType: c.contentType})
			wantError(t, res, c.status, c.code)
			if strings.Contains(string(res.body), secret) {
				t.Errorf("submitted data echoed: %s", res.body)
			}
			w.unchanged(before, id)
		})
	}
	if strings.Contains(w.logs.String(), secret) {
		t.Error("a submitted value reached the logs")
	}
}

// TestBodyLimitConfigurable: MaxBodyBytes applies, by Content-Length or by reading.
func TestBodyLimitConfigurable(t *testing.T) {
	w := newWorld(t, func(c *api.Config) { c.MaxBodyBytes = 40 })
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["all"], body: `{"configuration":"plain","prompt":"0123456789"}`})
	wantError(t, res, http.StatusRequestEntityTooLarge, "body_too_large")
	if res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["all"], body: `{"configuration":"plain","prompt":"x"}`}); res.code != http.StatusCreated {
		t.Fatalf("small body: %d %s", res.code, res.body)
	}
}

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// TestRateLimit: each token has its own budget; an exhausted one is 429 with Retry-After and
// changes nothing; the budget refills with time.
func TestRateLimit(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	w := newWorld(t, func(c *api.Config) {
		c.Rate, c.Burst, c.Now = rate.Every(time.Minute), 2, clock.Now
	})
	id := w.runIn("approve")
	get := request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}
	for i := range 2 {
		if res := w.do(get); res.code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, res.code, res.body)
		}
	}
	res := w.do(get)
	wantError(t, res, http.StatusTooManyRequests, "rate_limited")
	if res.header.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After %q", res.header.Get("Retry-After"))
	}
	others := []string{w.runIn("approve"), w.runIn("approve")}
	before := w.snapshot(id)
	for _, o := range others {
		other := request{method: http.MethodPost, path: "/api/v1/runs/" + o + "/cancel", token: w.tokens["cancel"]}
		if res := w.do(other); res.code != http.StatusOK {
			t.Fatalf("cancel within budget: %d %s", res.code, res.body)
		}
	}
	cancel := request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/cancel", token: w.tokens["cancel"]}
	wantError(t, w.do(cancel), http.StatusTooManyRequests, "rate_limited")
	w.unchanged(before, id)
	if res := w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["all"]}); res.code != http.StatusOK {
		t.Fatalf("another token was limited: %d", res.code)
	}
	clock.now = clock.now.Add(30 * time.Second)
	if res := w.do(get); res.code != http.StatusTooManyRequests || res.header.Get("Retry-After") != "30" {
		t.Fatalf("after 30 s: %d Retry-After %q", res.code, res.header.Get("Retry-After"))
	}
	clock.now = clock.now.Add(30 * time.Second)
	if res := w.do(get); res.code != http.StatusOK {
		t.Fatalf("after refill: %d %s", res.code, res.body)
	}
}
