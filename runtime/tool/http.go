package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// maxRedirects is how many redirects an HTTP tool follows before giving up.
const maxRedirects = 10

// httpTool is a tool whose Execute POSTs the call to an HTTP endpoint.
type httpTool struct {
	defined
	client  *http.Client
	getenv  func(string) string
	timeout time.Duration
	limit   int64
}

// inputHTTPTool is an httpTool that declares an input schema, so it implements InputRequirer
// only when the definition sets one.
type inputHTTPTool struct{ *httpTool }

// InputSchema returns the definition's input schema.
func (t inputHTTPTool) InputSchema() json.RawMessage { return slices.Clone(t.def.InputSchema) }

// httpCallBody is the JSON an HTTP tool endpoint receives.
type httpCallBody struct {
	Run       string          `json:"run"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// NewHTTP builds the tool def describes, refusing (with every *Problem Check finds, joined) a
// definition that breaks a rule. The tool implements Tool, ApprovalRequirer, EffectDeclarer and
// AdminOnlyTool, and InputRequirer only when def sets an input schema.
//
// Execute POSTs {"run", "call_id", "tool", "arguments"} as application/json to the URL, with the
// definition's headers, each ${NAME} expanded through getenv at call time (os.Getenv when nil).
// It never returns an error: an unset variable (named, its value never shown), a timeout, a
// transport failure, a non-2xx answer, a body over the response limit, or a redirect to a
// scheme other than http(s) all become a Result with IsError set. A 2xx JSON object with a
// string "content" yields that content; any other 2xx body is returned as plain text. On a
// redirect to another host the definition's headers are not forwarded. client may be nil; the
// tool uses a copy of it whose redirect policy it extends. A declared definition (Declared)
// builds a tool whose Execute answers a tool error: nothing runs it.
func NewHTTP(def Definition, client *http.Client, getenv func(string) string) (Tool, error) {
	if errs := Check(def); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	def.Parameters = slices.Clone(def.Parameters)
	def.InputSchema = slices.Clone(def.InputSchema)
	def.HTTP.Headers = maps.Clone(def.HTTP.Headers)
	t := &httpTool{
		defined: defined{def},
		client:  redirectSafeClient(client, sortedKeys(def.HTTP.Headers)),
		getenv:  getenv,
		timeout: def.HTTP.Timeout,
		limit:   def.HTTP.MaxResponseBytes,
	}
	if t.timeout == 0 {
		t.timeout = DefaultTimeout
	}
	if t.limit == 0 {
		t.limit = DefaultMaxResponseBytes
	}
	if !emptyJSON(def.InputSchema) {
		return inputHTTPTool{t}, nil
	}
	return t, nil
}

// redirectSafeClient returns a copy of client (a fresh client when nil) that refuses redirects
// to schemes other than http(s), stops after maxRedirects, and drops the named headers when a
// redirect leaves the original host, before applying client's own policy.
func redirectSafeClient(client *http.Client, headers []string) *http.Client {
	c := &http.Client{}
	if client != nil {
		*c = *client
	}
	prev := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if s := req.URL.Scheme; s != "http" && s != "https" {
			return fmt.Errorf("redirect to a %q URL refused", truncate(s, 20))
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Host != via[0].URL.Host {
			for _, h := range headers {
				req.Header.Del(h)
			}
		}
		if prev != nil {
			return prev(req, via)
		}
		return nil
	}
	return c
}

// Name returns the definition's name.
// Effect returns the definition's effect, EffectReadOnly when it declares none.
func (t *httpTool) Effect() Effect {
	if t.def.Effect == "" {
		return EffectReadOnly
	}
	return t.def.Effect
}

// Execute POSTs the call to the endpoint (a declared tool's refuses); see NewHTTP. The
// returned error is always nil.
func (t *httpTool) Execute(ctx context.Context, call Call) (Result, error) {
	if t.def.Declared() {
		return t.fail("this tool only declares what may be asked; nothing runs it"), nil
	}
	args := call.Arguments
	if emptyJSON(args) {
		args = json.RawMessage("{}")
	}
	if !isJSONObject(args) {
		return t.fail("arguments are not a JSON object"), nil
	}
	body, err := json.Marshal(httpCallBody{Run: call.RunUUID, CallID: call.CallID, Tool: t.def.Name, Arguments: args})
	if err != nil {
		return t.fail("arguments could not be encoded"), nil
	}
	reqCtx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.def.HTTP.URL, bytes.NewReader(body))
	if err != nil {
		return t.fail("request could not be built"), nil
	}
	for _, name := range sortedKeys(t.def.HTTP.Headers) {
		value, missing, err := expandRefs(t.def.HTTP.Headers[name], t.getenv)
		switch {
		case err != nil:
			return t.fail(fmt.Sprintf("header %s: %v", name, err)), nil
		case missing != "":
			return t.fail(fmt.Sprintf("environment variable %s is not set", missing)), nil
		case hasControl(value):
			return t.fail(fmt.Sprintf("header %s: an environment variable it references holds a control character", name)), nil
		}
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.5")

	resp, err := t.client.Do(req)
	if err != nil {
		return t.fail(t.transportMessage(ctx, reqCtx, err)), nil
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return t.fail(fmt.Sprintf("endpoint answered HTTP %d", resp.StatusCode)), nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, t.limit+1))
	if err != nil {
		return t.fail(t.transportMessage(ctx, reqCtx, err)), nil
	}
	if int64(len(data)) > t.limit {
		return t.fail(fmt.Sprintf("response larger than %d bytes", t.limit)), nil
	}
	return Result{Content: responseContent(data)}, nil
}

// fail is the tool error the model sees.
func (t *httpTool) fail(msg string) Result {
	return Result{IsError: true, Content: fmt.Sprintf("tool %s: %s", t.def.Name, msg)}
}

// transportMessage describes a failed exchange without the URL (which may carry a query
// secret) or any header.
func (t *httpTool) transportMessage(parent, reqCtx context.Context, err error) string {
	switch {
	case parent.Err() != nil:
		return "call cancelled before the endpoint answered"
	case errors.Is(reqCtx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("endpoint did not answer within %s", t.timeout)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return "endpoint could not be reached: " + truncate(err.Error(), 200)
}

// responseContent is the content of a 2xx body: the "content" string of a JSON object, else
// the body as text.
func responseContent(data []byte) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err == nil {
		var content *string
		if raw, ok := obj["content"]; ok && json.Unmarshal(raw, &content) == nil && content != nil {
			return *content
		}
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// isJSONObject reports whether raw is a JSON object.
func isJSONObject(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && obj != nil
}
