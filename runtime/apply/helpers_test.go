package apply_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
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
