package apply_test

import (
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool"
)

// TestFormatDurationParsesBack: every duration Export writes reads back as the same value,
// in the shortest units.
func TestFormatDurationParsesBack(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * 24 * time.Hour: "30d", 36 * time.Hour: "1d12h", 90 * time.Second: "1m30s", 500 * time.Millisecond: "500ms",
		4 * time.Hour: "4h", time.Hour + time.Millisecond: "1h1ms",
	} {
		got := apply.FormatDuration(d)
		back, err := apply.ParseDuration(got)
		if got != want || err != nil || back != d {
			t.Errorf("FormatDuration(%v) = %q (parses back as %v, %v), want %q", d, got, back, err, want)
		}
	}
}

// TestExportKeepsJSONAsWritten: schemas come back with their keys in order and their values of
// the same type: a string that reads like a number, a date or a boolean stays a string.
func TestExportKeepsJSONAsWritten(t *testing.T) {
	params := `{"type":"object","properties":{"zip":{"type":"string","default":"01234"},"on":{"default":"2024-05-01"},"yes":{"const":"true"},"n":{"minimum":1.5,"maximum":10},"a":{"enum":[null,false]}}}`
	desk := runtime.AppliedDesk{Tools: []tool.Definition{{Name: "t", Description: "d", Parameters: []byte(params),
		HTTP: tool.HTTPConfig{URL: "http://127.0.0.1:9000/t", Headers: map[string]string{"X-Key": "${KEY}"}}}}}
	out, err := apply.Export(desk)
	if err != nil {
		t.Fatal(err)
	}
	f, err := apply.Load(out)
	if err != nil {
		t.Fatalf("Load of the export: %v\n%s", err, out)
	}
	if got := string(f.Tools[0].Parameters); got != params {
		t.Errorf("parameters came back as\n%s\nwant\n%s\nfrom\n%s", got, params, out)
	}
	if !strings.Contains(string(out), "X-Key: ${KEY}") || !strings.HasPrefix(string(out), "# ") {
		t.Errorf("export:\n%s", out)
	}
}

// TestExportReplansUnchanged: valid.yaml applied, exported and planned again changes nothing.
func TestExportReplansUnchanged(t *testing.T) {
	cat := &fakeCatalog{}
	a := newApplier(cat, env(map[string]string{"OPENAI_API_KEY": "k", "REFUND_TOKEN": "r"}))
	plan, err := a.Plan(t.Context(), readFile(t, "valid.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	out, err := apply.Export(runtime.AppliedDesk{Configurations: cat.configs, Tools: cat.tools})
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.Plan(t.Context(), out)
	if err != nil {
		t.Fatalf("plan of the export: %v\n%s", err, out)
	}
	for _, ch := range again.Changes {
		if ch.Action != apply.Unchanged {
			t.Errorf("%s %s: %s %v\n%s", ch.Kind, ch.Name, ch.Action, ch.Fields, out)
		}
	}
}
