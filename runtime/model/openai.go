package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Limits of the openai provider.
const (
	MaxResponseBytes = 8 << 20
	maxErrorBody     = 64 << 10
	backoffBase      = 500 * time.Millisecond
	backoffMax       = 20 * time.Second
	retryAfterMax    = 60 * time.Second
)

// emptyParameters is what the model is offered for a tool that declares no parameters.
const emptyParameters = `{"type":"object","properties":{}}`

// openAI talks to an OpenAI-compatible /chat/completions endpoint.
type openAI struct {
	endpoint   string
	model      string
	apiKeyEnv  string
	timeout    time.Duration
	maxRetries int
	client     *http.Client
	getenv     func(string) string

	backoffBase   time.Duration
	backoffMax    time.Duration
	retryAfterMax time.Duration
	sleep         func(ctx context.Context, d time.Duration) error
}

// NewOpenAI builds a provider for any OpenAI-compatible chat-completions endpoint. It requires
// an absolute http(s) BaseURL and a Model; Timeout (per attempt, 0 = 60s) must not be negative
// and MaxRetries (nil = 3, 0 = no retry) must be in [0, 10]; these are errors wrapping ErrInvalidSettings. When
// APIKeyEnv is set, the variable it names must be set (an error wrapping ErrMissingEnv that
// names the variable, never a value); it is read again at every request and sent as
// "Authorization: Bearer". An empty APIKeyEnv sends no Authorization header.
//
// Complete POSTs {model, messages, tools} to BaseURL + "/chat/completions". It retries HTTP 429,
// 5xx and transport failures up to MaxRetries times with exponential backoff and jitter, waiting
// for Retry-After instead when the endpoint sends one (at most 60s), and stops as soon as ctx
// is done. Other statuses fail at once with a *StatusError; a body over MaxResponseBytes fails
// with ErrResponseTooLarge. Redirects are not followed. Tool-call arguments are returned as the
// JSON text the model produced, malformed or not; arguments sent as a JSON object are
// re-encoded as text, absent or null arguments become "{}", and a tool call without an ID, or
// repeating one, gets "call_<index>". client may be nil; getenv nil means os.Getenv.
func NewOpenAI(s Settings, client *http.Client, getenv func(string) string) (Provider, error) {
	return newOpenAI(s, client, getenv)
}

func newOpenAI(s Settings, client *http.Client, getenv func(string) string) (*openAI, error) {
	u, err := url.Parse(s.BaseURL)
	switch {
	case s.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("model: base_url must be an absolute http or https URL: %w", ErrInvalidSettings)
	case u.User != nil:
		return nil, fmt.Errorf("model: base_url must not carry credentials; use api_key_env: %w", ErrInvalidSettings)
	case strings.TrimSpace(s.Model) == "":
		return nil, fmt.Errorf("model: model is required for the openai provider: %w", ErrInvalidSettings)
	case s.Timeout < 0:
		return nil, fmt.Errorf("model: timeout must not be negative: %w", ErrInvalidSettings)
	case s.MaxRetries != nil && (*s.MaxRetries < 0 || *s.MaxRetries > MaxMaxRetries):
		return nil, fmt.Errorf("model: max retries must be between 0 and %d: %w", MaxMaxRetries, ErrInvalidSettings)
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	p := &openAI{
		endpoint:      strings.TrimRight(s.BaseURL, "/") + "/chat/completions",
		model:         s.Model,
		apiKeyEnv:     s.APIKeyEnv,
		timeout:       s.Timeout,
		maxRetries:    DefaultMaxRetries,
		client:        noRedirectClient(client),
		getenv:        getenv,
		backoffBase:   backoffBase,
		backoffMax:    backoffMax,
		retryAfterMax: retryAfterMax,
		sleep:         sleepContext,
	}
	if p.timeout == 0 {
		p.timeout = DefaultTimeout
	}
	if s.MaxRetries != nil {
		p.maxRetries = *s.MaxRetries
	}
	if _, err := p.apiKey(); err != nil {
		return nil, err
	}
	return p, nil
}

// noRedirectClient returns a copy of client (a fresh client when nil) that hands a redirect
// back as the response instead of following it with the API key.
func noRedirectClient(client *http.Client) *http.Client {
	c := &http.Client{}
	if client != nil {
		*c = *client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// apiKey reads the API key from the environment; "" when no variable is configured.
func (p *openAI) apiKey() (string, error) {
	if p.apiKeyEnv == "" {
		return "", nil
	}
	key := p.getenv(p.apiKeyEnv)
	if key == "" {
		return "", fmt.Errorf("model: api key variable %s: %w", p.apiKeyEnv, ErrMissingEnv)
	}
	return key, nil
}

// chatRequest is the body POSTed to /chat/completions.
type chatRequest struct {
	Model    string     `json:"model"`
	Messages []Message  `json:"messages"`
	Tools    []chatTool `json:"tools,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// chatResponse is the part of a chat-completions answer the provider reads.
type chatResponse struct {
	Choices []struct {
		Message struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     float64 `json:"prompt_tokens"`
		CompletionTokens float64 `json:"completion_tokens"`
		TotalTokens      float64 `json:"total_tokens"`
	} `json:"usage"`
}

// Complete asks the endpoint for the next assistant turn; see NewOpenAI.
func (p *openAI) Complete(ctx context.Context, req Request) (Response, error) {
	key, err := p.apiKey()
	if err != nil {
		return Response{}, err
	}
	body, err := json.Marshal(p.wireRequest(req))
	if err != nil {
		return Response{}, fmt.Errorf("model: encoding the request: %w", err)
	}
	for attempt := 0; ; attempt++ {
		resp, err := p.attempt(ctx, body, key)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("model: request abandoned: %w", ctx.Err())
		}
		if !IsRetryable(err) {
			return Response{}, err
		}
		if attempt >= p.maxRetries {
			return Response{}, fmt.Errorf("model: giving up after %d attempts: %w", attempt+1, err)
		}
		if serr := p.sleep(ctx, p.delay(attempt, err)); serr != nil {
			return Response{}, fmt.Errorf("model: request abandoned while waiting to retry (%v): %w", err, serr)
		}
	}
}

// wireRequest shapes req for the endpoint: tool calls typed "function", tools wrapped as
// functions, absent parameters as an empty object schema.
func (p *openAI) wireRequest(req Request) chatRequest {
	out := chatRequest{Model: p.model, Messages: make([]Message, len(req.Messages))}
	for i, m := range req.Messages {
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				if c.Type == "" {
					c.Type = "function"
				}
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		out.Messages[i] = m
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(emptyParameters)
		}
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out
}

// attempt performs one exchange under the per-attempt timeout.
func (p *openAI) attempt(ctx context.Context, body []byte, key string) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return Response{}, fmt.Errorf("model: building the request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	hresp, err := p.client.Do(hreq)
	if err != nil {
		return Response{}, p.transportError(ctx, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
		return Response{}, &StatusError{
			Code:       hresp.StatusCode,
			Message:    sanitize(errorMessage(data), key),
			RetryAfter: parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()),
		}
	}
	data, err := io.ReadAll(io.LimitReader(hresp.Body, MaxResponseBytes+1))
	if err != nil {
		return Response{}, p.transportError(ctx, err)
	}
	if len(data) > MaxResponseBytes {
		return Response{}, fmt.Errorf("model: more than %d bytes: %w", MaxResponseBytes, ErrResponseTooLarge)
	}
	return parseResponse(data, key)
}

// transportError wraps a failed exchange without the endpoint URL.
func (p *openAI) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TransportError{Err: fmt.Errorf("no answer within %s: %w", p.timeout, context.DeadlineExceeded)}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return &TransportError{Err: err}
}

// delay is how long to wait before retry attempt+1: the endpoint's Retry-After (capped), else
// exponential backoff with equal jitter.
func (p *openAI) delay(attempt int, err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, p.retryAfterMax)
	}
	d := p.backoffMax
	if attempt < 30 {
		d = min(p.backoffBase<<attempt, p.backoffMax)
	}
	half := d / 2
	return half + rand.N(half+1)
}

// sleepContext waits for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfter reads a Retry-After header (delay seconds or an HTTP date); 0 when absent or
// unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// errorMessage extracts the human message from an error body: error.message, a string error,
// or message; else the body itself.
func errorMessage(data []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &body) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(body.Error, &flat) == nil && flat != "":
			return flat
		case body.Message != "":
			return body.Message
		}
	}
	return string(data)
}

// parseResponse turns a 2xx body into a Response.
func parseResponse(data []byte, key string) (Response, error) {
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return Response{}, fmt.Errorf("model: the body is not a chat completion: %w", ErrMalformedResponse)
	}
	if len(cr.Choices) == 0 {
		detail := ""
		if msg := errorMessage(data); msg != string(data) {
			detail = ": " + sanitize(msg, key)
		}
		return Response{}, fmt.Errorf("model: the completion has no choices%s: %w", detail, ErrMalformedResponse)
	}
	choice := cr.Choices[0]
	content, err := messageContent(choice.Message.Content)
	if err != nil {
		return Response{}, err
	}
	msg := Message{Role: "assistant", Content: content}
	seen := make(map[string]bool, len(choice.Message.ToolCalls))
	for i, c := range choice.Message.ToolCalls {
		id := c.ID
		if id == "" || seen[id] {
			id = "call_" + strconv.Itoa(i)
			for seen[id] {
				id += "_"
			}
		}
		seen[id] = true
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{
			ID:       id,
			Type:     "function",
			Function: FunctionCall{Name: c.Function.Name, Arguments: argumentsText(c.Function.Arguments)},
		})
	}
	resp := Response{Message: msg, FinishReason: choice.FinishReason}
	if u := cr.Usage; u != nil {
		resp.Usage = Usage{PromptTokens: tokenCount(u.PromptTokens), CompletionTokens: tokenCount(u.CompletionTokens), TotalTokens: tokenCount(u.TotalTokens)}
		if resp.Usage.TotalTokens == 0 {
			resp.Usage.TotalTokens = tokenCount(u.PromptTokens + u.CompletionTokens)
		}
	}
	return resp, nil
}

// tokenCount is a reported token count as an int64, saturated at its bounds (a fraction
// truncated): a count out of range is kept as a count the run's engine refuses to believe, not
// a reason to refuse the completion.
func tokenCount(n float64) int64 {
	switch {
	case n >= math.MaxInt64:
		return math.MaxInt64
	case n <= math.MinInt64:
		return math.MinInt64
	}
	return int64(n)
}

// messageContent reads an assistant content that is null, a string, or a list of text parts.
func messageContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, part := range parts {
			if part.Type == "text" {
				b.WriteString(part.Text)
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("model: message content is neither text nor text parts: %w", ErrMalformedResponse)
}

// argumentsText is the arguments JSON text of a tool call: a JSON string verbatim (malformed or
// not), any other JSON value re-encoded compactly, nothing or null as "{}".
func argumentsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}
