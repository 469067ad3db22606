package apply

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with an apply file: Path locates it in the file
// (`configurations[0].provider.kind`, `tools[1].http.headers.Authorization`; "" for the file as
// a whole), Message says what is wrong, Line is the 1-based line it was found on (0 when not
// known). A Problem never quotes a header value or an environment variable's value.
type Problem struct {
	Path    string
	Message string
	Line    int
}

// String renders the problem as `PATH: MESSAGE (line N)`, leaving out the parts that are empty.
func (p Problem) String() string {
	s := p.Message
	if p.Path != "" {
		s = p.Path + ": " + s
	}
	if p.Line > 0 {
		s += fmt.Sprintf(" (line %d)", p.Line)
	}
	return s
}

// Problems is every problem found in one file (at most 500; a last entry counts the rest). As
// an error it lists them all, one per line.
type Problems []Problem

// Error returns a count line followed by every problem on a line of its own.
func (ps Problems) Error() string {
	var b strings.Builder
	if len(ps) == 1 {
		b.WriteString("1 problem; nothing was applied:")
	} else {
		fmt.Fprintf(&b, "%d problems; nothing was applied:", len(ps))
	}
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// sorted returns the problems in the order of the lines they were found on (problems without
// a line first), keeping the order of discovery among equals.
func (ps Problems) sorted() Problems {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return out
}

// maxProblems bounds how many problems one file reports; the rest are counted.
const maxProblems = 500

// collector gathers problems, tagging each with the line of its path when known.
type collector struct {
	problems Problems
	lines    map[string]int
	paths    map[string]bool
	dropped  int
}

func newCollector() *collector { return &collector{lines: map[string]int{}, paths: map[string]bool{}} }

// put records p, or counts it once maxProblems are recorded.
func (c *collector) put(p Problem) {
	c.paths[p.Path] = true
	if len(c.problems) >= maxProblems {
		c.dropped++
		return
	}
	c.problems = append(c.problems, p)
}

// failed reports whether any problem was found.
func (c *collector) failed() bool { return len(c.problems) > 0 }

// result returns the problems sorted by line, with a last line counting those not shown.
func (c *collector) result() Problems {
	out := c.problems.sorted()
	if c.dropped > 0 {
		out = append(out, Problem{Message: fmt.Sprintf("%d more problems not shown", c.dropped)})
	}
	return out
}

// add records a problem at path, unless a problem was already recorded there or at an
// enclosing path (a value that could not be decoded is not validated again).
func (c *collector) add(path, format string, args ...any) {
	if c.covered(path) {
		return
	}
	c.put(Problem{Path: path, Message: fmt.Sprintf(format, args...), Line: c.lineOf(path)})
}

// covered reports whether a problem is recorded at path or at a non-empty ancestor of it.
func (c *collector) covered(path string) bool {
	for p := path; p != ""; p = parentPath(p) {
		if c.paths[p] {
			return true
		}
	}
	return false
}

// anyWithin reports whether a problem is recorded at path or below it.
func (c *collector) anyWithin(path string) bool {
	for p := range c.paths {
		if p == path || strings.HasPrefix(p, path) && (p[len(path)] == '.' || p[len(path)] == '[') {
			return true
		}
	}
	return false
}

// lineOf returns the line of path, or of its nearest ancestor that has one.
func (c *collector) lineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := c.lines[p]; ok {
			return l
		}
	}
	return 0
}

// parentPath drops the last `.key` or `[i]` of path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// joinKey appends a mapping key to path.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// joinIndex appends a list index to path.
func joinIndex(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
