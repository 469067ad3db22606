// Package guardrail checks what a run is about to do against a configuration's guardrails: a
// tool call's arguments before the tool runs, and the model's final text before the run
// completes. A guardrail is a deny pattern (an RE2 regular expression) or an HTTP endpoint
// that answers allow, deny or require_approval. A guardrail that fails, answers anything else
// or does not answer in time denies: guardrails fail closed.
package guardrail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What a guardrail checks (Spec.On).
const (
	OnArguments = "arguments"
	OnOutput    = "output"
)

// The decisions a guardrail gives.
const (
	Allow           = "allow"
	Deny            = "deny"
	RequireApproval = "require_approval"
)

// Limits of a guardrail.
const (
	// DefaultTimeout is how long an HTTP guardrail may take when its spec sets no timeout.
	DefaultTimeout = 5 * time.Second
	// MaxTimeout is the longest timeout an HTTP guardrail may set.
	MaxTimeout = time.Minute
	// MaxPatternBytes bounds a deny pattern's length.
	MaxPatternBytes = 1000
	// MaxReasonChars bounds the reason kept from an HTTP guardrail's answer.
	MaxReasonChars = 500
	// maxAnswerBytes bounds how much of an HTTP guardrail's answer is read.
	maxAnswerBytes = 64 << 10
)

// Spec is one guardrail of a configuration, as stored (tx_nrllm_configuration.guardrails):
// exactly one of DenyPattern and HTTP, and the subjects it checks (On: OnArguments,
// OnOutput).
type Spec struct {
	DenyPattern string    `json:"deny_pattern,omitempty"`
	HTTP        *HTTPSpec `json:"http,omitempty"`
	On          []string  `json:"on"`
}

// HTTPSpec is an HTTP guardrail's endpoint and timeout (0 = DefaultTimeout).
type HTTPSpec struct {
	URL       string `json:"url"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
}

// CompilePattern compiles a deny pattern as a check uses it (RE2 syntax, at most
// MaxPatternBytes).
func CompilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > MaxPatternBytes {
		return nil, fmt.Errorf("longer than %d bytes", MaxPatternBytes)
	}
	return regexp.Compile(p)
}

// URLProblem says why raw cannot be an HTTP guardrail's endpoint ("" when it can): it must be
// an absolute http or https URL with a host and without credentials.
func URLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "required"
	case err != nil:
		return "not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an absolute http or https URL"
	case u.Hostname() == "":
		return "has no host"
	case u.User != nil:
		return "must not carry credentials"
	}
	return ""
}

// Subject is what one check is about: a tool call's arguments (On OnArguments, Tool,
// Arguments) or the model's final text (On OnOutput, Output), in run Run.
type Subject struct {
	Run       string
	On        string
	Tool      string
	Arguments json.RawMessage
	Output    string
}

// Verdict is the outcome of checking a subject. Guardrail names the guardrail that decided
// ("guardrails[1] http 127.0.0.1:9300"; "" when all allowed); Reason is its reason: an HTTP
// guardrail's own words, or a fixed sentence for a pattern and for a failed guardrail.
// Failed is set when the guardrail denied because it failed, answered something else or
// timed out.
type Verdict struct {
	Decision  string
	Guardrail string
	Reason    string
	Failed    bool
}

// Set is a configuration's compiled guardrails, in order. It is safe for concurrent use.
type Set struct {
	rails  []rail
	client *http.Client
}

type rail struct {
	spec Spec
	name string
	re   *regexp.Regexp
	on   map[string]bool
}

// New compiles specs; an invalid spec (both or neither of pattern and endpoint, a pattern
// that does not compile, an unusable URL, an unknown subject) is an error naming its position.
// client sends the HTTP checks (a fresh client when nil); redirects are not followed.
func New(specs []Spec, client *http.Client) (*Set, error) {
	c := &http.Client{}
	if client != nil {
		*c = *client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s := &Set{client: c}
	for i, sp := range specs {
		r := rail{spec: sp, on: map[string]bool{}}
		for _, on := range sp.On {
			if on != OnArguments && on != OnOutput {
				return nil, fmt.Errorf("guardrail %d: unknown subject %q", i, on)
			}
			r.on[on] = true
		}
		switch {
		case (sp.DenyPattern == "") == (sp.HTTP == nil):
			return nil, fmt.Errorf("guardrail %d: needs exactly one of deny_pattern and http", i)
		case sp.HTTP != nil:
			if p := URLProblem(sp.HTTP.URL); p != "" {
				return nil, fmt.Errorf("guardrail %d: url %s", i, p)
			}
			u, _ := url.Parse(sp.HTTP.URL)
			r.name = fmt.Sprintf("guardrails[%d] http %s", i, u.Host)
		default:
			re, err := CompilePattern(sp.DenyPattern)
			if err != nil {
				return nil, fmt.Errorf("guardrail %d: deny_pattern: %w", i, err)
			}
			r.re, r.name = re, fmt.Sprintf("guardrails[%d] deny_pattern", i)
		}
		s.rails = append(s.rails, r)
	}
	return s, nil
}

// Checks reports whether any guardrail checks subjects of kind on.
func (s *Set) Checks(on string) bool {
	for _, r := range s.rails {
		if r.on[on] {
			return true
		}
	}
	return false
}

// Check runs the guardrails that check subj.On, in order, and returns the first denial, else
// the first require_approval, else Allow. It stops at a denial.
func (s *Set) Check(ctx context.Context, subj Subject) Verdict {
	verdict := Verdict{Decision: Allow}
	for _, r := range s.rails {
		if !r.on[subj.On] {
			continue
		}
		v := r.check(ctx, s.client, subj)
		switch v.Decision {
		case Deny:
			return v
		case RequireApproval:
			if verdict.Decision == Allow {
				verdict = v
			}
		}
	}
	return verdict
}

func (r rail) check(ctx context.Context, client *http.Client, subj Subject) Verdict {
	if r.re != nil {
		if r.matches(subj) {
			return Verdict{Decision: Deny, Guardrail: r.name, Reason: "The text matched a deny pattern."}
		}
		return Verdict{Decision: Allow, Guardrail: r.name}
	}
	v, err := r.ask(ctx, client, subj)
	if err != nil {
		return Verdict{Decision: Deny, Guardrail: r.name, Reason: "The guardrail " + err.Error() + ", so it denied.", Failed: true}
	}
	v.Guardrail = r.name
	return v
}

// matches reports whether the deny pattern matches the subject: the output text, or the
// arguments as the model wrote them and each text (key or value) within them decoded, so an
// escape sequence cannot hide a match; each of these both as it is and normalised (normalize),
// so look-alike letters and invisible or unusual spaces cannot hide one either.
func (r rail) matches(subj Subject) bool {
	if subj.On == OnOutput {
		return r.matchText(subj.Output)
	}
	if r.matchText(string(subj.Arguments)) {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(subj.Arguments))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if text, ok := tok.(string); ok && r.matchText(text) {
			return true
		}
	}
}

// matchText reports whether the deny pattern matches text or its normalised copy.
func (r rail) matchText(text string) bool {
	return r.re.MatchString(text) || r.re.MatchString(normalize(text))
}

// normalize is the copy of text a deny pattern is also matched on: format characters
// (unicode.Cf: zero-width spaces and joiners, bidirectional marks, soft hyphens) removed,
// then NFKC (full-width and other compatibility forms become their plain letters, a
// non-breaking space a space), then every run of white space one space.
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, c := range text {
		if !unicode.Is(unicode.Cf, c) {
			b.WriteRune(c)
		}
	}
	folded := norm.NFKC.String(b.String())
	b.Reset()
	space := false
	for _, c := range folded {
		if unicode.IsSpace(c) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(c)
	}
	return b.String()
}

// request is the JSON an HTTP guardrail receives.
type request struct {
	Run       string          `json:"run"`
	On        string          `json:"on"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Output    *string         `json:"output,omitempty"`
}

// answer is the JSON an HTTP guardrail answers.
type answer struct {
	Decision *string `json:"decision"`
	Reason   *string `json:"reason"`
}

var errGarbage = errors.New("answered something other than {\"decision\": \"allow\" | \"deny\" | \"require_approval\", \"reason\": \"…\"}")

// ask POSTs the subject to the guardrail and reads its decision; the error says, in words fit
// for the run's page, why there is none.
func (r rail) ask(ctx context.Context, client *http.Client, subj Subject) (Verdict, error) {
	body := request{Run: subj.Run, On: subj.On}
	if subj.On == OnOutput {
		body.Output = &subj.Output
	} else {
		body.Tool, body.Arguments = subj.Tool, subj.Arguments
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return Verdict{}, errors.New("could not be asked (the subject does not encode)")
	}
	timeout := time.Duration(r.spec.HTTP.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.spec.HTTP.URL, bytes.NewReader(payload))
	if err != nil {
		return Verdict{}, errors.New("could not be asked (bad request)")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Verdict{}, fmt.Errorf("did not answer within %s", timeout)
		}
		return Verdict{}, errors.New("could not be reached")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Verdict{}, fmt.Errorf("did not answer within %s", timeout)
	case err != nil:
		return Verdict{}, errors.New("broke off its answer")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Verdict{}, fmt.Errorf("answered HTTP %d", resp.StatusCode)
	case len(raw) > maxAnswerBytes:
		return Verdict{}, fmt.Errorf("answered more than %d bytes", maxAnswerBytes)
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil || a.Decision == nil {
		return Verdict{}, errGarbage
	}
	switch *a.Decision {
	case Allow, Deny, RequireApproval:
	default:
		return Verdict{}, errGarbage
	}
	v := Verdict{Decision: *a.Decision}
	if a.Reason != nil {
		v.Reason = clip(strings.TrimSpace(*a.Reason), MaxReasonChars)
	}
	return v, nil
}

// clip cuts s to at most n characters, marking a cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
