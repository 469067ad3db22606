package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
)

// env is a getenv over a fixed set of variables.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

// fullEnv sets every variable the test files reference.
var fullEnv = env(map[string]string{"OPENAI_API_KEY": "sk-test", "REFUND_TOKEN": "rt-test"})

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// encode is a stable text form of v for comparisons.
func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// lines splits a Problems error into its problem lines (the count line dropped).
func lines(err error) []string {
	all := strings.Split(err.Error(), "\n")
	out := make([]string, 0, len(all))
	for _, l := range all[1:] {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// wantOneProblem plans file with a and wants exactly one problem, starting with want, and no
// write to cat.
func wantOneProblem(t *testing.T, cat *fakeCatalog, a *apply.Applier, file, want string) {
	t.Helper()
	_, err := a.Plan(context.Background(), []byte(file))
	var ps apply.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Plan error = %v, want Problems", err)
	}
	if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), want) {
		t.Errorf("problems:\n%s\nwant exactly one starting %q", strings.Join(lines(err), "\n"), want)
	}
	if cat.writes != 0 {
		t.Errorf("%d writes", cat.writes)
	}
}
