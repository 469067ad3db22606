// Package apitest holds the API's traffic in tests to its OpenAPI document (api.OpenAPI): a
// Checker validates every request a test sends below /api/v1 and the response it gets, and a
// mismatch fails the test. Tests only: it is no part of the server.
package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"runsdesk/handlers/api"
)

// Checker validates API traffic against the document, which it reads on first use. It is
// safe for concurrent use.
type Checker struct {
	once  sync.Once
	err   error
	v     validator.Validator
	model *v3.Document
	doc   Document
}

// Document is the part of the OpenAPI document the checks read directly: the servers' base
// path and, per path template and lower-case method, the operation's error codes by status.
type Document struct {
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

// Operation is what the checks read of one operation: its id, its error codes by status and
// its responses by status.
type Operation struct {
	ID         string                     `json:"operationId"`
	ErrorCodes map[string][]string        `json:"x-error-codes"`
	Responses  map[string]json.RawMessage `json:"responses"`
}

// Base is the path prefix of every operation: the document's one server URL (ReadDocument
// checks it).
const Base = "/api/v1"

// Operation returns the operation of method (any case) on path template p, if there is one.
func (d Document) Operation(p, method string) (Operation, bool) {
	raw, ok := d.Paths[p][strings.ToLower(method)]
	if !ok {
		return Operation{}, false
	}
	var op Operation
	return op, json.Unmarshal(raw, &op) == nil
}

// Operations lists every operation as "METHOD /path/{param}", with the base path.
func (d Document) Operations() []string {
	var out []string
	for p, item := range d.Paths {
		for method := range item {
			if slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, method) {
				out = append(out, strings.ToUpper(method)+" "+Base+p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ReadDocument reads the API's document.
func ReadDocument() (Document, error) {
	var d Document
	if err := json.Unmarshal(api.OpenAPI(), &d); err != nil {
		return d, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	if len(d.Servers) != 1 || d.Servers[0].URL != Base {
		return d, fmt.Errorf("the OpenAPI document's servers are %+v, want the one %s", d.Servers, Base)
	}
	return d, nil
}

// New returns a Checker of the API's document; the document is read and compiled on the
// Checker's first check, so a test that never calls the API pays nothing.
func New() *Checker { return &Checker{} }

// load reads and compiles the document, once.
func (c *Checker) load() error {
	c.once.Do(func() {
		if c.doc, c.err = ReadDocument(); c.err != nil {
			return
		}
		doc, err := libopenapi.NewDocument(api.OpenAPI())
		if err != nil {
			c.err = fmt.Errorf("parse the OpenAPI document: %w", err)
			return
		}
		m, err := doc.BuildV3Model()
		if err != nil {
			c.err = fmt.Errorf("build the OpenAPI model: %w", err)
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			c.err = fmt.Errorf("build the OpenAPI validator: %v", errs)
			return
		}
		c.v, c.model = v, &m.Model
	})
	return c.err
}

// ValidateDocument checks the document against the OpenAPI 3.1 specification's schema.
func (c *Checker) ValidateDocument() error {
	if err := c.load(); err != nil {
		return err
	}
	if ok, errs := c.v.ValidateDocument(); !ok {
		return fmt.Errorf("the OpenAPI document is not valid: %s", describe(errs))
	}
	return nil
}

// Transport returns base (http.DefaultTransport when nil) with every exchange below the
// document's base path checked; a mismatch fails t (Check).
func (c *Checker) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{c: c, t: t, base: base}
}

type roundTripper struct {
	c    *Checker
	t    testing.TB
	base http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.Path, Base+"/") {
		return rt.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("apitest: read the request body: %w", err)
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := rt.base.RoundTrip(req)
	if err != nil {
		return res, err
	}
	if isStream(res) {
		if err := rt.c.Check(req, body, res, nil); err != nil {
			rt.t.Errorf("%v", err)
		}
		return res, nil
	}
	resBody, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(resBody))
	if err != nil {
		return res, nil
	}
	if err := rt.c.Check(req, body, res, resBody); err != nil {
		rt.t.Errorf("%v", err)
	}
	return res, nil
}

// isStream reports whether res is a Server-Sent Events stream, whose status and headers alone
// are checked.
func isStream(res *http.Response) bool {
	return strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream")
}

// Check validates one exchange: req (with body) and res (with resBody; nil for a stream). A
// request the document refuses must be refused (4xx, or 503 when the server is busy); a
// response must be one the operation documents (status, headers, body), and an error's code
// one the operation lists for its status (x-error-codes). A path the document lacks must be
// 404 not_found, a method it lacks on a path 405 method_not_allowed (or either refused before
// routing: beforeRouting).
func (c *Checker) Check(req *http.Request, body []byte, res *http.Response, resBody []byte) error {
	if err := c.load(); err != nil {
		return err
	}
	what := req.Method + " " + req.URL.RequestURI()
	item, _, template := paths.FindPath(clone(req, body), c.model, nil)
	if item == nil {
		return wantError(what, res, resBody, http.StatusNotFound, "not_found", "the document has no path")
	}
	op, ok := c.doc.Operation(template, req.Method)
	if !ok {
		return wantError(what, res, resBody, http.StatusMethodNotAllowed, "method_not_allowed", "the document has no "+req.Method+" on "+template)
	}
	if ok, errs := c.v.ValidateHttpRequestSync(clone(req, body)); !ok && !refused(res.StatusCode) {
		return fmt.Errorf("%s: the server answered %d to a request the OpenAPI document refuses: %s", what, res.StatusCode, describe(errs))
	}
	validated := *res
	validated.Body = http.NoBody
	if resBody != nil {
		validated.Body = io.NopCloser(bytes.NewReader(resBody))
	}
	if ok, errs := c.v.ValidateHttpResponse(clone(req, body), &validated); !ok {
		return fmt.Errorf("%s: response %d does not match operation %s of the OpenAPI document: %s; body %.300s", what, res.StatusCode, op.ID, describe(errs), resBody)
	}
	if res.StatusCode < 400 {
		return nil
	}
	code, err := errorCode(resBody)
	if err != nil {
		return fmt.Errorf("%s: %d: %w", what, res.StatusCode, err)
	}
	if !slices.Contains(op.ErrorCodes[strconv.Itoa(res.StatusCode)], code) {
		return fmt.Errorf("%s: operation %s answered %d %s, which its x-error-codes do not list for %d", what, op.ID, res.StatusCode, code, res.StatusCode)
	}
	return nil
}

// beforeRouting is the codes of status with which every path below the base, documented or
// not, may be refused: authentication and its rate limits come before the router's 404 and
// 405.
func beforeRouting(status int) []string {
	switch status {
	case http.StatusUnauthorized:
		return []string{"unauthorized", "invalid_token", "token_expired"}
	case http.StatusTooManyRequests:
		return []string{"rate_limited"}
	case http.StatusServiceUnavailable:
		return []string{"unavailable"}
	}
	return nil
}

// refused reports whether status refuses a request: a 4xx, or a 503 of a server too busy to
// look at it.
func refused(status int) bool {
	return status >= 400 && status < 500 || status == http.StatusServiceUnavailable
}

// wantError checks that an exchange the document has no operation for was refused with
// status and code in the API's error shape, or before routing (beforeRouting); a HEAD request's
// answer, which has no body, by its status.
func wantError(what string, res *http.Response, body []byte, status int, code, why string) error {
	if res.Request != nil && res.Request.Method == http.MethodHead {
		if beforeRouting(res.StatusCode) != nil || res.StatusCode == status {
			return nil
		}
		return fmt.Errorf("%s: %s, so it must be %d; it answered %d", what, why, status, res.StatusCode)
	}
	got, err := errorCode(body)
	if err == nil && slices.Contains(beforeRouting(res.StatusCode), got) {
		return nil
	}
	if res.StatusCode != status || err != nil || got != code {
		return fmt.Errorf("%s: %s, so it must be %d %s; it answered %d %.200s", what, why, status, code, res.StatusCode, body)
	}
	return nil
}

// errorCode is the code of an error body {"error":{"code","message"}}.
func errorCode(body []byte) (string, error) {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		return "", fmt.Errorf("the error body %.200q is not {\"error\":{\"code\",\"message\"}}", body)
	}
	return e.Error.Code, nil
}

// clone is req with a fresh reader over body, for one validation.
func clone(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = http.NoBody
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r
}

func describe(errs []*errors.ValidationError) string {
	var parts []string
	for _, e := range errs {
		s := e.Message
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
		for _, f := range e.SchemaValidationErrors {
			s += "; " + f.Error()
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}
