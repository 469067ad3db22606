package buildcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sectionSign is a citation of a numbered section: the section sign and a digit.
var sectionSign = regexp.MustCompile(`§\s*\d`)

// transitionNumber is a citation of a numbered transition: T and a number from 1 to 15.
var transitionNumber = regexp.MustCompile(`\bT(1[0-5]|[1-9])\b`)

// subtestNumber is a test case whose name starts with a transition number.
var subtestNumber = regexp.MustCompile(`^T(1[0-5]|[1-9])\b`)

// sourceFiles returns the repository's files ending in one of exts, relative to the root,
// skipping version control, the local database (var/) and test fixtures.
func sourceFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != ".." && (strings.HasPrefix(name, ".") || name == "var" || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		for _, ext := range exts {
			if strings.HasSuffix(path, ext) {
				out = append(out, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the repository: %v", err)
	}
	if len(out) == 0 {
		t.Fatalf("no %v files found under the repository root", exts)
	}
	return out
}

// TestNoCommentCitesAnOutsideDocument fails when a Go comment cites a numbered section or
// transition, or a test case is named after one: such numbers point to a document outside
// the repository. Name the transition or the rule instead, as docs/state-machine.md does.
func TestNoCommentCitesAnOutsideDocument(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range sourceFiles(t, ".go") {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("parse %s: %v", path, err)
			continue
		}
		for _, group := range f.Comments {
			for _, c := range group.List {
				checkCitation(t, fset.Position(c.Pos()), c.Text)
			}
		}
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if subtestNumber.MatchString(s) || sectionSign.MatchString(s) {
				t.Errorf("%s: test name %q cites a transition or section number; name the transition or rule (docs/state-machine.md)", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}

// TestNoMigrationOrDocumentCitesASection applies the same rule to the SQL migrations' comments
// and to the Markdown documents.
func TestNoMigrationOrDocumentCitesASection(t *testing.T) {
	for _, path := range sourceFiles(t, ".sql", ".md") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			pos := token.Position{Filename: path, Line: i + 1}
			if sectionSign.MatchString(line) {
				t.Errorf("%s: cites a section number (§); name the rule instead: %s", pos, strings.TrimSpace(line))
			}
			if strings.HasSuffix(path, ".sql") && transitionNumber.MatchString(line) {
				t.Errorf("%s: cites a transition number; name the transition instead: %s", pos, strings.TrimSpace(line))
			}
		}
	}
}

func checkCitation(t *testing.T, pos token.Position, text string) {
	t.Helper()
	if sectionSign.MatchString(text) {
		t.Errorf("%s: comment cites a section number (§): name the rule instead (docs/state-machine.md): %s", pos, firstLine(text))
	}
	if m := transitionNumber.FindString(text); m != "" {
		t.Errorf("%s: comment cites transition %s: name the transition instead (docs/state-machine.md): %s", pos, m, firstLine(text))
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
