package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
)

func newApplier(cat apply.Catalog, getenv func(string) string) *apply.Applier {
	return apply.New(apply.Config{Catalog: cat, Getenv: getenv})
}

func TestFiveMistakesAreAllReportedAndNothingIsWritten(t *testing.T) {
	cat := &fakeCatalog{}
	_, err := newApplier(cat, env(nil)).Plan(context.Background(), readFile(t, "five-mistakes.yaml"))
	var ps apply.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Plan error = %v, want Problems", err)
	}
	want := []string{
		`configurations[0].provider.kind: unknown kind "foo" (want openai or scripted) (line 4)`,
		`configurations[0].colour: unknown key (known keys: identifier, name, provider, system_prompt, max_iterations, require_second_approver, tools, wait, pricing, budget, max_context_tokens, guardrails, notify, subject, keep_output, privacy, support_sees, assignment, retention, approvals_required, allow_automatic_vote, kind, callers, ad_hoc, callback_hosts, callback_secret_env) (line 5)`,
		`configurations[0].tools[1]: tool "x" is not defined (not in this file's tools, not stored, not built in) (line 6)`,
		`tools[1].http.headers.Authorization: environment variable REFUND_TOKEN is not set (line 13)`,
		`tools[2].input_schema: not usable (an empty schema accepts anything) (line 15)`,
	}
	if got := lines(err); !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(err.Error(), "5 problems; nothing was applied:") {
		t.Errorf("error starts %q", strings.SplitN(err.Error(), "\n", 2)[0])
	}
	if cat.writes != 0 || len(cat.tools) != 0 || len(cat.configs) != 0 {
		t.Errorf("catalog written: %d writes", cat.writes)
	}
}

func TestApplyCreatesThenChangesNothing(t *testing.T) {
	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	ctx := context.Background()
	data := readFile(t, "valid.yaml")

	first := applyFile(t, a, data)
	want := []string{"tool lookup_order: create", "tool ask_refund_amount: create", "tool issue_refund: create",
		"configuration refunds: create", "configuration refunds-scripted: create"}
	if !slices.Equal(first, want) {
		t.Errorf("first apply = %q, want %q", first, want)
	}
	writes := cat.writes
	second := applyFile(t, a, data)
	for _, c := range second {
		if !strings.HasSuffix(c, ": unchanged") {
			t.Errorf("second apply: %s", c)
		}
	}
	if cat.writes != writes {
		t.Errorf("second apply wrote %d times", cat.writes-writes)
	}
	p, err := a.Plan(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Changes {
		if c.Action != apply.Unchanged {
			t.Errorf("plan after apply: %+v", c)
		}
	}
}

func TestDryRunReportsChangesAndWritesNothing(t *testing.T) {
	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	ctx := context.Background()
	applyFile(t, a, readFile(t, "valid.yaml"))
	writes := cat.writes

	changed := strings.Replace(string(readFile(t, "valid.yaml")), "max_iterations: 10", "max_iterations: 12", 1)
	changed = strings.Replace(changed, "description: Issue the refund.", "description: Issue it.", 1)
	changed += `  - name: tag_ticket
    effect: idempotent_write
    http: {url: "http://127.0.0.1:9000/tag"}
`
	p, err := a.Plan(ctx, []byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Changes {
		got = append(got, c.Kind+" "+c.Name+": "+string(c.Action))
	}
	want := []string{"tool lookup_order: unchanged", "tool ask_refund_amount: unchanged", "tool issue_refund: update",
		"tool tag_ticket: create", "configuration refunds: update", "configuration refunds-scripted: unchanged"}
	if !slices.Equal(got, want) {
		t.Errorf("plan = %q, want %q", got, want)
	}
	if cat.writes != writes {
		t.Errorf("Plan wrote %d times", cat.writes-writes)
	}
}

func TestApplyReportsStoreFailures(t *testing.T) {
	boom := errors.New("store down")
	_, err := newApplier(&fakeCatalog{fail: boom}, fullEnv).Plan(context.Background(), readFile(t, "valid.yaml"))
	if !errors.Is(err, boom) {
		t.Errorf("Plan error = %v, want the store error", err)
	}
	var ps apply.Problems
	if errors.As(err, &ps) {
		t.Errorf("a store failure was reported as file problems: %v", err)
	}

	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	p, err := a.Plan(context.Background(), readFile(t, "valid.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cat.fail = boom
	done, err := a.Apply(context.Background(), p)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "nothing was applied") || done != nil {
		t.Errorf("Apply = %v, %v; want the store error, nothing applied", done, err)
	}
}

func applyFile(t *testing.T, a *apply.Applier, data []byte) []string {
	t.Helper()
	ctx := context.Background()
	p, err := a.Plan(ctx, data)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	done, err := a.Apply(ctx, p)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	var out []string
	for _, c := range done {
		out = append(out, c.Kind+" "+c.Name+": "+string(c.Action))
	}
	return out
}

// TestMaxRetriesZeroIsKept: `max_retries: 0` is applied as "no retry", not as the default, and
// removing the key again is a change back to the default.
func TestMaxRetriesZeroIsKept(t *testing.T) {
	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	plain := string(readFile(t, "valid.yaml"))
	zero := strings.Replace(plain, `api_key_env: OPENAI_API_KEY}`, `api_key_env: OPENAI_API_KEY, max_retries: 0}`, 1)
	if zero == plain {
		t.Fatal("test file has no provider to edit")
	}
	applyFile(t, a, []byte(zero))
	if r := cat.configs[0].Provider.MaxRetries; r == nil || *r != 0 {
		t.Fatalf("max_retries: 0 stored as %v, want 0", r)
	}
	got := applyFile(t, a, []byte(plain))
	if !slices.Contains(got, "configuration refunds: update") {
		t.Errorf("removing max_retries: %q, want refunds updated", got)
	}
	if r := cat.configs[0].Provider.MaxRetries; r != nil {
		t.Errorf("max_retries absent stored as %d, want the default (unset)", *r)
	}
}
