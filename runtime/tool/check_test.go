package tool_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime/tool"
)

func validDefinition() tool.Definition {
	return tool.Definition{
		Name:        "issue_refund",
		Description: "Issue the refund.",
		Parameters:  []byte(objectParams),
		Effect:      tool.EffectNonIdempotentWrite,
		AdminOnly:   true,
		HTTP: tool.HTTPConfig{
			URL:     "https://refunds.example:9000/refund?x=1",
			Headers: map[string]string{"Authorization": "Bearer ${REFUND_TOKEN}", "X-Static": "v1"},
			Timeout: 10 * time.Second,
		},
	}
}

func TestCheckAcceptsValidDefinitions(t *testing.T) {
	if errs := tool.Check(validDefinition()); errs != nil {
		t.Errorf("Check = %v", errs)
	}
	input := tool.Definition{
		Name:        "ask_refund_amount",
		InputSchema: []byte(usableInput),
		HTTP:        tool.HTTPConfig{URL: "http://127.0.0.1:9000/amount", Timeout: 5 * time.Minute, MaxResponseBytes: 16 << 20},
	}
	if errs := tool.Check(input); errs != nil {
		t.Errorf("Check(input tool) = %v", errs)
	}
}

func TestCheckRefuses(t *testing.T) {
	cases := []struct {
		name   string
		change func(*tool.Definition)
		field  string
		rule   error
	}{
		{"empty name", func(d *tool.Definition) { d.Name = "" }, "name", tool.ErrInvalidName},
		{"bad name", func(d *tool.Definition) { d.Name = "issue/refund" }, "name", tool.ErrInvalidName},
		{"unknown effect", func(d *tool.Definition) { d.Effect = "write" }, "effect", tool.ErrUnknownEffect},
		{"parameters not an object schema", func(d *tool.Definition) { d.Parameters = []byte(`{"type":"array"}`) }, "parameters", tool.ErrInvalidParameters},
		{"unusable input schema", func(d *tool.Definition) {
			d.Effect = ""
			d.InputSchema = []byte(`{"description":"nothing"}`)
		}, "input_schema", tool.ErrUnusableInputSchema},
		{"write and input", func(d *tool.Definition) { d.InputSchema = []byte(usableInput) }, "", tool.ErrApprovalAndInput},
		{"approval and input", func(d *tool.Definition) {
			d.Effect = ""
			d.RequiresApproval = true
			d.InputSchema = []byte(usableInput)
		}, "", tool.ErrApprovalAndInput},
		{"missing URL", func(d *tool.Definition) { d.HTTP.URL = "" }, "http.url", tool.ErrInvalidURL},
		{"relative URL", func(d *tool.Definition) { d.HTTP.URL = "/refund" }, "http.url", tool.ErrInvalidURL},
		{"file URL", func(d *tool.Definition) { d.HTTP.URL = "file:///etc/passwd" }, "http.url", tool.ErrInvalidURL},
		{"ftp URL", func(d *tool.Definition) { d.HTTP.URL = "ftp://example.com/x" }, "http.url", tool.ErrInvalidURL},
		{"no host", func(d *tool.Definition) { d.HTTP.URL = "http:///path" }, "http.url", tool.ErrInvalidURL},
		{"port only", func(d *tool.Definition) { d.HTTP.URL = "http://:9000/path" }, "http.url", tool.ErrInvalidURL},
		{"credentials in URL", func(d *tool.Definition) { d.HTTP.URL = "https://user:pw@example.com/" }, "http.url", tool.ErrInvalidURL},
		{"unparsable URL", func(d *tool.Definition) { d.HTTP.URL = "http://exa mple.com/%zz" }, "http.url", tool.ErrInvalidURL},
		{"negative timeout", func(d *tool.Definition) { d.HTTP.Timeout = -time.Second }, "http.timeout", tool.ErrInvalidTimeout},
		{"timeout over 5m", func(d *tool.Definition) { d.HTTP.Timeout = 5*time.Minute + time.Nanosecond }, "http.timeout", tool.ErrInvalidTimeout},
		{"negative response limit", func(d *tool.Definition) { d.HTTP.MaxResponseBytes = -1 }, "http.max_response_bytes", tool.ErrInvalidResponseLimit},
		{"response limit over 16 MiB", func(d *tool.Definition) { d.HTTP.MaxResponseBytes = 16<<20 + 1 }, "http.max_response_bytes", tool.ErrInvalidResponseLimit},
		{"negative arguments bound", func(d *tool.Definition) { d.MaxArgumentsBytes = -1 }, "max_arguments_bytes", tool.ErrInvalidArgumentsLimit},
		{"arguments bound over 1 MiB", func(d *tool.Definition) { d.MaxArgumentsBytes = tool.MaxArgumentsBytesLimit + 1 }, "max_arguments_bytes", tool.ErrInvalidArgumentsLimit},
		{"header name with space", func(d *tool.Definition) { d.HTTP.Headers = map[string]string{"X Key": "v"} }, "http.headers.X Key", tool.ErrInvalidHeader},
		{"header value with newline", func(d *tool.Definition) { d.HTTP.Headers = map[string]string{"X-Key": "a\r\nEvil: 1"} }, "http.headers.X-Key", tool.ErrInvalidHeader},
		{"unterminated reference", func(d *tool.Definition) { d.HTTP.Headers = map[string]string{"X-Key": "Bearer ${TOKEN"} }, "http.headers.X-Key", tool.ErrInvalidHeader},
		{"reference with a bad name", func(d *tool.Definition) { d.HTTP.Headers = map[string]string{"X-Key": "${1TOKEN}"} }, "http.headers.X-Key", tool.ErrInvalidHeader},
		{"empty reference", func(d *tool.Definition) { d.HTTP.Headers = map[string]string{"X-Key": "${}"} }, "http.headers.X-Key", tool.ErrInvalidHeader},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			def := validDefinition()
			c.change(&def)
			errs := tool.Check(def)
			if len(errs) != 1 {
				t.Fatalf("Check = %v, want exactly one problem", errs)
			}
			var p *tool.Problem
			if !errors.As(errs[0], &p) {
				t.Fatalf("%v is not a *Problem", errs[0])
			}
			if p.Field != c.field || !errors.Is(p, c.rule) || p.Tool != def.Name {
				t.Errorf("problem = %+v, want tool %q field %q rule %q", p, def.Name, c.field, c.rule)
			}
		})
	}
}

func TestCheckExplainsParameterProblems(t *testing.T) {
	for params, detail := range map[string]string{
		`null`:                               "not a JSON object",
		`[]`:                                 "not a JSON object",
		`{"type":["object"]}`:                `type is not "object"`,
		`{"type":"object","properties":"x"}`: "properties is not a JSON object",
		`{"type":"object","properties":{"a":{}}}`: "",
	} {
		def := validDefinition()
		def.Parameters = []byte(params)
		errs := tool.Check(def)
		var p *tool.Problem
		switch {
		case detail == "" && errs != nil:
			t.Errorf("parameters %s: %v", params, errs)
		case detail != "" && (len(errs) != 1 || !errors.As(errs[0], &p) || p.Detail != detail):
			t.Errorf("parameters %s: %v, want detail %q", params, errs, detail)
		}
	}
}

func TestCheckNeverQuotesHeaderValues(t *testing.T) {
	def := validDefinition()
	def.HTTP.Headers = map[string]string{"X-Key": "literal-secret\n${BROKEN"}
	for _, err := range tool.Check(def) {
		if strings.Contains(err.Error(), "literal-secret") {
			t.Errorf("problem %q quotes the header value", err)
		}
	}
}

func TestCheckReportsEveryProblemAtOnce(t *testing.T) {
	def := tool.Definition{
		Name:        "bad name",
		Effect:      "sometimes",
		Parameters:  []byte(`[]`),
		InputSchema: []byte(`{}`),
		HTTP: tool.HTTPConfig{
			URL:              "gopher://x",
			Timeout:          time.Hour,
			MaxResponseBytes: -5,
			Headers:          map[string]string{"Bad Header": "x", "X-Ok": "${MISSING_BRACE"},
		},
	}
	var fields []string
	for _, err := range tool.Check(def) {
		var p *tool.Problem
		if !errors.As(err, &p) {
			t.Fatalf("%v is not a *Problem", err)
		}
		fields = append(fields, p.Field)
	}
	want := []string{"name", "effect", "parameters", "input_schema", "", "http.url", "http.timeout", "http.max_response_bytes", "http.headers.Bad Header", "http.headers.X-Ok"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields = %q, want %q", fields, want)
	}
}

func TestEnvRefs(t *testing.T) {
	def := validDefinition()
	def.HTTP.Headers = map[string]string{
		"Authorization": "Bearer ${REFUND_TOKEN}",
		"X-Pair":        "${A_1}:${REFUND_TOKEN}$literal${_B}",
		"X-Static":      "no refs $ here",
		"X-Broken":      "${NOT_CLOSED",
	}
	want := []string{"A_1", "REFUND_TOKEN", "_B"}
	if got := tool.EnvRefs(def); !slices.Equal(got, want) {
		t.Errorf("EnvRefs = %v, want %v", got, want)
	}
	if got := tool.EnvRefs(tool.Definition{}); len(got) != 0 {
		t.Errorf("EnvRefs of no headers = %v", got)
	}
}
