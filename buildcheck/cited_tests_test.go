package buildcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citedTest is a test a document names with its package directory: `handlers.TestX`,
// `cmd/web.TestY`.
var citedTest = regexp.MustCompile("`((?:[a-z][a-z0-9]*/)*[a-z][a-z0-9]*)\\.(Test[A-Za-z0-9_]+)`")

// testFunc is a test function's declaration.
var testFunc = regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)

// TestSecurityTableCitesRealTests: every test the ASVS table of docs/security.md and the test
// tables of docs/identity.md name (package.TestName) is declared in that package's tests, so
// a renamed or removed test cannot leave a requirement covered on paper only.
func TestSecurityTableCitesRealTests(t *testing.T) {
	declared := map[string]map[string]bool{}
	testsOf := func(dir string) map[string]bool {
		if names, ok := declared[dir]; ok {
			return names
		}
		names := map[string]bool{}
		files, err := filepath.Glob(filepath.Join("..", dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
		declared[dir] = names
		return names
	}
	for _, doc := range []string{"docs/security.md", "docs/identity.md"} {
		b, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			t.Fatal(err)
		}
		cited := citedTest.FindAllStringSubmatch(string(b), -1)
		if doc == "docs/security.md" && !strings.Contains(string(b), "## Authentication and sessions (ASVS Level 2)") {
			t.Errorf("%s has no ASVS table (## Authentication and sessions (ASVS Level 2))", doc)
		}
		if len(cited) == 0 {
			t.Errorf("%s names no test", doc)
		}
		for _, m := range cited {
			if !testsOf(m[1])[m[2]] {
				t.Errorf("%s cites %s.%s, which no test file of %s declares", doc, m[1], m[2], m[1])
			}
		}
	}
}
