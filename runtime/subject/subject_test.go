package subject

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestRender(t *testing.T) {
	args := `{"order_id":"A-1001","amount":25.50,"ok":true,"none":null,"customer":{"name":"Ada","tags":["vip","eu"]},"note":"two\nlines\there"}`
	for _, tc := range []struct{ template, want string }{
		{"Refund {{order_id}} for {{amount}} EUR", "Refund A-1001 for 25.50 EUR"},
		{"{{ customer.name }} ({{customer.tags.1}})", "Ada (eu)"},
		{"{{ok}} {{none}}", "true null"},
		{"missing: [{{nope}}] [{{customer.nope}}] [{{customer.tags.9}}] [{{order_id.x}}]", "missing: [] [] [] []"},
		{"{{customer.tags}}", `["vip","eu"]`},
		{"{{customer}}", `{"name":"Ada","tags":["vip","eu"]}`},
		{"{{note}}", "two lines here"},
		{"  spaced\r\n out  ", "spaced out"},
		{"<b>{{order_id}}</b>", "<b>A-1001</b>"},
		{"no placeholders", "no placeholders"},
	} {
		tmpl, err := Parse(tc.template)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.template, err)
		}
		if got := tmpl.Render(args); got != tc.want {
			t.Errorf("Render(%q) = %q, want %q", tc.template, got, tc.want)
		}
	}
	tmpl, _ := Parse("Refund {{order_id}}")
	for _, bad := range []string{"", "not json", "[1,2]", `"text"`} {
		if got := tmpl.Render(bad); got != "Refund" {
			t.Errorf("Render over %q = %q, want the literal text only", bad, got)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, bad := range []string{"{{order_id", "{{}}", "{{ }}", "{{a..b}}", "{{a b}}", "{{a.}}", "{{<script>}}",
		strings.Repeat("x", MaxTemplateRunes+1), "\xff"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%.40q) accepted", bad)
		}
	}
	if _, err := Parse(strings.Repeat("é", MaxTemplateRunes)); err != nil {
		t.Errorf("a template of %d characters: %v", MaxTemplateRunes, err)
	}
}

func TestArguments(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`{"order_id":"A-1001","amount":25}`, "order_id=A-1001, amount=25"},
		{`{"b":1,"a":{"x":[1,2]},"c":false}`, `b=1, a={"x":[1,2]}, c=false`},
		{`{}`, ""},
		{`not json`, ""},
		{`[1]`, ""},
		{`{"body":"Hello Ada,\nwe refunded"}`, "body=Hello Ada, we refunded"},
	} {
		if got := Arguments(tc.args); got != tc.want {
			t.Errorf("Arguments(%s) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestLineCutsAt120(t *testing.T) {
	exact := strings.Repeat("a", MaxRunes)
	if got := Line(exact); got != exact {
		t.Errorf("%d characters were changed: %q", MaxRunes, got)
	}
	long := strings.Repeat("ü", MaxRunes+30)
	if got := Line(long); got != strings.Repeat("ü", MaxRunes)+"…" {
		t.Errorf("cut = %q", got)
	}
	if got := Line("a\u202eb\u2028c"); got != "ab c" {
		t.Errorf("controls: %q", got)
	}
	tmpl, _ := Parse("Refund {{order_id}}")
	got := tmpl.Render(`{"order_id":"` + strings.Repeat("x", 500) + `"}`)
	if utf8.RuneCountInString(got) != MaxRunes+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long value renders %d characters: %q", utf8.RuneCountInString(got), got)
	}
}

// checkLine fails t unless s is a subject: valid UTF-8, one line without controls, at most
// MaxRunes characters and a "…".
func checkLine(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s: not UTF-8: %q", what, s)
	}
	if n := utf8.RuneCountInString(s); n > MaxRunes+1 || n == MaxRunes+1 && !strings.HasSuffix(s, "…") {
		t.Fatalf("%s: %d characters: %q", what, n, s)
	}
	if strings.TrimSpace(s) != s {
		t.Fatalf("%s: not trimmed: %q", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r != ' ' && unicode.IsSpace(r) || unicode.Is(unicode.Bidi_Control, r) {
			t.Fatalf("%s: holds %U: %q", what, r, s)
		}
	}
}

// FuzzSubjectTemplate: whatever the template and the arguments, parsing never panics, and
// what a parsed template renders, like the default subject of the arguments, is a subject.
func FuzzSubjectTemplate(f *testing.F) {
	f.Add("Refund {{order_id}} for {{amount}} EUR", `{"order_id":"A-1001","amount":25}`)
	f.Add("{{a.b.0}}{{", `{"a":{"b":["x\ny"]}}`)
	f.Add("{{ x }}}}{{y}}", `{"x":null,"y":1e400}`)
	f.Add(strings.Repeat("{{k}}", 40), `{"k":"`+strings.Repeat("é", 50)+`"}`)
	f.Add("\u202e{{k}}", `{"k":"\u0000\u2029"}`)
	f.Fuzz(func(t *testing.T, template, args string) {
		checkLine(t, "Arguments", Arguments(args))
		tmpl, err := Parse(template)
		if err != nil {
			return
		}
		checkLine(t, "Render", tmpl.Render(args))
	})
}
