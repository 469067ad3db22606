package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/guardrail"
)

// limitsFile is okConfiguration with extra keys.
func limitsFile(extra string) string {
	return "configurations:\n" + okConfiguration + extra
}

// TestBudgetAndGuardrailRules: each mistake in pricing, budget, max_context_tokens and
// guardrails is one problem naming its path.
func TestBudgetAndGuardrailRules(t *testing.T) {
	cases := []struct{ name, extra, want string }{
		{"price not a number", "    pricing: {prompt_per_1k: cheap}\n", "configurations[0].pricing.prompt_per_1k: must be a number"},
		{"negative price", "    pricing: {completion_per_1k: -1}\n", "configurations[0].pricing.completion_per_1k: must be between 0 and 1000"},
		{"price with too many decimals", "    pricing: {prompt_per_1k: 0.000000001}\n", "configurations[0].pricing.prompt_per_1k: at most 8 decimal places"},
		{"infinite price", "    pricing: {prompt_per_1k: .inf}\n", "configurations[0].pricing.prompt_per_1k: must be a number"},
		{"unknown pricing key", "    pricing: {per_token: 1}\n", "configurations[0].pricing.per_token: unknown key (known keys: prompt_per_1k, completion_per_1k)"},
		{"zero token budget", "    budget: {max_total_tokens: 0}\n", "configurations[0].budget.max_total_tokens: must be between 1 and"},
		{"fractional token budget", "    budget: {max_total_tokens: 1.5}\n", "configurations[0].budget.max_total_tokens: must be a whole number"},
		{"cost budget without pricing", "    budget: {max_cost: 0.5}\n", "configurations[0].budget.max_cost: needs pricing"},
		{"zero cost budget", "    pricing: {prompt_per_1k: 1}\n    budget: {max_cost: 0}\n", "configurations[0].budget.max_cost: must be more than 0"},
		{"cost budget with too many decimals", "    pricing: {prompt_per_1k: 1}\n    budget: {max_cost: 0.0000001}\n", "configurations[0].budget.max_cost: at most 6 decimal places"},
		{"zero context window", "    max_context_tokens: 0\n", "configurations[0].max_context_tokens: must be between 1 and"},
		{"guardrail with neither", "    guardrails: [{on: [arguments]}]\n", "configurations[0].guardrails[0]: needs deny_pattern or http"},
		{"guardrail with both", "    guardrails: [{deny_pattern: x, http: {url: \"http://x/\"}, on: [output]}]\n", "configurations[0].guardrails[0]: has both deny_pattern and http"},
		{"invalid pattern", "    guardrails:\n      - deny_pattern: \"(?i)ignore (all\"\n        on: [arguments]\n", "configurations[0].guardrails[0].deny_pattern: not a valid RE2 regular expression: error parsing regexp: missing closing )"},
		{"pattern RE2 cannot do", "    guardrails: [{deny_pattern: \"(?=x)\", on: [output]}]\n", "configurations[0].guardrails[0].deny_pattern: not a valid RE2 regular expression"},
		{"empty pattern", "    guardrails: [{deny_pattern: \"\", on: [output]}]\n", "configurations[0].guardrails[0].deny_pattern: must not be empty"},
		{"guardrail URL relative", "    guardrails: [{http: {url: /check}, on: [arguments]}]\n", "configurations[0].guardrails[0].http.url: must be an absolute http or https URL"},
		{"guardrail URL with credentials", "    guardrails: [{http: {url: \"http://u:p@x/\"}, on: [arguments]}]\n", "configurations[0].guardrails[0].http.url: must not carry credentials"},
		{"guardrail timeout too long", "    guardrails: [{http: {url: \"http://x/\", timeout: 2m}, on: [arguments]}]\n", "configurations[0].guardrails[0].http.timeout: must be between 1ms and 1m0s"},
		{"unknown guardrail http key", "    guardrails: [{http: {url: \"http://x/\", headers: {}}, on: [arguments]}]\n", "configurations[0].guardrails[0].http.headers: unknown key"},
		{"guardrail without on", "    guardrails: [{deny_pattern: x}]\n", "configurations[0].guardrails[0].on: required"},
		{"unknown subject", "    guardrails: [{deny_pattern: x, on: [arguments, prompt]}]\n", `configurations[0].guardrails[0].on[1]: unknown "prompt" (want arguments or output)`},
		{"subject twice", "    guardrails: [{deny_pattern: x, on: [output, output]}]\n", `configurations[0].guardrails[0].on[1]: "output" is listed twice`},
		{"second guardrail", "    guardrails:\n      - {deny_pattern: x, on: [output]}\n      - {http: {url: \"\"}, on: [output]}\n", "configurations[0].guardrails[1].http.url: required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{}
			_, err := newApplier(cat, fullEnv).Plan(context.Background(), []byte(limitsFile(c.extra)))
			var ps apply.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Plan error = %v, want Problems", err)
			}
			if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), c.want) {
				t.Errorf("problems:\n%s\nwant exactly one starting %q", strings.Join(lines(err), "\n"), c.want)
			}
			if ps[0].Line == 0 {
				t.Errorf("problem %q has no line", ps[0])
			}
		})
	}
}

// TestBudgetAndGuardrailsApply: the keys as the issue writes them are stored on the
// configuration; applying the file again changes nothing, and changing a guardrail updates it.
func TestBudgetAndGuardrailsApply(t *testing.T) {
	file := limitsFile(`    pricing: {prompt_per_1k: 0.0025, completion_per_1k: 0.01}
    budget: {max_total_tokens: 50000, max_cost: 0.50}
    max_context_tokens: 16000
    guardrails:
      - deny_pattern: "(?i)ignore (all )?previous instructions"
        on: [arguments, output]
      - http: {url: "http://127.0.0.1:9300/check", timeout: 5s}
        on: [arguments]
`)
	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	if got := applyFile(t, a, []byte(file)); len(got) != 1 || got[0] != "configuration c: create" {
		t.Fatalf("apply = %q", got)
	}
	c := cat.configs[0]
	wantRails := []guardrail.Spec{
		{DenyPattern: "(?i)ignore (all )?previous instructions", On: []string{"arguments", "output"}},
		{HTTP: &guardrail.HTTPSpec{URL: "http://127.0.0.1:9300/check", TimeoutMS: 5000}, On: []string{"arguments"}},
	}
	if c.Pricing != (runtime.Pricing{PromptPer1K: 0.0025, CompletionPer1K: 0.01}) || c.Budget != (runtime.Budget{MaxTotalTokens: 50000, MaxCost: 0.5}) ||
		c.MaxContextTokens != 16000 || encode(c.Guardrails) != encode(wantRails) {
		t.Fatalf("stored %+v %+v %d %s", c.Pricing, c.Budget, c.MaxContextTokens, encode(c.Guardrails))
	}
	if got := applyFile(t, a, []byte(file)); got[0] != "configuration c: unchanged" {
		t.Fatalf("second apply = %q", got)
	}
	if got := applyFile(t, a, []byte(strings.Replace(file, "timeout: 5s", "timeout: 2s", 1))); got[0] != "configuration c: update" {
		t.Fatalf("apply with another timeout = %q", got)
	}
}
