package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
)

// TestKeepOutput: `keep_output:` is absent-true, false is applied as a configuration that
// keeps no output, and a change of it plans an update naming it; include_output of a
// notify rule is applied, and refused on a rule not sent for `finished`.
func TestKeepOutput(t *testing.T) {
	const hook = `{on: [finished], webhook: {url: "https://hooks.example/desk", secret_env: DESK_HOOK_SECRET}, include_output: true}`
	file := withNotify(hook)
	cat, a := appliedFile(t, file)
	if c := cat.configs[0]; c.NoOutput || !c.Notify[0].IncludeOutput {
		t.Fatalf("applied NoOutput %v, include_output %v; want outputs kept and included", c.NoOutput, c.Notify[0].IncludeOutput)
	}
	for _, changed := range []string{file + "    keep_output: false\n", strings.Replace(file, "include_output: true", "include_output: false", 1)} {
		next, err := a.Plan(context.Background(), []byte(changed))
		if err != nil || next.Changes[0].Action != apply.Update {
			t.Fatalf("plan %+v, %v; want an update", next, err)
		}
	}
	next, err := a.Plan(context.Background(), []byte(file+"    keep_output: false\n"))
	if err != nil || !strings.Contains(strings.Join(next.Changes[0].Fields, ","), "keep_output") {
		t.Fatalf("plan %+v, %v; want keep_output named", next, err)
	}
	if next, err := a.Plan(context.Background(), []byte(file+"    keep_output: true\n")); err != nil || next.Changes[0].Action == apply.Update {
		t.Fatalf("keep_output: true over the default: plan %+v, %v; want no change", next, err)
	}
	_, err = a.Plan(context.Background(), []byte(withNotify(strings.Replace(hook, "[finished]", "[waiting]", 1))))
	var ps apply.Problems
	if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), "configurations[0].notify[0].include_output: applies to the finished event only") {
		t.Fatalf("include_output without finished: %v; want one problem at include_output", err)
	}
}
