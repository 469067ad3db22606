package tool_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime/tool"
)

func TestNewRegistryAcceptsValidTools(t *testing.T) {
	reg, err := tool.New(
		newPlain("lookup_order"),
		inputter{newPlain("ask_refund_amount"), usableInput},
		effectful{newPlain("issue_refund"), tool.EffectNonIdempotentWrite},
		marker{newPlain("notify"), true},
		markerInput{inputter{newPlain("collect"), usableInput}, false},
		effectInput{inputter{newPlain("read_with_input"), usableInput}, tool.EffectReadOnly},
		plain{name: "no_params"},
		newPlain(strings.Repeat("a", 64)),
		newPlain("A-z_0-9"),
	)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	want := []string{"A-z_0-9", strings.Repeat("a", 64), "ask_refund_amount", "collect", "issue_refund", "lookup_order", "no_params", "notify", "read_with_input"}
	if got := reg.Names(); !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	got, ok := reg.Get("issue_refund")
	if !ok || got.Name() != "issue_refund" {
		t.Errorf("Get(issue_refund) = %v, %v", got, ok)
	}
	if _, ok := reg.Get("missing"); ok {
		t.Error("Get(missing) found a tool")
	}
}

func TestRegistryNamesIsACopy(t *testing.T) {
	reg, err := tool.New(newPlain("a"), newPlain("b"))
	if err != nil {
		t.Fatal(err)
	}
	reg.Names()[0] = "zzz"
	if got := reg.Names(); got[0] != "a" {
		t.Errorf("Names changed through a returned slice: %v", got)
	}
}

func TestRegistrySpecs(t *testing.T) {
	reg, err := tool.New(newPlain("lookup"), newPlain("refund"), plain{name: "ping"})
	if err != nil {
		t.Fatal(err)
	}
	specs := reg.Specs([]string{"refund", "unknown", "ping", "refund"})
	if len(specs) != 2 {
		t.Fatalf("Specs = %+v, want refund and ping", specs)
	}
	if specs[0].Name != "refund" || specs[0].Description != "does refund" || string(specs[0].Parameters) != objectParams {
		t.Errorf("specs[0] = %+v", specs[0])
	}
	if specs[1].Name != "ping" || string(specs[1].Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("a tool without parameters is offered as %+v", specs[1])
	}
	if got := reg.Specs(nil); len(got) != 0 {
		t.Errorf("Specs(nil) = %+v, want none", got)
	}
}

func TestRegistryEffectOfName(t *testing.T) {
	reg, err := tool.New(newPlain("read"), effectful{newPlain("write"), tool.EffectIdempotentWrite})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]tool.Effect{
		"read":    tool.EffectReadOnly,
		"write":   tool.EffectIdempotentWrite,
		"unknown": tool.EffectNonIdempotentWrite,
	} {
		if got := reg.EffectOfName(name); got != want {
			t.Errorf("EffectOfName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNewRegistryRefuses(t *testing.T) {
	cases := []struct {
		name  string
		tools []tool.Tool
		rule  error
		tool  string
	}{
		{"empty name", []tool.Tool{newPlain("")}, tool.ErrInvalidName, ""},
		{"space in name", []tool.Tool{newPlain("issue refund")}, tool.ErrInvalidName, "issue refund"},
		{"dot in name", []tool.Tool{newPlain("issue.refund")}, tool.ErrInvalidName, "issue.refund"},
		{"non-ASCII name", []tool.Tool{newPlain("rückerstattung")}, tool.ErrInvalidName, "rückerstattung"},
		{"65 characters", []tool.Tool{newPlain(strings.Repeat("a", 65))}, tool.ErrInvalidName, strings.Repeat("a", 65)},
		{"duplicate", []tool.Tool{newPlain("lookup"), newPlain("lookup")}, tool.ErrDuplicateName, "lookup"},
		{"nil tool", []tool.Tool{nil}, tool.ErrNilTool, ""},
		{"approval marker and input", []tool.Tool{markerInput{inputter{newPlain("ask"), usableInput}, true}}, tool.ErrApprovalAndInput, "ask"},
		{"idempotent write and input", []tool.Tool{effectInput{inputter{newPlain("ask"), usableInput}, tool.EffectIdempotentWrite}}, tool.ErrApprovalAndInput, "ask"},
		{"non-idempotent write and input", []tool.Tool{effectInput{inputter{newPlain("ask"), usableInput}, tool.EffectNonIdempotentWrite}}, tool.ErrApprovalAndInput, "ask"},
		{"empty input schema", []tool.Tool{inputter{newPlain("ask"), `{}`}}, tool.ErrUnusableInputSchema, "ask"},
		{"absent input schema", []tool.Tool{inputter{newPlain("ask"), ``}}, tool.ErrUnusableInputSchema, "ask"},
		{"input schema without type or properties", []tool.Tool{inputter{newPlain("ask"), `{"properties":{}}`}}, tool.ErrUnusableInputSchema, "ask"},
		{"input schema not JSON", []tool.Tool{inputter{newPlain("ask"), `{"type":`}}, tool.ErrUnusableInputSchema, "ask"},
		{"unknown effect", []tool.Tool{effectful{newPlain("odd"), "destructive"}}, tool.ErrUnknownEffect, "odd"},
		{"parameters not JSON", []tool.Tool{plain{"p", `{"type":`}}, tool.ErrInvalidParameters, "p"},
		{"parameters an array", []tool.Tool{plain{"p", `[]`}}, tool.ErrInvalidParameters, "p"},
		{"parameters null", []tool.Tool{plain{"p", `null`}}, tool.ErrInvalidParameters, "p"},
		{"parameters of type string", []tool.Tool{plain{"p", `{"type":"string"}`}}, tool.ErrInvalidParameters, "p"},
		{"parameters without type", []tool.Tool{plain{"p", `{"properties":{"a":{}}}`}}, tool.ErrInvalidParameters, "p"},
		{"parameters with non-object properties", []tool.Tool{plain{"p", `{"type":"object","properties":[]}`}}, tool.ErrInvalidParameters, "p"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg, err := tool.New(c.tools...)
			if err == nil {
				t.Fatalf("New accepted the tools: %v", reg.Names())
			}
			if reg != nil {
				t.Error("New returned a registry along with the error")
			}
			if !errors.Is(err, c.rule) {
				t.Fatalf("error %q does not carry rule %q", err, c.rule)
			}
			var p *tool.Problem
			if !errors.As(err, &p) || p.Tool != c.tool {
				t.Errorf("problem %+v does not name tool %q", p, c.tool)
			}
			if !strings.Contains(err.Error(), c.rule.Error()) {
				t.Errorf("error %q does not state the rule", err)
			}
		})
	}
}

func TestNewRegistryApprovalAndInputExplainsWhy(t *testing.T) {
	_, err := tool.New(effectInput{inputter{newPlain("ask"), usableInput}, tool.EffectNonIdempotentWrite})
	if err == nil || !strings.Contains(err.Error(), "non_idempotent_write implies approval") {
		t.Errorf("error %v does not say the write effect implies approval", err)
	}
	_, err = tool.New(markerInput{inputter{newPlain("ask"), usableInput}, true})
	if err == nil || !strings.Contains(err.Error(), "requires approval") {
		t.Errorf("error %v does not say the tool requires approval", err)
	}
}

func TestNewRegistryReportsEveryProblemAtOnce(t *testing.T) {
	_, err := tool.New(
		newPlain("ok"),
		newPlain("bad name"),
		newPlain("ok"),
		effectInput{inputter{newPlain("ask"), `{}`}, "weird"},
		plain{"p", `"string"`},
	)
	if err == nil {
		t.Fatal("New accepted the tools")
	}
	multi, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T does not join its problems", err)
	}
	type key struct {
		tool string
		rule error
	}
	var got []key
	for _, e := range multi.Unwrap() {
		var p *tool.Problem
		if !errors.As(e, &p) {
			t.Fatalf("%v is not a *Problem", e)
		}
		got = append(got, key{p.Tool, p.Rule})
	}
	want := []key{
		{"bad name", tool.ErrInvalidName},
		{"ok", tool.ErrDuplicateName},
		{"ask", tool.ErrUnknownEffect},
		{"ask", tool.ErrUnusableInputSchema},
		{"ask", tool.ErrApprovalAndInput},
		{"p", tool.ErrInvalidParameters},
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems = %v, want %v", got, want)
	}
}
