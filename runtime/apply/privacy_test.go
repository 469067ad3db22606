package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// TestPrivacyKeys: `privacy:` defaults to metadata (none is its alias), redacted and full are
// applied, `support_sees:` defaults to redacted; a change plans an update naming the key, and
// a value outside the modes is a problem at its path.
func TestPrivacyKeys(t *testing.T) {
	base := "configurations:\n" + okConfiguration
	cat, a := appliedFile(t, base)
	if c := cat.configs[0]; c.Privacy != runtime.PrivacyMetadata || c.SupportSees != runtime.PrivacyRedacted {
		t.Fatalf("defaults: privacy %q, support_sees %q; want metadata, redacted", c.Privacy, c.SupportSees)
	}
	for _, c := range []struct {
		keys    string
		privacy runtime.Privacy
		support runtime.Privacy
		changed string
	}{
		{"    privacy: none\n", runtime.PrivacyMetadata, runtime.PrivacyRedacted, ""},
		{"    privacy: metadata\n", runtime.PrivacyMetadata, runtime.PrivacyRedacted, ""},
		{"    privacy: redacted\n", runtime.PrivacyRedacted, runtime.PrivacyRedacted, "privacy"},
		{"    privacy: full\n    support_sees: full\n", runtime.PrivacyFull, runtime.PrivacyFull, "privacy,support_sees"},
		{"    support_sees: redacted\n", runtime.PrivacyMetadata, runtime.PrivacyRedacted, ""},
	} {
		p, err := a.Plan(context.Background(), []byte(base+c.keys))
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		got := strings.Join(p.Changes[0].Fields, ",")
		if c.changed == "" && p.Changes[0].Action == apply.Update || c.changed != "" && got != c.changed {
			t.Errorf("%q: plan %s %q, want fields %q", c.keys, p.Changes[0].Action, got, c.changed)
		}
		applied, _ := appliedFile(t, base+c.keys)
		if cfg := applied.configs[0]; cfg.Privacy != c.privacy || cfg.SupportSees != c.support {
			t.Errorf("%q: applied privacy %q, support_sees %q; want %q, %q", c.keys, cfg.Privacy, cfg.SupportSees, c.privacy, c.support)
		}
	}
	_, err := a.Plan(context.Background(), []byte(base+"    privacy: secret\n    support_sees: metadata\n"))
	var ps apply.Problems
	if !errors.As(err, &ps) || len(ps) != 2 ||
		!strings.HasPrefix(ps[0].String(), `configurations[0].privacy: must be metadata, none, redacted or full, got "secret"`) ||
		!strings.HasPrefix(ps[1].String(), `configurations[0].support_sees: must be redacted or full, got "metadata"`) {
		t.Fatalf("bad values: %v; want one problem at each key", err)
	}
}
