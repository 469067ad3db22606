package demo_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/demo"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

func TestToolsRegister(t *testing.T) {
	reg, err := tool.New(demo.Tools()...)
	if err != nil {
		t.Fatalf("tool.New: %v", err)
	}
	want := []string{"ask_refund_amount", "issue_refund", "lookup_order", "send_customer_email", "tag_ticket"}
	if got := reg.Names(); !slices.Equal(got, want) {
		t.Errorf("names = %q, want %q", got, want)
	}
	cases := []struct {
		name          string
		effect        tool.Effect
		needsApproval bool
		input         bool
		adminOnly     bool
		preview       bool
		editable      bool
	}{
		{"lookup_order", tool.EffectReadOnly, false, false, false, false, false},
		{"ask_refund_amount", tool.EffectReadOnly, false, true, false, false, false},
		{"issue_refund", tool.EffectNonIdempotentWrite, true, false, true, true, true},
		{"send_customer_email", tool.EffectReadOnly, true, false, false, true, false},
		{"tag_ticket", tool.EffectIdempotentWrite, true, false, false, true, false},
	}
	for _, c := range cases {
		tl, _ := reg.Get(c.name)
		_, input := tool.InputSchemaOf(tl)
		_, preview := tl.(tool.Previewer)
		got := []bool{tool.NeedsApproval(tl), input, tool.IsAdminOnly(tl), preview, tool.IsEditable(tl)}
		if tool.EffectOf(tl) != c.effect || !slices.Equal(got, []bool{c.needsApproval, c.input, c.adminOnly, c.preview, c.editable}) {
			t.Errorf("%s: effect %s, approval/input/admin/preview/editable %v", c.name, tool.EffectOf(tl), got)
		}
	}
}

func TestRefundFormUsesEveryWidget(t *testing.T) {
	var ask tool.Tool
	for _, tl := range demo.Tools() {
		if tl.Name() == "ask_refund_amount" {
			ask = tl
		}
	}
	raw, _ := tool.InputSchemaOf(ask)
	s, err := schema.Compile(raw)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	kinds := map[schema.Kind]bool{}
	var walk func([]schema.Field)
	walk = func(fs []schema.Field) {
		for _, f := range fs {
			kinds[f.Kind] = true
			walk(f.Children)
		}
	}
	fields := s.Fields()
	walk(fields)
	for _, k := range []schema.Kind{schema.KindString, schema.KindTextarea, schema.KindNumber, schema.KindInteger,
		schema.KindBoolean, schema.KindEnum, schema.KindDate, schema.KindDateTime, schema.KindTime, schema.KindEmail,
		schema.KindURI, schema.KindObject, schema.KindArray, schema.KindMultiEnum, schema.KindRows, schema.KindJSON} {
		if !kinds[k] {
			t.Errorf("no %s field", k)
		}
	}
	for _, f := range fields {
		if f.Kind == schema.KindEnum && slices.Equal(f.OptionLabels, f.Options) {
			t.Errorf("%s shows its raw values %q: give them titles", f.Name, f.Options)
		}
	}
	var required, described, defaulted int
	for _, f := range fields {
		if f.Required {
			required++
		}
		if f.Description != "" {
			described++
		}
		if f.Default != "" || len(f.DefaultList) > 0 {
			defaulted++
		}
	}
	if required == 0 || described == 0 || defaulted == 0 {
		t.Errorf("required %d, described %d, defaulted %d", required, described, defaulted)
	}
}

func TestDeskFileApplies(t *testing.T) {
	a := apply.New(apply.Config{Catalog: emptyCatalog{}, Builtin: demo.Tools(), Getenv: func(string) string { return "" }})
	p, err := a.Plan(context.Background(), demo.Config())
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	var got []string
	for _, c := range p.Changes {
		got = append(got, c.Kind+" "+c.Name+" "+string(c.Action))
	}
	want := []string{"configuration refunds create", "configuration customer-care create"}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	for _, r := range demo.Runs() {
		if r.Configuration != "refunds" && r.Configuration != "customer-care" {
			t.Errorf("run of unknown configuration %q", r.Configuration)
		}
	}
}

func TestToolsBehave(t *testing.T) {
	tools := map[string]tool.Tool{}
	for _, tl := range demo.Tools() {
		tools[tl.Name()] = tl
	}
	ctx := context.Background()
	run := func(name, args string) tool.Result {
		t.Helper()
		res, err := tools[name].Execute(ctx, tool.Call{RunUUID: "u", CallID: "c", Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	cases := []struct {
		tool, args, want string
		isError          bool
	}{
		{"lookup_order", `{"order_id":"A-1001"}`, `"customer":"Ada Lovelace"`, false},
		{"lookup_order", `{"order_id":"Z-1"}`, `there is no order "Z-1"`, true},
		{"lookup_order", `[1]`, "not the JSON object", true},
		{"ask_refund_amount", `{"order_id":"A-1001","amount":25,"refund_method":"store_credit"}`, "refund 25.00 EUR for order A-1001 by store_credit", false},
		{"issue_refund", `{"order_id":"A-1001","amount":25}`, "Refund R-0001 of 25.00 EUR issued for order A-1001.", false},
		{"issue_refund", `{"order_id":"A-1001","amount":25}`, "Refund R-0002 of 25.00 EUR", false},
		{"issue_refund", `{"order_id":"A-1001","amount":1000}`, "at most the order total of 79.90 EUR", true},
		{"send_customer_email", `{"order_id":"A-1003","subject":"Hi","body":"Late."}`, "Email M-0001 sent to the customer of order A-1003.", false},
		{"send_customer_email", `{"order_id":"A-1003","subject":"","body":"x"}`, "must not be empty", true},
		{"tag_ticket", `{"ticket":"T-5001","tag":"refunded"}`, `Ticket T-5001 tagged "refunded".`, false},
		{"tag_ticket", `{"ticket":"T-5001","tag":"refunded"}`, "already has the tag", false},
		{"tag_ticket", `{"ticket":"5001","tag":"x"}`, "must look like T-5001", true},
	}
	for _, c := range cases {
		res := run(c.tool, c.args)
		if res.IsError != c.isError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s %s = %+v, want error=%v containing %q", c.tool, c.args, res, c.isError, c.want)
		}
	}
}

func TestPreviews(t *testing.T) {
	ctx := context.Background()
	for _, tl := range demo.Tools() {
		p, ok := tl.(tool.Previewer)
		if !ok {
			continue
		}
		args := map[string]string{
			"issue_refund":        `{"order_id":"A-1001","amount":25}`,
			"send_customer_email": `{"order_id":"A-1001","subject":"S","body":"one\ntwo"}`,
			"tag_ticket":          `{"ticket":"T-5001","tag":"refunded"}`,
		}[tl.Name()]
		lines, err := p.Preview(ctx, tool.Call{Name: tl.Name(), Arguments: json.RawMessage(args)})
		if err != nil || len(lines) == 0 {
			t.Errorf("%s preview = %q, %v", tl.Name(), lines, err)
		}
		if _, err := p.Preview(ctx, tool.Call{Name: tl.Name(), Arguments: json.RawMessage(`"x"`)}); err == nil {
			t.Errorf("%s preview of bad arguments did not fail", tl.Name())
		}
	}
}

// emptyCatalog is a store without tools or configurations that refuses writes.
type emptyCatalog struct{}

func (emptyCatalog) Configurations(context.Context) ([]runtime.Configuration, error) { return nil, nil }
func (emptyCatalog) ToolDefinitions(context.Context) ([]tool.Definition, error)      { return nil, nil }
func (emptyCatalog) UpsertCatalog(context.Context, []tool.Definition, []runtime.Configuration) ([]bool, error) {
	panic("write")
}

// TestEditFormsShowEnumTitles: the parameters of every demo tool, which its "Edit and approve"
// form shows, give each choice a title, so the form never shows raw values.
func TestEditFormsShowEnumTitles(t *testing.T) {
	for _, tl := range demo.Tools() {
		s, err := schema.Compile(tl.Parameters())
		if err != nil {
			t.Fatalf("%s: Compile: %v", tl.Name(), err)
		}
		for _, f := range s.Fields() {
			if f.Kind == schema.KindEnum && slices.Equal(f.OptionLabels, f.Options) {
				t.Errorf("%s: %s shows its raw values %q: give them titles", tl.Name(), f.Name, f.Options)
			}
		}
	}
}
