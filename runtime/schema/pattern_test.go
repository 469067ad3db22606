package schema

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

var patternCases = []struct {
	src  string
	want string
}{
	{`^[A-Z]{3}$`, `[A-Z]{3}`},
	{`^(?:ab|cd)$`, `(?:ab|cd)`},
	{`^\d{4}-\d{2}-\d{2}$`, `\d{4}-\d{2}-\d{2}`},
	{`^[a-z0-9._%+\-]+@[a-z0-9.\-]+\.[a-z]{2,}$`, `[a-z0-9._%+\-]+@[a-z0-9.\-]+\.[a-z]{2,}`},
	{`^a+?b*?c??$`, `a+?b*?c??`},
	{`^\x41\/\.\$$`, `\x41\/\.\$`},
	{`[0-9]{3}`, `.*(?:[0-9]{3}).*`},
	{`^a|b$`, `.*(?:^a|b$).*`},
	{`^abc`, `.*(?:^abc).*`},
	{`abc$`, `.*(?:abc$).*`},
	{`^a\$`, `.*(?:^a\$).*`},
	{`^(a)(b)$`, `(a)(b)`},
	{`\bword\b`, `.*(?:\bword\b).*`},
	{`^[^\s]+$`, `[^\s]+`},
	{`^[\w\-]+$`, `[\w\-]+`},
	{`^[äöü]+$`, `[äöü]+`},
	{`^a{2,}b{1,3}$`, `a{2,}b{1,3}`},
	// Not readable the same way by a browser: dropped.
	{`(?i)abc`, ``},
	{`(?P<y>\d+)`, ``},
	{`(?<y>\d+)`, ``},
	{`\pL+`, ``},
	{`\p{L}+`, ``},
	{`\Qa.b\E`, ``},
	{`abc\z`, ``},
	{`\Aabc`, ``},
	{`[[:alpha:]]+`, ``},
	{`\x{41}`, ``},
	{`\101`, ``},
	{`a{,3}`, ``},
	{`a{`, ``},
	{`a}`, ``},
	{`a]`, ``},
	{`[a-]`, ``},
	{`[-a]`, ``},
	{`[]a]`, ``},
	{`[a|b]`, ``},
	{`[(]`, ``},
	{`[a&&b]`, ``},
	{`[a-c-e]`, ``},
	{`[!!]`, ``},
	{`[\d-z]`, ``},
	{`\b+`, ``},
	{`\-`, ``},
	{`\a`, ``},
	{"a\tb", ``},
	{``, ``},
	{`^$`, ``},
}

func TestHTMLPattern(t *testing.T) {
	for _, tt := range patternCases {
		if _, err := regexp.Compile(tt.src); err != nil {
			t.Fatalf("case %q is not a Go regexp: %v", tt.src, err)
		}
		if got := htmlPattern(tt.src); got != tt.want {
			t.Errorf("htmlPattern(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

var patternSamples = []string{"", "a", "b", "ab", "abc", "ABC", "AB", "xabcx", "2024-01-02", "1234", "12",
	"a@b.cd", "word", "sword", "a$", "A/.$", "aab", "aaabbb", "äöü", "äx", "w-x", "w x", "cd", "ab cd"}

// TestHTMLPatternSameLanguage checks, with Go's engine, that the HTML form (anchored to the
// whole value) accepts exactly what the schema pattern (a search) accepts.
func TestHTMLPatternSameLanguage(t *testing.T) {
	for _, tt := range patternCases {
		if tt.want == "" {
			continue
		}
		orig := regexp.MustCompile(tt.src)
		html := regexp.MustCompile("^(?:" + tt.want + ")$")
		for _, s := range patternSamples {
			if orig.MatchString(s) != html.MatchString(s) {
				t.Errorf("%q vs HTML %q disagree on %q", tt.src, tt.want, s)
			}
		}
	}
}

// TestHTMLPatternInBrowserEngine compiles every produced pattern the way a browser does
// (new RegExp("^(?:" + p + ")$", "v")) and compares matches with Go's. It needs node ≥ 20.
func TestHTMLPatternInBrowserEngine(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	type probe struct {
		Pattern string   `json:"pattern"`
		Samples []string `json:"samples"`
	}
	var probes []probe
	for _, tt := range patternCases {
		if tt.want != "" {
			probes = append(probes, probe{tt.want, patternSamples})
		}
	}
	in, _ := json.Marshal(probes)
	script := `const ps = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = ps.map(p => { try { const r = new RegExp("^(?:" + p.pattern + ")$", "v"); return p.samples.map(s => r.test(s)); } catch (e) { return null; } });
process.stdout.write(JSON.stringify(out));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	outBytes, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var results [][]bool
	if err := json.Unmarshal(outBytes, &results); err != nil {
		t.Fatalf("node output %q: %v", outBytes, err)
	}
	for i, p := range probes {
		if results[i] == nil {
			t.Errorf("browser engine rejects %q", p.Pattern)
			continue
		}
		re := regexp.MustCompile("^(?:" + p.Pattern + ")$")
		for j, s := range p.Samples {
			if re.MatchString(s) != results[i][j] {
				t.Errorf("pattern %q on %q: Go %v, browser %v", p.Pattern, s, re.MatchString(s), results[i][j])
			}
		}
	}
}

func FuzzHTMLPattern(f *testing.F) {
	for _, tt := range patternCases {
		f.Add(tt.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if _, err := regexp.Compile(src); err != nil {
			return
		}
		out := htmlPattern(src)
		if out == "" {
			return
		}
		if _, err := regexp.Compile("^(?:" + out + ")$"); err != nil {
			t.Errorf("htmlPattern(%q) = %q, which Go cannot compile: %v", src, out, err)
		}
	})
}
