package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/api"
	"runsdesk/handlers/api/apitest"
	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
)

// TestOpenAPIDocumentIsValid: the served document is a valid OpenAPI 3.1 document.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	if err := apitest.New().ValidateDocument(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenAPIEveryRouteHasAnOperation: every route Register mounts (the catch-all 405 and 404
// routes aside) has an operation in the document, and every operation a route.
func TestOpenAPIEveryRouteHasAnOperation(t *testing.T) {
	e := echo.New()
	api.New(api.Config{}).Register(e.Group("/api/v1"))
	param := regexp.MustCompile(`:([a-z_]+)`)
	var routes []string
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, "/api/v1/") || r.Method == echo.RouteNotFound || strings.Contains(r.Name, "methodNotAllowed") {
			continue
		}
		routes = append(routes, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	doc, err := apitest.ReadDocument()
	if err != nil {
		t.Fatal(err)
	}
	operations := doc.Operations()
	for _, r := range routes {
		if !slices.Contains(operations, r) {
			t.Errorf("route %s has no operation in handlers/api/openapi.json", r)
		}
	}
	for _, op := range operations {
		if !slices.Contains(routes, op) {
			t.Errorf("operation %s of handlers/api/openapi.json has no route", op)
		}
	}
	if len(routes) < 12 {
		t.Fatalf("only %d API routes found: %v", len(routes), routes)
	}
}

// TestOpenAPIServedWithoutToken: GET /api/v1/openapi.json answers the embedded document to
// anyone, token or not, revalidated by its ETag; it is the only path below /api/v1 that
// needs no token, and other methods on it are 405 in the API's error shape.
func TestOpenAPIServedWithoutToken(t *testing.T) {
	w := newWorld(t)
	for _, token := range []string{"", "not-a-token", w.tokens["read"]} {
		res := w.do(request{method: http.MethodGet, path: "/api/v1/openapi.json", token: token})
		if res.code != http.StatusOK || !bytes.Equal(res.body, api.OpenAPI()) {
			t.Fatalf("token %q: %d, body of %d bytes, want 200 with the document", token, res.code, len(res.body))
		}
		if ct := res.header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if res.header.Get("WWW-Authenticate") != "" {
			t.Fatalf("the public document was answered with a challenge")
		}
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, %v; want 3.1.0", doc.OpenAPI, err)
	}

	first := w.do(request{method: http.MethodGet, path: "/api/v1/openapi.json"})
	etag := first.header.Get("ETag")
	if etag == "" || first.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q; want an ETag and no-cache", etag, first.header.Get("Cache-Control"))
	}
	again := w.do(request{method: http.MethodGet, path: "/api/v1/openapi.json", extra: []string{"If-None-Match", `"other", ` + etag}})
	if again.code != http.StatusNotModified || len(again.body) != 0 || again.header.Get("ETag") != etag {
		t.Fatalf("If-None-Match with the ETag: %d, %d bytes, ETag %q; want 304 without a body", again.code, len(again.body), again.header.Get("ETag"))
	}
	if stale := w.do(request{method: http.MethodGet, path: "/api/v1/openapi.json", extra: []string{"If-None-Match", `"other"`}}); stale.code != http.StatusOK {
		t.Fatalf("If-None-Match with another ETag: %d, want 200", stale.code)
	}

	res := w.do(request{method: http.MethodPost, path: "/api/v1/openapi.json", body: `{}`})
	wantError(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
	if res.header.Get("Allow") != http.MethodGet {
		t.Fatalf("Allow %q, want GET", res.header.Get("Allow"))
	}
	for _, path := range []string{"/api/v1/openapi.yaml", "/api/v1/openapi.json/x", "/api/v1/runs"} {
		wantError(t, w.do(request{method: http.MethodGet, path: path}), http.StatusUnauthorized, "unauthorized")
	}
}

// TestOpenAPIRateLimitsAreTheDefaults: the rate limits the document states are Config's
// defaults.
func TestOpenAPIRateLimitsAreTheDefaults(t *testing.T) {
	var doc struct {
		Limits struct {
			PerToken struct {
				Rate  float64 `json:"requests_per_second"`
				Burst int     `json:"burst"`
			} `json:"per_token"`
			Failures struct {
				Burst  int     `json:"burst"`
				Refill float64 `json:"refill_seconds"`
			} `json:"failed_authentication_per_address"`
		} `json:"x-rate-limits"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	l := doc.Limits
	if l.PerToken.Rate != float64(api.DefaultRate) || l.PerToken.Burst != api.DefaultBurst ||
		l.Failures.Burst != api.DefaultAuthFailureBurst || l.Failures.Refill != 1/float64(api.DefaultAuthFailureRate) {
		t.Fatalf("x-rate-limits %+v, want per token %v/s burst %d, failures burst %d refill %vs", l,
			float64(api.DefaultRate), api.DefaultBurst, api.DefaultAuthFailureBurst, 1/float64(api.DefaultAuthFailureRate))
	}
}

// TestOpenAPIErrorCodesAreTheCatalogue: the document's ErrorCode lists every code of the
// refusal table; every code an operation lists (x-error-codes) is in ErrorCode, under a status
// the operation documents, and a runtime code under the status its refusal row answers.
func TestOpenAPIErrorCodesAreTheCatalogue(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				ErrorCode struct {
					Enum []string `json:"enum"`
				} `json:"ErrorCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	catalogue := doc.Components.Schemas.ErrorCode.Enum
	for _, code := range refusal.Codes() {
		if !slices.Contains(catalogue, string(code)) {
			t.Errorf("refusal code %s is not in the document's ErrorCode", code)
		}
	}
	d, err := apitest.ReadDocument()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range d.Operations() {
		method, path, _ := strings.Cut(name, " ")
		op, _ := d.Operation(strings.TrimPrefix(path, apitest.Base), method)
		for status, codes := range op.ErrorCodes {
			if _, ok := op.Responses[status]; !ok {
				t.Errorf("%s lists codes for status %s, which it does not document", name, status)
			}
			for _, code := range codes {
				if !slices.Contains(catalogue, code) {
					t.Errorf("%s lists code %s, which is not in ErrorCode", name, code)
				}
				if row, ok := refusal.Of(runtime.Code(code)); ok && strconv.Itoa(row.Status) != status {
					t.Errorf("%s lists %s under %s; the refusal table answers it %d", name, code, status, row.Status)
				}
			}
		}
		for status := range op.Responses {
			if n, _ := strconv.Atoi(status); n >= 400 && len(op.ErrorCodes[status]) == 0 {
				t.Errorf("%s documents status %s without its codes in x-error-codes", name, status)
			}
		}
	}
}
