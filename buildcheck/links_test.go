package buildcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markdownLink is an inline Markdown link or image: its target up to a space, ')' or '#'.
var markdownLink = regexp.MustCompile(`\]\(([^)\s#]*)(#[^)\s]*)?[^)]*\)`)

// TestRelativeLinksResolve fails on a relative link in the README or a Markdown file of the
// repository whose target does not exist, and on a docs/ page the README does not link to.
func TestRelativeLinksResolve(t *testing.T) {
	for _, path := range sourceFiles(t, ".md") {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(withoutCode(string(raw))), -1) {
			target := m[1]
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
				t.Errorf("%s: the link to %s is broken: %v", path, target, err)
			}
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs pages: %v, %v", pages, err)
	}
	for _, page := range pages {
		if link := "](docs/" + filepath.Base(page); !strings.Contains(string(readme), link) {
			t.Errorf("README.md does not link to %s", filepath.ToSlash(strings.TrimPrefix(page, "../")))
		}
	}
}

// withoutCode is md with its fenced code blocks and inline code spans blanked, so an example
// in code is not read as a link.
func withoutCode(md string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			b.WriteString("\n")
			continue
		}
		if fenced {
			b.WriteString("\n")
			continue
		}
		b.WriteString(inlineCode.ReplaceAllString(line, "``"))
		b.WriteString("\n")
	}
	return b.String()
}

// inlineCode is one inline code span.
var inlineCode = regexp.MustCompile("`[^`]*`")

// maxReadmeLines bounds the README: a newcomer reads it to a first approval on `make run`;
// the rest of the manual is in docs/.
const maxReadmeLines = 250

// TestReadmeStaysShort fails when the README grows past maxReadmeLines.
func TestReadmeStaysShort(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move detail to a docs/ page and link it", n, maxReadmeLines)
	}
}
