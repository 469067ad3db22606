package apply_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime/apply"
)

func TestLoadKeepsSchemasAsWritten(t *testing.T) {
	f, err := apply.Load([]byte(`tools:
  - name: t
    input_schema:
      type: object
      properties:
        zeta: {type: number, minimum: 0.01, maximum: 1e3, multipleOf: 0x10}
        alpha: {type: string, format: date, default: 2024-05-01}
        mid: {type: boolean, default: true, enum: [~, "<b>"]}
    http: {url: "http://x/", timeout: 1m30s}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(f.Tools[0].InputSchema)
	want := `{"type":"object","properties":{"zeta":{"type":"number","minimum":0.01,"maximum":1e3,"multipleOf":16},"alpha":{"type":"string","format":"date","default":"2024-05-01"},"mid":{"type":"boolean","default":true,"enum":[null,"<b>"]}}}`
	if got != want {
		t.Errorf("input schema =\n%s\nwant\n%s", got, want)
	}
	if d := time.Duration(*f.Tools[0].HTTP.Timeout); d != 90*time.Second {
		t.Errorf("timeout = %s", d)
	}
}

func TestLoadResolvesAliasesAndBoundsThem(t *testing.T) {
	f, err := apply.Load([]byte(`tools:
  - name: a
    parameters: &p {type: object, properties: {id: {type: string}}}
    http: {url: "http://x/"}
  - name: b
    parameters: *p
    http: {url: "http://x/"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Tools[0].Parameters) != string(f.Tools[1].Parameters) {
		t.Errorf("alias not resolved: %s vs %s", f.Tools[0].Parameters, f.Tools[1].Parameters)
	}

	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	bomb := "tools:\n  - name: t\n    parameters:\n" + indent(b.String(), "      ") + "    http: {url: \"http://x/\"}\n"
	_, err = apply.Load([]byte(bomb))
	var ps apply.Problems
	if !errors.As(err, &ps) || !strings.Contains(err.Error(), "expands to more than") {
		t.Errorf("alias bomb: %v", err)
	}
}

func TestLoadRefusesOversizedFiles(t *testing.T) {
	_, err := apply.Load(make([]byte, apply.MaxFileBytes+1))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load = %v", err)
	}
}

func indent(s, prefix string) string {
	var out strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			out.WriteString(prefix + l)
		}
	}
	return out.String()
}

// FuzzLoad checks that Load never panics and that every failure is reported as Problems with
// at least one problem.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "---", "~", "[]", "{}", "tools: [", "tools: {}", "tools: [~]", "tools: [{name: a, http: &x {url: *x}}]",
		"a: &a [*a]", "configurations: [{provider: {script: [{tool_calls: [{arguments: !!binary aGk=}]}]}}]",
		"tools: [{parameters: {<<: {a: 1}}}]", "tools: [{parameters: {? [a]: b}}]", "tools:\n- name: x\n  name: y\n",
		"tools: [{http: {timeout: -1h, headers: {a: {b: c}}}}]", "tools: [{parameters: [.nan, -.inf, 0o17, 1_000]}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := apply.Load(data)
		if file == nil {
			t.Fatal("Load returned no file")
		}
		if err == nil {
			return
		}
		var ps apply.Problems
		if !errors.As(err, &ps) || len(ps) == 0 {
			t.Fatalf("Load error %v is not a non-empty Problems", err)
		}
	})
}

func TestLoadBoundsTheProblemList(t *testing.T) {
	data := "tools: [" + strings.Repeat("1, ", 100_000) + "1]\n"
	_, err := apply.Load([]byte(data))
	var ps apply.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load = %v", err)
	}
	if len(ps) != 501 || ps[500].String() != "99501 more problems not shown" {
		t.Errorf("%d problems, last %q", len(ps), ps[len(ps)-1])
	}
}
