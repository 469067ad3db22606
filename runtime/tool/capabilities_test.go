package tool_test

import (
	"testing"

	"runsdesk/runtime/tool"
)

func TestEffectOf(t *testing.T) {
	cases := []struct {
		name string
		t    tool.Tool
		want tool.Effect
	}{
		{"undeclared", newPlain("a"), tool.EffectReadOnly},
		{"declared empty", effectful{newPlain("a"), ""}, tool.EffectReadOnly},
		{"read_only", effectful{newPlain("a"), tool.EffectReadOnly}, tool.EffectReadOnly},
		{"idempotent_write", effectful{newPlain("a"), tool.EffectIdempotentWrite}, tool.EffectIdempotentWrite},
		{"non_idempotent_write", effectful{newPlain("a"), tool.EffectNonIdempotentWrite}, tool.EffectNonIdempotentWrite},
		{"unknown value is the cautious write", effectful{newPlain("a"), "delete_everything"}, tool.EffectNonIdempotentWrite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tool.EffectOf(c.t); got != c.want {
				t.Errorf("EffectOf = %q, want %q", got, c.want)
			}
		})
	}
}

func TestNeedsApproval(t *testing.T) {
	cases := []struct {
		name string
		t    tool.Tool
		want bool
	}{
		{"plain", newPlain("a"), false},
		{"marker true", marker{newPlain("a"), true}, true},
		{"marker false", marker{newPlain("a"), false}, false},
		{"read_only", effectful{newPlain("a"), tool.EffectReadOnly}, false},
		{"idempotent write implies approval", effectful{newPlain("a"), tool.EffectIdempotentWrite}, true},
		{"non-idempotent write implies approval", effectful{newPlain("a"), tool.EffectNonIdempotentWrite}, true},
		{"unknown effect implies approval", effectful{newPlain("a"), "bogus"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tool.NeedsApproval(c.t); got != c.want {
				t.Errorf("NeedsApproval = %v, want %v", got, c.want)
			}
		})
	}
}

func TestInputSchemaOf(t *testing.T) {
	if s, ok := tool.InputSchemaOf(newPlain("a")); ok || s != nil {
		t.Errorf("plain tool: got %s, %v; want nil, false", s, ok)
	}
	s, ok := tool.InputSchemaOf(inputter{newPlain("a"), usableInput})
	if !ok || string(s) != usableInput {
		t.Errorf("input tool: got %s, %v; want the schema, true", s, ok)
	}
}

func TestIsAdminOnly(t *testing.T) {
	if tool.IsAdminOnly(newPlain("a")) {
		t.Error("plain tool reported admin-only")
	}
	if tool.IsAdminOnly(admin{newPlain("a"), false}) {
		t.Error("AdminOnly()=false reported admin-only")
	}
	if !tool.IsAdminOnly(admin{newPlain("a"), true}) {
		t.Error("AdminOnly()=true not reported admin-only")
	}
}

func TestEffectValid(t *testing.T) {
	for _, e := range []tool.Effect{"", tool.EffectReadOnly, tool.EffectIdempotentWrite, tool.EffectNonIdempotentWrite} {
		if !e.Valid() {
			t.Errorf("%q reported invalid", e)
		}
	}
	for _, e := range []tool.Effect{"write", "READ_ONLY", " read_only"} {
		if e.Valid() {
			t.Errorf("%q reported valid", e)
		}
	}
}
