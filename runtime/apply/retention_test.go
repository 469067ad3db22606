package apply_test

import (
	"context"
	"testing"
	"time"

	"runsdesk/runtime/apply"
	"runsdesk/runtime/retention"
	"runsdesk/runtime/tool"
)

// TestRetentionApplies: `retention:` in days reaches the catalog, absent keys keep their
// defaults, a change is named as the field retention, and the same file again changes nothing.
func TestRetentionApplies(t *testing.T) {
	file := "configurations:\n" + okConfiguration + "    retention: {outputs: 90d, runs: 365d}\n"
	cat := &fakeCatalog{}
	a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	p, err := a.Plan(context.Background(), []byte(file))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(context.Background(), p); err != nil {
		t.Fatalf("apply: %v", err)
	}
	want := retention.Policy{Outputs: 90 * retention.Day, Runs: 365 * retention.Day}
	if got := cat.configs[0].Retention; got != want || got.Of(retention.Transcripts) != 30*retention.Day {
		t.Fatalf("retention = %+v, want %+v (transcripts at their default, 30 days)", got, want)
	}
	changed, err := a.Plan(context.Background(), []byte("configurations:\n"+okConfiguration+"    retention: {outputs: 1d12h}\n"))
	if err != nil {
		t.Fatalf("plan change: %v", err)
	}
	if c := changed.Changes[0]; c.Action != apply.Update || len(c.Fields) != 1 || c.Fields[0] != "retention" {
		t.Errorf("change = %+v, want an update of retention", c)
	}
	again, err := a.Plan(context.Background(), []byte(file))
	if err != nil {
		t.Fatalf("plan again: %v", err)
	}
	if c := again.Changes[0]; c.Action != apply.Unchanged {
		t.Errorf("second plan: %+v", again.Changes)
	}
}

func TestRetentionRules(t *testing.T) {
	cfg := func(r string) string { return "configurations:\n" + okConfiguration + "    retention: " + r + "\n" }
	for _, c := range []struct{ name, file, want string }{
		{"too short", cfg("{outputs: 30m}"), "configurations[0].retention.outputs: must be between 1h and 36500d"},
		{"too long", cfg("{runs: 36501d}"), "configurations[0].retention.runs: must be between 1h and 36500d"},
		{"not a duration", cfg("{transcripts: 30 days}"), "configurations[0].retention.transcripts: must be a duration with a unit"},
		{"fractional days", cfg("{transcripts: 1.5d}"), "configurations[0].retention.transcripts: must be a duration with a unit"},
		{"unknown key", cfg("{events: 30d}"), "configurations[0].retention.events: unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{}
			wantOneProblem(t, cat, apply.New(apply.Config{Catalog: cat, Builtin: []tool.Tool{builtin{}}, Getenv: fullEnv}), c.file, c.want)
		})
	}
}

// TestDaysInEveryDuration: a wait policy takes days too, as every duration of the file does.
func TestDaysInEveryDuration(t *testing.T) {
	file := "configurations:\n" + okConfiguration + "    wait: {expires_after: 2d, on_expiry: deny, remind_after: 1d6h}\n"
	cat := &fakeCatalog{}
	a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	p, err := a.Plan(context.Background(), []byte(file))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(context.Background(), p); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if w := cat.configs[0].Wait; w.ExpiresAfter != 48*time.Hour || w.RemindAfter != 30*time.Hour {
		t.Errorf("wait = %+v, want expires_after 48h, remind_after 30h", w)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30d": 30 * 24 * time.Hour, "1d12h": 36 * time.Hour, "0d": 0, "-2d": -48 * time.Hour, "+1d1s": 24*time.Hour + time.Second,
		"90s": 90 * time.Second, "1h30m": 90 * time.Minute, "-5m": -5 * time.Minute,
	} {
		got, err := apply.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"d", "1.5d", "1d-1h", "1dd", "d1h", "106752d", "106751d24h", "30 d", "1d1", "", "-"} {
		if got, err := apply.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, got)
		}
	}
}

// FuzzParseDuration: never panics; without a d it is time.ParseDuration; with whole days
// before a Go duration it is their sum.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "-2d", "90s", "1h30m", "d", "1.5d", "106751d", "9223372036854775807d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := apply.ParseDuration(s)
		if !containsD(s) {
			want, werr := time.ParseDuration(s)
			if (err == nil) != (werr == nil) || got != want {
				t.Fatalf("ParseDuration(%q) = %v, %v; time.ParseDuration = %v, %v", s, got, err, want, werr)
			}
			return
		}
		if err != nil {
			return
		}
		again, err := apply.ParseDuration(got.String())
		if err != nil || again != got {
			t.Fatalf("ParseDuration(%q) = %v, which does not read back (%v, %v)", s, got, again, err)
		}
	})
}

func containsD(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 'd' {
			return true
		}
	}
	return false
}
