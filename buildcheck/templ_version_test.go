package buildcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func readRoot(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", name))
	if err != nil {
		t.Fatalf("read %s at the repository root: %v", name, err)
	}
	return string(b)
}

// templKey reads a flat "key: value  # comment" line the way the Makefile's
// sed does.
func templKey(t *testing.T, conf, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `:[ \t]*([^ \t#\n]*)`).FindStringSubmatch(conf)
	if m == nil || m[1] == "" {
		t.Fatalf("templ.yaml has no %q key", key)
	}
	return m[1]
}

func TestTemplVersionMatchesGoMod(t *testing.T) {
	conf := readRoot(t, "templ.yaml")
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/a-h/templ\s+(v\S+)`).FindStringSubmatch(readRoot(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod does not require github.com/a-h/templ")
	}
	if got := templKey(t, conf, "version"); got != m[1] {
		t.Errorf("templ.yaml version = %s, go.mod requires github.com/a-h/templ %s: make them equal", got, m[1])
	}
}

func TestTemplConfigUsable(t *testing.T) {
	conf := readRoot(t, "templ.yaml")
	path := templKey(t, conf, "path")
	if !filepath.IsLocal(path) {
		t.Errorf("templ.yaml path %q is not a relative path inside the repository", path)
	}
	if fi, err := os.Stat(filepath.Join("..", path)); err == nil && !fi.IsDir() {
		t.Errorf("templ.yaml path %q is not a directory", path)
	}
	if got := templKey(t, conf, "include-version"); got != "false" && got != "true" {
		t.Errorf("templ.yaml include-version = %q, want true or false", got)
	}
}
