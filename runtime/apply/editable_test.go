package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime/apply"
)

const editableTool = `tools:
  - name: refund
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
    http: {url: "http://127.0.0.1:9000/refund"}
`

// TestEditableKey: editable defaults to false, is stored when true, changing it is an update,
// and it is refused on a tool that never pauses for approval or has no properties to edit.
func TestEditableKey(t *testing.T) {
	ctx := context.Background()
	cat := &fakeCatalog{}
	a := newApplier(cat, fullEnv)
	applyFile(t, a, []byte(editableTool))
	if d := cat.tools[0]; d.Editable {
		t.Fatalf("editable defaulted to true")
	}
	p, err := a.Plan(ctx, []byte(editableTool+"    editable: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Changes[0].Action; got != apply.Update {
		t.Errorf("turning editable on: action %q, want update", got)
	}
	applyFile(t, a, []byte(editableTool+"    editable: true\n"))
	if d := cat.tools[0]; !d.Editable {
		t.Errorf("editable: true was not stored")
	}

	for _, c := range []struct{ name, file, want string }{
		{"not a boolean", editableTool + "    editable: sometimes\n", "tools[0].editable: must be true or false"},
		{"read-only tool", "tools:\n  - name: t\n    parameters: {type: object, properties: {a: {type: string}}}\n    editable: true\n    http: {url: \"http://x/\"}\n",
			"tools[0].editable: only a tool that needs approval can be editable"},
		{"no parameters", "tools:\n  - name: t\n    requires_approval: true\n    editable: true\n    http: {url: \"http://x/\"}\n",
			"tools[0].editable: an editable tool needs parameters with properties"},
		{"no properties", "tools:\n  - name: t\n    requires_approval: true\n    parameters: {type: object}\n    editable: true\n    http: {url: \"http://x/\"}\n",
			"tools[0].editable: an editable tool needs parameters with properties"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newApplier(&fakeCatalog{}, fullEnv).Plan(ctx, []byte(c.file))
			var ps apply.Problems
			if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].String(), c.want) {
				t.Errorf("got %v, want one problem starting %q", err, c.want)
			}
		})
	}
}
